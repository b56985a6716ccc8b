package contract

import (
	"encoding/json"
	"fmt"
	"strings"
)

// closeObjects makes every object schema of an OpenAPI document that lists its properties and
// says nothing of others refuse others (additionalProperties: false), so a field a handler sends
// that the document does not name — a field renamed in one and not the other, say — fails a check
// as a missing required one does. The served document stays open, as API.md lets clients expect
// fields to be added; the tests hold the server to naming each one there first.
//
// An allOf of object schemas is merged into one object first, since each of its parts closed on
// its own would refuse the others' fields.
func closeObjects(spec []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	// open is true beneath a schema the document declares open (additionalProperties: true), such
	// as a Kubernetes manifest: what it holds is the cluster's to describe, not the API's.
	var walk func(v any, open bool) any
	walk = func(v any, open bool) any {
		switch v := v.(type) {
		case []any:
			for i := range v {
				v[i] = walk(v[i], open)
			}
		case map[string]any:
			if parts, ok := v["allOf"].([]any); ok {
				if merged, ok := mergeAll(parts, schemas); ok {
					delete(v, "allOf")
					for k, x := range merged {
						v[k] = x
					}
				}
			}
			open = open || v["additionalProperties"] == true
			for k, x := range v {
				v[k] = walk(x, open)
			}
			_, props := v["properties"].(map[string]any)
			_, set := v["additionalProperties"]
			if v["type"] == "object" && props && !set && !open {
				v["additionalProperties"] = false
			}
		}
		return v
	}
	walk(doc, false)
	return json.Marshal(doc)
}

// mergeAll answers the one object schema parts describe together, each part an object schema or
// a $ref to a component that is one; ok is false for anything else, left as it is.
func mergeAll(parts []any, schemas map[string]any) (map[string]any, bool) {
	merged := map[string]any{"type": "object", "properties": map[string]any{}}
	var required []any
	for _, p := range parts {
		m, ok := p.(map[string]any)
		if !ok {
			return nil, false
		}
		if ref, ok := m["$ref"].(string); ok {
			name, ok := strings.CutPrefix(ref, "#/components/schemas/")
			if !ok {
				return nil, false
			}
			if m, ok = schemas[name].(map[string]any); !ok {
				return nil, false
			}
		}
		props, ok := m["properties"].(map[string]any)
		if m["type"] != "object" || !ok {
			return nil, false
		}
		for k, x := range props {
			merged["properties"].(map[string]any)[k] = deepCopy(x)
		}
		if r, ok := m["required"].([]any); ok {
			required = append(required, r...)
		}
	}
	if len(required) > 0 {
		merged["required"] = required
	}
	return merged, true
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
