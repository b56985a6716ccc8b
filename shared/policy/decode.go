package policy

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The decoder turns a decoded manifest (map[string]any, as JSON or YAML decoding gives it) into
// its typed k8s.io/api object, strictly: an unknown field or a value of the wrong type is
// reported with its full path, and decoding goes on so that every problem is reported at once.
//
// It does what runtime.DefaultUnstructuredConverter does, with two differences. That converter
// visits every field of every destination struct whether the manifest sets it or not and, in
// strict mode, keeps a set of matched keys per struct: BenchmarkUpstreamConvertDeployment
// measures it at ten times this decoder or more, and fifty or more times the Pod Security
// evaluation it feeds. This one visits only the keys the manifest has, using a per-type plan
// built once. And the converter stops at the first wrongly typed value without saying where it
// is. The tests check, also by fuzzing, that whatever this decoder accepts the converter
// decodes to the same object. (Decoding the request's own bytes into the typed object with
// encoding/json instead, strictly, costs twice what this decoder does: BenchmarkStdlibJSONDeployment.)

// fieldError is one problem the decoder found, at a path like spec.containers[0].image.
type fieldError struct {
	path    string
	message string
}

// maxFieldErrors bounds what one document can report: a megabyte of misspelt keys should cost
// the client one screen of errors, not a megabyte of them.
const maxFieldErrors = 50

// decoder holds one document's decoding: the path to where it is, and what went wrong.
type decoder struct {
	path    []pathStep
	errs    []fieldError
	dropped int
	// pathBuf holds the path without allocating; pod specs nest about a dozen deep.
	pathBuf [16]pathStep
}

// pathStep is a field name, a map key or a list index; paths are written as Kubernetes writes
// them: spec.containers[0].resources.limits[memory].
type pathStep struct {
	key   string
	index int // a list index, or fieldStep or keyStep
}

const (
	fieldStep = -1
	keyStep   = -2
)

// decode decodes m into a new value of p's type and returns a pointer to it.
func (d *decoder) decode(m map[string]any, p *plan) any {
	d.path = d.pathBuf[:0]
	v := reflect.New(p.typ)
	d.value(m, v.Elem(), p)
	return v.Interface()
}

func (d *decoder) where() string {
	var b strings.Builder
	for _, s := range d.path {
		switch s.index {
		case fieldStep:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		case keyStep:
			b.WriteByte('[')
			b.WriteString(s.key)
			b.WriteByte(']')
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func (d *decoder) fail(format string, args ...any) {
	if len(d.errs) == maxFieldErrors {
		d.dropped++
		return
	}
	d.errs = append(d.errs, fieldError{path: d.where(), message: fmt.Sprintf(format, args...)})
}

// value decodes v into dst, which holds the zero value of p's type. A null leaves it zero, as
// the API server's decoding does.
func (d *decoder) value(v any, dst reflect.Value, p *plan) {
	if v == nil {
		return
	}
	switch {
	case p.custom:
		d.custom(v, dst)
		return
	case p.typ == resourceList:
		d.resourceList(v, dst)
		return
	case p.typ == stringMap:
		d.stringMap(v, dst)
		return
	}
	switch p.kind {
	case reflect.Pointer:
		n := reflect.New(p.typ.Elem())
		d.value(v, n.Elem(), p.elem)
		dst.Set(n)
	case reflect.Struct:
		d.object(v, dst, p)
	case reflect.Slice:
		d.list(v, dst, p)
	case reflect.Map:
		d.mapping(v, dst, p)
	case reflect.String:
		if s, ok := v.(string); ok {
			dst.SetString(s)
		} else {
			d.fail(msgWrongType, "a string", describe(v))
		}
	case reflect.Bool:
		if b, ok := v.(bool); ok {
			dst.SetBool(b)
		} else {
			d.fail(msgWrongType, "true or false", describe(v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n, ok := integer(v); !ok {
			d.fail(msgWrongType, "a whole number", describe(v))
		} else if dst.OverflowInt(n) {
			d.fail(msgOutOfRange, n)
		} else {
			dst.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n, ok := integer(v); !ok || n < 0 {
			d.fail(msgWrongType, "a whole number, zero or more", describe(v))
		} else if dst.OverflowUint(uint64(n)) {
			d.fail(msgOutOfRange, n)
		} else {
			dst.SetUint(uint64(n))
		}
	case reflect.Float32, reflect.Float64:
		if f, ok := number(v); ok {
			dst.SetFloat(f)
		} else {
			d.fail(msgWrongType, "a number", describe(v))
		}
	case reflect.Interface:
		if rv := reflect.ValueOf(v); rv.Type().AssignableTo(p.typ) {
			dst.Set(rv)
		} else {
			d.fail("cannot hold %s", describe(v))
		}
	default:
		d.fail("cannot be decoded into %s", p.typ)
	}
}

func (d *decoder) object(v any, dst reflect.Value, p *plan) {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(msgWrongType, "an object", describe(v))
		return
	}
	for k, fv := range m {
		d.path = append(d.path, pathStep{key: k, index: fieldStep})
		if f, ok := p.fields[k]; !ok {
			d.fail(msgUnknownField, clip(k))
		} else if len(f.index) == 1 {
			d.value(fv, dst.Field(f.index[0]), f.plan)
		} else {
			d.value(fv, dst.FieldByIndex(f.index), f.plan)
		}
		d.path = d.path[:len(d.path)-1]
	}
}

func (d *decoder) list(v any, dst reflect.Value, p *plan) {
	if p.bytes {
		s, ok := v.(string)
		if !ok {
			d.fail(msgWrongType, "base64 text", describe(v))
			return
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			d.fail("must be base64 text: %v", err)
			return
		}
		dst.SetBytes(b)
		return
	}
	l, ok := v.([]any)
	if !ok {
		d.fail(msgWrongType, "a list", describe(v))
		return
	}
	if len(l) == 0 {
		dst.Set(reflect.MakeSlice(p.typ, 0, 0)) // [] stays an empty list, not a missing one
		return
	}
	// Growing dst in place allocates the elements alone; MakeSlice would box a slice header too.
	dst.Grow(len(l))
	dst.SetLen(len(l))
	for i, x := range l {
		d.path = append(d.path, pathStep{index: i})
		d.value(x, dst.Index(i), p.elem)
		d.path = d.path[:len(d.path)-1]
	}
}

func (d *decoder) mapping(v any, dst reflect.Value, p *plan) {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(msgWrongType, "an object", describe(v))
		return
	}
	out := reflect.MakeMapWithSize(p.typ, len(m))
	for k, x := range m {
		d.path = append(d.path, pathStep{key: k, index: keyStep})
		e := reflect.New(p.typ.Elem()).Elem()
		d.value(x, e, p.elem)
		out.SetMapIndex(reflect.ValueOf(k).Convert(p.typ.Key()), e)
		d.path = d.path[:len(d.path)-1]
	}
	dst.Set(out)
}

// stringMap and resourceList are mapping without reflection, for the two map types nearly
// every manifest has (labels and annotations; requests and limits).
func (d *decoder) stringMap(v any, dst reflect.Value) {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(msgWrongType, "an object", describe(v))
		return
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if x == nil {
			out[k] = ""
			continue
		}
		s, ok := x.(string)
		if !ok {
			d.path = append(d.path, pathStep{key: k, index: keyStep})
			d.fail(msgWrongType, "a string", describe(x))
			d.path = d.path[:len(d.path)-1]
			continue
		}
		out[k] = s
	}
	dst.Set(reflect.ValueOf(out))
}

func (d *decoder) resourceList(v any, dst reflect.Value) {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(msgWrongType, "an object", describe(v))
		return
	}
	out := make(corev1.ResourceList, len(m))
	for k, x := range m {
		d.path = append(d.path, pathStep{key: k, index: keyStep})
		out[corev1.ResourceName(k)] = d.quantity(x)
		d.path = d.path[:len(d.path)-1]
	}
	dst.Set(reflect.ValueOf(out))
}
