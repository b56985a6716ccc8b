package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// maxJSONBody bounds a JSON request body. The largest JSON body is a manifest bundle; 1 MiB is what
// etcd accepts for one object (its default request limit is 1.5 MiB).
const maxJSONBody = 1 << 20

// decodeJSON reads r's body into v strictly; see readJSON.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	_, err := readJSON(w, r, v)
	return err
}

// readJSON reads r's body into v strictly — JSON only, no unknown fields, every key spelt
// exactly as its field and given once at any depth (checkEnvelope), no trailing data, at most
// maxJSONBody bytes, numbers in untyped fields kept exact — and answers the raw body too.
// Every failure is an *Error that says what to fix.
func readJSON(w http.ResponseWriter, r *http.Request, v any) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, Errorf(CodeUnsupported, "send the body as application/json (got %q)", ct)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		return nil, decodeError(err)
	}
	if err := checkEnvelope(body, v); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return nil, decodeError(err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return nil, Invalid("the body has data after its JSON value; send exactly one JSON object")
	}
	return body, nil
}

// decodeError turns encoding/json's errors into API errors naming the field and the fix.
func decodeError(err error) error {
	var (
		syntax   *json.SyntaxError
		typeErr  *json.UnmarshalTypeError
		tooLarge *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooLarge):
		return Errorf(CodeTooLarge, "the body is larger than %d bytes", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		return Invalid("the body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Invalid("the body ends in the middle of its JSON value")
	case errors.As(err, &syntax):
		return Invalid(fmt.Sprintf("the body is not valid JSON at byte %d: %s", syntax.Offset, syntax.Error()))
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "(body)"
		}
		return Invalid("a field has the wrong type", FieldProblem{Field: field, Problem: fmt.Sprintf("must be %s, not %s", typeErr.Type, typeErr.Value)})
	}
	// encoding/json reports an unknown field only in its message: `json: unknown field "x"`.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, _ := strconv.Unquote(name)
		return Invalid("the body has a field this route does not take", FieldProblem{Field: field, Problem: "unknown field; remove it"})
	}
	return Invalid("the body could not be read as JSON: " + err.Error())
}
