package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// decodeJSONTokens is DecodeJSON as it was written first, on encoding/json's Decoder.Token:
// the reference the differential fuzz test holds DecodeJSON to. encoding/json decides what is
// JSON; the walk adds the rules (duplicate keys, limits, shape) and says where each refusal is.
func decodeJSONTokens(b []byte, limits Limits) ([]map[string]any, error) {
	limits = limits.withDefaults()
	if err := checkInput(b, limits); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	w := &tokenWalker{dec: dec, src: b, doc: -1, budget: budget{limits: limits}}
	docs, err := w.manifests()
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, &Error{Document: -1, Problem: noDocuments}
	}
	return docs, nil
}

// tokenWalker reads one JSON text token by token, so that it sees every key of an object
// (encoding/json's map decoding keeps only the last of duplicates) and stops at the first
// value over budget instead of after building the whole tree.
type tokenWalker struct {
	dec    *json.Decoder
	src    []byte
	doc    int        // index of the manifest being read; -1 outside any
	path   []PathStep // where in it; its length + 1 is the depth of the value being read
	budget budget
}

// manifests reads the top-level object or array of objects and then requires the end of input.
func (w *tokenWalker) manifests() ([]map[string]any, error) {
	tok, err := w.token()
	if err != nil {
		return nil, err
	}
	var docs []map[string]any
	switch tok {
	case json.Delim('{'):
		w.doc = 0
		doc, err := w.manifest(tok)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	case json.Delim('['):
		for w.dec.More() {
			if len(docs) == w.budget.limits.MaxDocuments {
				return nil, &Error{Document: -1, Problem: problemf(tooManyDocs, w.budget.limits.MaxDocuments)}
			}
			w.doc = len(docs)
			if tok, err = w.token(); err != nil {
				return nil, err
			}
			doc, err := w.manifest(tok)
			if err != nil {
				return nil, err
			}
			docs = append(docs, doc)
		}
		if _, err := w.token(); err != nil { // the closing ]
			return nil, err
		}
	default:
		return nil, &Error{Document: -1, Problem: notArrayOrObj}
	}
	w.doc = -1
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, w.fail(trailingJSON)
	}
	return docs, nil
}

// manifest reads one manifest starting at tok and checks its shape.
func (w *tokenWalker) manifest(tok json.Token) (map[string]any, error) {
	v, err := w.value(tok)
	if err != nil {
		return nil, err
	}
	doc, path, problem := checkShape(v)
	if problem != "" {
		return nil, &Error{Document: w.doc, Path: path, Line: lineAt(w.src, w.dec.InputOffset()), Problem: problem}
	}
	return doc, nil
}

// value converts the value starting at tok, at w.path, reading the rest of it.
func (w *tokenWalker) value(tok json.Token) (any, error) {
	if problem := w.budget.spend(len(w.path) + 1); problem != "" {
		return nil, w.fail(problem)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return w.object()
		}
		return w.array()
	case json.Number:
		if _, err := strconv.ParseFloat(string(t), 64); err != nil {
			return nil, w.fail(problemf(numberRange, t))
		}
		return t, nil
	default: // string, bool or nil
		return t, nil
	}
}

func (w *tokenWalker) object() (map[string]any, error) {
	obj := map[string]any{}
	for w.dec.More() {
		tok, err := w.token()
		if err != nil {
			return nil, err
		}
		key := tok.(string) // json.Decoder yields only string tokens in key position
		w.path = append(w.path, PathStep{Key: key})
		if _, dup := obj[key]; dup {
			return nil, w.fail(problemf(duplicateKeyRaw, key))
		}
		if tok, err = w.token(); err != nil {
			return nil, err
		}
		if obj[key], err = w.value(tok); err != nil {
			return nil, err
		}
		w.path = w.path[:len(w.path)-1]
	}
	_, err := w.token() // the closing }
	return obj, err
}

func (w *tokenWalker) array() ([]any, error) {
	arr := []any{}
	for w.dec.More() {
		tok, err := w.token()
		if err != nil {
			return nil, err
		}
		w.path = append(w.path, PathStep{Index: len(arr), IsIndex: true})
		v, err := w.value(tok)
		if err != nil {
			return nil, err
		}
		w.path = w.path[:len(w.path)-1]
		arr = append(arr, v)
	}
	_, err := w.token() // the closing ]
	return arr, err
}

// token is the next token, a syntax error becoming an *Error at the line it was found on.
func (w *tokenWalker) token() (json.Token, error) {
	tok, err := w.dec.Token()
	if err == nil {
		return tok, nil
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, w.fail(problemf(badJSON, err))
}

// fail is an *Error at w.path in the current manifest, on the line the decoder has reached.
func (w *tokenWalker) fail(problem string) *Error {
	return &Error{Document: w.doc, Path: RenderPath(w.path), Line: lineAt(w.src, w.dec.InputOffset()), Problem: problem}
}
