package manifest

import "encoding/json"

// checkShape returns v as a manifest when it is an object with a string apiVersion, kind and
// metadata.name, and otherwise the path and problem to report. Whether the kind is allowed
// and its fields are known is the admission policy's business, not the decoder's.
func checkShape(v any) (doc map[string]any, path, problem string) {
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, "", problemf(notObject, describe(v))
	}
	for _, f := range []struct{ key, example string }{
		{"apiVersion", "batch/v1"},
		{"kind", "Job"},
	} {
		s, present := doc[f.key]
		if !present {
			return nil, f.key, problemf(missingField, f.key, f.example)
		}
		if s, ok := s.(string); !ok || s == "" {
			return nil, f.key, problemf(emptyField, f.key)
		}
	}
	meta, present := doc["metadata"]
	if !present {
		return nil, "metadata.name", metadataNoName
	}
	m, ok := meta.(map[string]any)
	if !ok {
		return nil, "metadata", metadataNotObj
	}
	name, present := m["name"]
	if !present {
		return nil, "metadata.name", metadataNoName
	}
	if s, ok := name.(string); !ok || s == "" {
		return nil, "metadata.name", metadataBadName
	}
	return doc, "", ""
}

// describe names v's JSON type for a message: "an array", "a string".
func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a value"
}
