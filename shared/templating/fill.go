package templating

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tidegate/tidegate/shared/manifest"
)

// maxFilled bounds the bytes all substitutions together may add. A short template repeating
// a placeholder could otherwise turn one large value into gigabytes; the filled manifests
// must fit etcd's default 1.5 MiB request limit (--max-request-bytes) to be created at all,
// the same bound shared/manifest puts on a submission.
const maxFilled = 3 << 19 // 1.5 MiB

// Fill returns a copy of the manifests with every placeholder filled from params, or from
// defaults (the template's own) for a parameter params does not give. The manifests are
// what shared/manifest decoded; neither they nor the parameters are changed, and the result
// shares no map or slice with either.
//
// A placeholder with no value, and a parameter no placeholder uses, are a *ParamError naming
// all of them at once; an unused default is not an error here (Check refuses it when the
// template is saved). A value that cannot go where its placeholder is, such as an object
// inside a longer string, is a *FieldError.
func Fill(manifests []map[string]any, params, defaults map[string]any) ([]map[string]any, error) {
	used := Placeholders(manifests)
	var missing []string
	for _, name := range used {
		_, given := params[name]
		_, byDefault := defaults[name]
		if !given && !byDefault {
			missing = append(missing, name)
		}
	}
	if unknown := unused(params, used); len(missing) > 0 || len(unknown) > 0 {
		return nil, &ParamError{Missing: missing, Unknown: unknown}
	}
	values := make(map[string]any, len(defaults)+len(params))
	maps.Copy(values, defaults)
	maps.Copy(values, params)
	return fill(manifests, values)
}

// Check is what saving a template runs on its manifests and defaults: a default that no
// placeholder uses is a *ParamError (Unknown), and one that cannot go where its placeholder
// is, a *FieldError. A placeholder without a default is fine; each job gives it.
func Check(manifests []map[string]any, defaults map[string]any) error {
	if unknown := unused(defaults, Placeholders(manifests)); len(unknown) > 0 {
		return &ParamError{Unknown: unknown}
	}
	_, err := fill(manifests, defaults)
	return err
}

// unused lists, sorted, the keys of given that are not in used (which is sorted).
func unused(given map[string]any, used []string) []string {
	var out []string
	for name := range given {
		if _, found := slices.BinarySearch(used, name); !found {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// fill copies the manifests, filling each placeholder that values has; one it lacks stays as
// written (only Check, which has defaults alone, meets one).
func fill(manifests []map[string]any, values map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(manifests))
	spent := 0
	sizes := map[string]int{}
	for i, m := range manifests {
		f := filler{values: values, doc: i, spent: &spent, sizes: sizes}
		v, err := f.value(m)
		if err != nil {
			return nil, err
		}
		out[i] = v.(map[string]any)
	}
	return out, nil
}

// filler copies one manifest, keeping the path it has reached for errors.
type filler struct {
	values map[string]any
	doc    int
	path   []manifest.PathStep
	spent  *int           // bytes substituted so far, across all the manifests
	sizes  map[string]int // each value's size as JSON, measured once
}

func (f *filler) value(v any) (any, error) {
	switch v := v.(type) {
	case string:
		return f.str(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		// In key order, so that of several bad values the same one is reported every time.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			f.path = append(f.path, manifest.PathStep{Key: k})
			item, err := f.value(v[k])
			if err != nil {
				return nil, err
			}
			f.path = f.path[:len(f.path)-1]
			out[k] = item
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			f.path = append(f.path, manifest.PathStep{Index: i, IsIndex: true})
			c, err := f.value(item)
			if err != nil {
				return nil, err
			}
			f.path = f.path[:len(f.path)-1]
			out[i] = c
		}
		return out, nil
	}
	c, problem := clone(v)
	if problem != "" {
		return nil, f.fail("", problem)
	}
	return c, nil
}

// str fills s's placeholders: a whole-string placeholder takes the value itself, others its
// text. The values are written out once and never scanned again.
func (f *filler) str(s string) (any, error) {
	parts := parse(s)
	if name, ok := whole(parts); ok {
		v, has := f.values[name]
		if !has {
			return s, nil
		}
		if err := f.spend(name); err != nil {
			return nil, err
		}
		c, problem := clone(v)
		if problem != "" {
			return nil, f.fail(name, problem)
		}
		return c, nil
	}
	if parts == nil {
		return s, nil
	}
	var b strings.Builder
	for _, p := range parts {
		v, has := f.values[p.name]
		if p.name == "" || !has {
			b.WriteString(p.text)
			continue
		}
		t, problem := text(v)
		if problem != "" {
			return nil, f.fail(p.name, problem)
		}
		if err := f.spend(p.name); err != nil {
			return nil, err
		}
		b.WriteString(t)
	}
	return b.String(), nil
}

// spend charges one substitution of the named value against maxFilled.
func (f *filler) spend(name string) error {
	size, measured := f.sizes[name]
	if !measured {
		// A value that does not encode is reported by clone or text; it costs nothing here.
		out, _ := json.Marshal(f.values[name])
		size = len(out)
		f.sizes[name] = size
	}
	if *f.spent += size; *f.spent > maxFilled {
		return f.fail(name, fmt.Sprintf(tooLarge, maxFilled))
	}
	return nil
}

func (f *filler) fail(param, problem string) *FieldError {
	return &FieldError{Document: f.doc, Path: manifest.RenderPath(f.path), Param: param, Problem: problem}
}
