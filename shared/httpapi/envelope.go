package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tidegate/tidegate/shared/manifest"
)

// checkEnvelope holds a request body to the exact field names of v's type, before encoding/json
// decodes it. encoding/json matches a key to a field case-insensitively and keeps the last of a
// duplicated key, so {"Namespace": …} would fill namespace and {"namespace": "a", "namespace":
// "b"} would decode as "b" while a reader of the text that takes the first sees "a". Here every
// object of the body, at any depth, must name each key once, and the objects that stand for a
// struct may name only its fields, spelt as their json tags spell them. A json.RawMessage (the
// manifests) and a type that decodes itself are left to their own decoders, which are as strict.
// The first problem found is the error; syntax errors are left for the decode that follows.
func checkEnvelope(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	w := envelopeWalk{dec: dec}
	err := w.value(reflect.TypeOf(v), nil, 0)
	if _, isAPI := err.(*Error); isAPI {
		return err
	}
	return nil // a syntax error: the decode reports it in its own words
}

// maxEnvelopeDepth bounds how deep a body's objects and arrays nest, the body itself being depth
// 1. A template parameter's value becomes part of a manifest, so a body nests no deeper than a
// manifest may; the bound also keeps the walk's recursion short.
var maxEnvelopeDepth = manifest.DefaultLimits.MaxDepth

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// envelopeWalk reads one body's tokens, guided by the Go type each value decodes into.
type envelopeWalk struct {
	dec *json.Decoder
}

// value checks the value at path, which decodes into t (nil for a value decoded into any), at
// depth objects and arrays below the body.
func (w *envelopeWalk) value(t reflect.Type, path []string, depth int) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType)) {
		var skip json.RawMessage
		return w.dec.Decode(&skip)
	}
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	delim, isDelim := tok.(json.Delim)
	if !isDelim || delim == '}' || delim == ']' {
		return nil // a scalar; whether it fits t is the decode's to say
	}
	if depth++; depth > maxEnvelopeDepth {
		return Invalid(fmt.Sprintf("%s nests objects and arrays more than %d deep, the body included; flatten it", path[0], maxEnvelopeDepth),
			FieldProblem{Field: renderPath(path), Problem: fmt.Sprintf("nested more than %d deep", maxEnvelopeDepth)})
	}
	if delim == '[' {
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(elem, append(path[:len(path):len(path)], "["+strconv.Itoa(i)+"]"), depth); err != nil {
				return err
			}
		}
		_, err := w.dec.Token() // ]
		return err
	}
	return w.object(t, path, depth)
}

// object checks the members of an object, its { already read, up to and including its }. A
// struct's object may hold only its fields; a map's or an untyped object's, any key once.
func (w *envelopeWalk) object(t reflect.Type, path []string, depth int) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t != nil && t.Kind() == reflect.Struct:
		fields = jsonFields(t)
	case t != nil && t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		at := append(path[:len(path):len(path)], key)
		if seen[key] {
			return Invalid(fmt.Sprintf(detailDuplicateKey, renderPath(at)), FieldProblem{Field: renderPath(at), Problem: problemDuplicateKey})
		}
		seen[key] = true
		if fields != nil {
			ft, known := fields[key]
			if !known {
				return unknownKey(fields, at)
			}
			elem = ft
		}
		if err := w.value(elem, at, depth); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // }
	return err
}

// Messages for a body's keys. Each names the key by its path from the body, as the fields of
// an invalid_request do: retry.attempts, labels.team, regions[1].
const (
	detailDuplicateKey  = "the body gives %q more than once; give each field once"
	problemDuplicateKey = "given more than once; keep one"
	detailUnknownKey    = "the body has a field this route does not take: %q"
	problemUnknownKey   = "unknown field; remove it"
	detailCaseKey       = "the body has a field this route does not take: %q; field names are case-sensitive, write it as %q"
	problemCaseKey      = "unknown field; field names are case-sensitive, write it as %q"
)

// unknownKey is the error of the key at the end of at, which is none of fields; a key that
// differs from one only in case is told which.
func unknownKey(fields map[string]reflect.Type, at []string) error {
	key := at[len(at)-1]
	for name := range fields {
		if strings.EqualFold(name, key) {
			fixed := append(at[:len(at)-1:len(at)-1], name)
			return Invalid(fmt.Sprintf(detailCaseKey, renderPath(at), renderPath(fixed)), FieldProblem{Field: renderPath(at), Problem: fmt.Sprintf(problemCaseKey, name)})
		}
	}
	return Invalid(fmt.Sprintf(detailUnknownKey, renderPath(at)), FieldProblem{Field: renderPath(at), Problem: problemUnknownKey})
}

// renderPath writes a path as the API's fields name them: keys joined by dots, indexes in
// brackets.
func renderPath(path []string) string {
	if len(path) == 0 {
		return "(body)"
	}
	var b strings.Builder
	for i, step := range path {
		if i > 0 && !strings.HasPrefix(step, "[") {
			b.WriteByte('.')
		}
		b.WriteString(step)
	}
	return b.String()
}

// jsonFields is the fields encoding/json decodes an object into t with, by their exact names:
// exported fields by their json tag's name (or their own where the tag names none), the fields
// of an embedded struct without a tag as if they were t's, and a shallower field winning a name.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	level := []reflect.Type{t}
	for len(level) > 0 {
		var next []reflect.Type
		found := map[string]reflect.Type{}
		for _, st := range level {
			for i := range st.NumField() {
				f := st.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
					next = append(next, ft)
					continue
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				if _, shallower := fields[name]; !shallower {
					found[name] = f.Type
				}
			}
		}
		for name, ft := range found {
			fields[name] = ft
		}
		level = next
	}
	return fields
}
