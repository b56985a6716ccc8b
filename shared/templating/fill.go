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

// JobName is the placeholder each job's own name fills: a template names its object
// "{{ name }}" (or "{{ name }}-worker"), and every job made from it gets its own.
const JobName = "name"

// Fill returns a copy of the manifests with every placeholder filled from params, or from
// defaults (the template's own) for a parameter params does not give, and {{ name }} from the
// job's name. The manifests are what shared/manifest decoded; neither they nor the parameters
// are changed, and the result shares no map or slice with either.
//
// A placeholder with no value, a parameter no placeholder uses, and a parameter called name
// (the job's name fills that one) are a *ParamError naming all of them at once; an unused default
// is not an error (a template may keep defaults for placeholders it no longer has, as the seed's
// example does; Check reports them when the template is saved). A value that cannot go where its
// placeholder is, such as an object inside a longer string, is a *FieldError.
func Fill(manifests []map[string]any, jobName string, params, defaults map[string]any) ([]map[string]any, error) {
	used := Placeholders(manifests)
	var missing []string
	for _, name := range used {
		_, given := params[name]
		_, byDefault := defaults[name]
		if !given && !byDefault && name != JobName {
			missing = append(missing, name)
		}
	}
	var reserved []string
	if _, ok := params[JobName]; ok {
		reserved = []string{JobName}
	}
	unknown := slices.DeleteFunc(unused(params, used), func(n string) bool { return n == JobName })
	if len(missing) > 0 || len(unknown) > 0 || len(reserved) > 0 {
		return nil, &ParamError{Missing: missing, Unknown: unknown, Reserved: reserved}
	}
	values := make(map[string]any, len(defaults)+len(params)+1)
	maps.Copy(values, defaults)
	maps.Copy(values, params)
	values[JobName] = jobName
	return fill(manifests, values)
}

// Check is what saving a template runs on its manifests and defaults. It answers the defaults no
// placeholder uses, sorted, which are kept but worth a warning. A default for name (the job's name
// fills it) is a *ParamError (Reserved), and a default that cannot go where its placeholder is, a
// *FieldError. A placeholder without a default is fine; each job gives it.
func Check(manifests []map[string]any, defaults map[string]any) (unusedDefaults []string, err error) {
	if _, ok := defaults[JobName]; ok {
		return nil, &ParamError{Reserved: []string{JobName}}
	}
	values := maps.Clone(defaults)
	if values == nil {
		values = map[string]any{}
	}
	values[JobName] = "x" // a name is a DNS label: text fits wherever {{ name }} stands
	if _, err := fill(manifests, values); err != nil {
		return nil, err
	}
	return unused(defaults, Placeholders(manifests)), nil
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
