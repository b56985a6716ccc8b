package policy

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A plan says how to decode one Go type; plans are built once per type and then only read.
type plan struct {
	typ    reflect.Type
	kind   reflect.Kind
	fields map[string]fieldPlan // structs, by JSON name, inlined fields flattened in
	elem   *plan                // pointers, slices and maps
	custom bool                 // has its own UnmarshalJSON or UnmarshalText
	bytes  bool                 // []byte: base64 text, as encoding/json reads it
}

type fieldPlan struct {
	index []int
	plan  *plan
}

var (
	plansMu sync.Mutex
	plans   = map[reflect.Type]*plan{}

	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	resourceList    = reflect.TypeFor[corev1.ResourceList]()
	stringMap       = reflect.TypeFor[map[string]string]()
)

// planFor returns the plan for t, building it and the plans it needs on first use.
func planFor(t reflect.Type) *plan {
	plansMu.Lock()
	defer plansMu.Unlock()
	return buildPlan(t)
}

func buildPlan(t reflect.Type) *plan {
	if p, ok := plans[t]; ok {
		return p
	}
	p := &plan{typ: t, kind: t.Kind()}
	plans[t] = p // before the fields, so that a recursive type finds itself
	pt := reflect.PointerTo(t)
	switch {
	case pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler):
		p.custom = true
	case p.kind == reflect.Pointer || p.kind == reflect.Map:
		p.elem = buildPlan(t.Elem())
	case p.kind == reflect.Slice:
		p.bytes = t.Elem().Kind() == reflect.Uint8
		p.elem = buildPlan(t.Elem())
	case p.kind == reflect.Struct:
		p.fields = map[string]fieldPlan{}
		addFields(p.fields, t, nil)
	}
	return p
}

// addFields adds t's fields to fields under their JSON names, flattening inlined structs
// (TypeMeta, EphemeralContainerCommon) as encoding/json does; a shallower field wins a name.
func addFields(fields map[string]fieldPlan, t reflect.Type, at []int) {
	var inlined []int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			if f.Type.Kind() != reflect.Struct {
				panic(fmt.Sprintf("policy: inlined field %s.%s is not a struct", t, f.Name))
			}
			inlined = append(inlined, i)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := fields[name]; !taken {
			fields[name] = fieldPlan{index: append(cloneIndex(at), i), plan: buildPlan(f.Type)}
		}
	}
	for _, i := range inlined {
		addFields(fields, t.Field(i).Type, append(cloneIndex(at), i))
	}
}

func cloneIndex(at []int) []int { return append([]int(nil), at...) }
