package manifest

import (
	"unicode/utf8"
)

// DecodeJSON decodes the manifests of a request: b is either one manifest (a JSON object, as
// in a job's or a template's "manifest" field) or an array of them (the "manifests" field),
// handed over as the json.RawMessage it arrived as. It accepts the JSON encoding/json accepts
// and builds the same values as its UseNumber decoding into an any, but refuses a duplicate
// key rather than keeping the last, and stops at the first value over limits. Each number
// keeps its literal as a json.Number. Each manifest must have apiVersion, kind and
// metadata.name. The strings and numbers decoded share one copy of b, which stays in memory
// as long as any of them does.
func DecodeJSON(b []byte, limits Limits) ([]map[string]any, error) {
	limits = limits.withDefaults()
	if err := checkInput(b, limits); err != nil {
		return nil, err
	}
	docs, err := newJSONScanner(b, limits).manifests()
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, &Error{Document: -1, Problem: noDocuments}
	}
	return docs, nil
}

// checkInput refuses input over MaxBytes or not UTF-8, before any parsing: encoding/json would
// otherwise replace bad bytes with U+FFFD and carry on.
func checkInput(b []byte, limits Limits) error {
	if len(b) > limits.MaxBytes {
		return &Error{Document: -1, Problem: problemf(tooLarge, len(b), limits.MaxBytes)}
	}
	if !utf8.Valid(b) {
		at := 0
		for at < len(b) {
			r, size := utf8.DecodeRune(b[at:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			at += size
		}
		return &Error{Document: -1, Line: lineAt(b, int64(at)), Problem: problemf(notUTF8, at)}
	}
	return nil
}
