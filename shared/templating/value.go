package templating

import (
	"encoding/json"
	"fmt"
	"math"
)

// clone deep-copies a parameter's value for a field that is exactly its placeholder, so the
// filled manifest shares nothing with the caller's parameters. It accepts what decoding JSON
// into any gives (with or without UseNumber) and Go's other number types; strings are copied
// as they are, never scanned for placeholders.
func clone(v any) (any, string) {
	switch v := v.(type) {
	case nil, bool, string,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return v, ""
	case json.Number, float64, float32:
		if _, problem := numberText(v); problem != "" {
			return nil, problem
		}
		return v, ""
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			c, problem := clone(item)
			if problem != "" {
				return nil, problem
			}
			out[k] = c
		}
		return out, ""
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			c, problem := clone(item)
			if problem != "" {
				return nil, problem
			}
			out[i] = c
		}
		return out, ""
	}
	return nil, fmt.Sprintf(badType, v)
}

// text is how a parameter's value reads inside a longer string: a string as itself, a
// boolean as true or false, a number as encoding/json spells it (a json.Number as its
// literal, so 12345678901234567890 keeps every digit).
func text(v any) (string, string) {
	switch v := v.(type) {
	case string:
		return v, ""
	case bool:
		if v {
			return "true", ""
		}
		return "false", ""
	case json.Number, float64, float32,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return numberText(v)
	case nil:
		return "", fmt.Sprintf(notText, "null")
	case map[string]any:
		return "", fmt.Sprintf(notText, "an object")
	case []any:
		return "", fmt.Sprintf(notText, "an array")
	}
	return "", fmt.Sprintf(badType, v)
}

// numberText spells a number as encoding/json would, refusing NaN, infinities and a
// json.Number that is not a JSON number literal.
func numberText(v any) (string, string) {
	switch f := v.(type) {
	case float64:
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Sprintf(badNumber, v)
		}
	case float32:
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return "", fmt.Sprintf(badNumber, v)
		}
	}
	out, err := json.Marshal(v) // also checks a json.Number's syntax
	if err != nil {
		return "", fmt.Sprintf(badNumber, v)
	}
	return string(out), ""
}
