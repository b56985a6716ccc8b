package manifest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// job is a minimal valid manifest in JSON, with %s where extra fields go.
const job = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train"%s}}`

func TestDecodeJSONAccepts(t *testing.T) {
	one := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "train"}}
	tests := []struct {
		name string
		in   string
		want []map[string]any
	}{
		{"one object", strings.Replace(job, "%s", "", 1), []map[string]any{one}},
		{"array of two", "[" + strings.Replace(job, "%s", "", 1) + "," + strings.Replace(job, "%s", "", 1) + "]",
			[]map[string]any{one, one}},
		{"whitespace around", " \n" + strings.Replace(job, "%s", "", 1) + "\n ", []map[string]any{one}},
		{"numbers keep their literal", strings.Replace(job, "%s", `,"n":[1,1.5,1e3,-0,12345678901234567890,1E-7]`, 1),
			[]map[string]any{{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{
				"name": "train",
				"n":    []any{json.Number("1"), json.Number("1.5"), json.Number("1e3"), json.Number("-0"), json.Number("12345678901234567890"), json.Number("1E-7")},
			}}}},
		{"same key in sibling objects", strings.Replace(job, "%s", `,"a":{"x":1},"b":{"x":2}`, 1),
			[]map[string]any{{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{
				"name": "train", "a": map[string]any{"x": json.Number("1")}, "b": map[string]any{"x": json.Number("2")},
			}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeJSON([]byte(tt.in), DefaultLimits)
			if err != nil {
				t.Fatalf("DecodeJSON(%s): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeJSON(%s) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestDecodeJSONRefuses(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	tests := []struct {
		name   string
		in     string
		limits Limits
		want   Error // Problem is matched as a prefix
	}{
		{"duplicate top-level key", `{"apiVersion":"v1","kind":"Pod","kind":"Job","metadata":{"name":"a"}}`, Limits{},
			Error{Document: 0, Path: "kind", Line: 1, Problem: `duplicate key "kind"`}},
		{"duplicate nested key", "[" + strings.Replace(job, "%s", "", 1) + ",\n" +
			strings.Replace(job, "%s", `,"labels":{"app":"a","app":"b"}`, 1) + "]", Limits{},
			Error{Document: 1, Path: "metadata.labels.app", Line: 2, Problem: `duplicate key "app"`}},
		{"duplicate key in an array item", strings.Replace(job, "%s", `,"x":[{},{"k.io/a":1,"k.io/a":1}]`, 1), Limits{},
			Error{Document: 0, Path: `metadata.x[1]["k.io/a"]`, Line: 1, Problem: `duplicate key "k.io/a"`}},
		{"too deep", strings.Replace(job, "%s", `,"d":`+deep, 1), Limits{},
			Error{Document: 0, Path: "metadata.d" + strings.Repeat(".a", 62), Line: 1, Problem: "nested deeper than 64 levels"}},
		{"too many values", strings.Replace(job, "%s", `,"d":[1,2,3,4,5,6]`, 1), Limits{MaxNodes: 8},
			Error{Document: 0, Path: "metadata.d[2]", Line: 1, Problem: "more than 8 values"}},
		{"too many documents", "[" + strings.Repeat(strings.Replace(job, "%s", "", 1)+",", 3) + "{}]", Limits{MaxDocuments: 3},
			Error{Document: -1, Problem: "more than 3 manifests"}},
		{"too large", strings.Replace(job, "%s", "", 1), Limits{MaxBytes: 10},
			Error{Document: -1, Problem: "the input is 66 bytes; the limit is 10"}},
		{"empty array", "[]", Limits{}, Error{Document: -1, Problem: "no manifests"}},
		{"a string", `"hi"`, Limits{}, Error{Document: -1, Problem: "manifests must be a JSON object"}},
		{"array of a string", `["hi"]`, Limits{}, Error{Document: 0, Line: 1, Problem: "a manifest must be an object, not a string"}},
		{"trailing value", strings.Replace(job, "%s", "", 1) + " {}", Limits{}, Error{Document: -1, Line: 1, Problem: "unexpected data after"}},
		{"syntax", `{"apiVersion":"v1",}`, Limits{}, Error{Document: 0, Line: 1, Problem: "invalid JSON"}},
		{"truncated", `[{"apiVersion":"v1"`, Limits{}, Error{Document: 0, Line: 1, Problem: "invalid JSON: unexpected EOF"}},
		{"number out of range", strings.Replace(job, "%s", `,"n":1e400`, 1), Limits{},
			Error{Document: 0, Path: "metadata.n", Line: 1, Problem: "the number 1e400 is out of range"}},
		{"not UTF-8", "{\"a\":\"\xff\"}", Limits{}, Error{Document: -1, Line: 1, Problem: "the input is not valid UTF-8 (at byte 6)"}},
		{"no apiVersion", `{"kind":"Job","metadata":{"name":"a"}}`, Limits{},
			Error{Document: 0, Path: "apiVersion", Line: 1, Problem: "apiVersion is missing; set it (for example batch/v1)"}},
		{"kind not a string", `{"apiVersion":"v1","kind":1,"metadata":{"name":"a"}}`, Limits{},
			Error{Document: 0, Path: "kind", Line: 1, Problem: "kind must be a non-empty string"}},
		{"no metadata", `{"apiVersion":"v1","kind":"Pod"}`, Limits{},
			Error{Document: 0, Path: "metadata.name", Line: 1, Problem: "metadata.name is missing"}},
		{"generateName only", `{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"a-"}}`, Limits{},
			Error{Document: 0, Path: "metadata.name", Line: 1, Problem: "metadata.name is missing"}},
		{"empty name", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":""}}`, Limits{},
			Error{Document: 0, Path: "metadata.name", Line: 1, Problem: "metadata.name must be a non-empty string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := DecodeJSON([]byte(tt.in), tt.limits)
			checkRefusal(t, "DecodeJSON", tt.in, docs, err, tt.want)
		})
	}
}

// checkRefusal fails t unless err is an *Error like want, its Problem starting with want's.
func checkRefusal(t *testing.T, fn, in string, docs []map[string]any, err error, want Error) {
	t.Helper()
	var got *Error
	if !errors.As(err, &got) {
		t.Fatalf("%s(%.80q) = %v, %v; want an *Error", fn, in, docs, err)
	}
	if !strings.HasPrefix(got.Problem, want.Problem) {
		t.Errorf("%s(%.80q) problem = %q; want it to start %q", fn, in, got.Problem, want.Problem)
	}
	want.Problem = got.Problem
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("%s(%.80q) error (-want +got):\n%s", fn, in, diff)
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Document: -1, Problem: "no manifests; give at least one"}, "manifests: no manifests; give at least one"},
		{Error{Document: 2, Path: "metadata.labels.app", Line: 7, Problem: `duplicate key "app"; keep one`},
			`manifest 2 at metadata.labels.app (line 7): duplicate key "app"; keep one`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q; want %q", tt.err, got, tt.want)
		}
	}
}
