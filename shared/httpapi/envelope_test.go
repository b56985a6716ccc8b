package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readInto runs readJSON on body into a new value of the request type that route names.
func readInto(route, body string) (any, error) {
	var v any
	switch route {
	case "manifests":
		v = &manifestsRequest{}
	case "jobs":
		v = &jobRequest{}
	case "template jobs":
		v = &templateJobRequest{}
	case "templates":
		v = &templateRequest{}
	case "webhooks":
		v = &webhookRequest{}
	}
	_, err := readJSON(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(body)), v)
	return v, err
}

const envelopeJob = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"}}`

func TestEnvelopeKeys(t *testing.T) {
	nested := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	tests := []struct {
		name, route, body string
		wantStatus        int
		wantFields        []FieldProblem // nil: only the status is checked
		detailNames       string         // what the detail must name, if not wantFields[0].Field
	}{
		{name: "manifests body", route: "manifests", body: `{"manifests":[` + envelopeJob + `],"namespace":"team-a","region":"us-east-1","dry_run":true,"validate":false}`},
		{name: "job body with every setting", route: "jobs", body: `{"manifest":` + envelopeJob + `,"namespace":"team-a","regions":["us-east-1","us-west-2"],"priority":70,` +
			`"labels":{"team":"ml","app.kubernetes.io/name":"x"},"max_spot_price":0.5,"spot_instance_type":"g5.xlarge","spot_deadline":"1h","on_deadline":"fail",` +
			`"retry":{"attempts":3,"on":["pod_failure","exit:3"],"backoff":"10s","count_spot_interruptions":true}}`},
		{name: "template job with nested parameters", route: "template jobs", body: `{"name":"a","namespace":"team-a","parameters":{"gpus":2,"env":[{"name":"A"},{"name":"B"}],"deep":{"x":{"y":1}}}}`},
		{name: "a key written with escapes is the key", route: "jobs", body: `{"manifest":` + envelopeJob + `,"n\u0061mespace":"team-a"}`},
		{name: "a duplicate inside a manifest is left to the manifest decoder", route: "jobs", body: `{"manifest":{"kind":"Job","kind":"Pod"},"namespace":"team-a"}`},
		{name: "empty objects and arrays", route: "jobs", body: `{"manifest":{},"labels":{},"regions":[],"retry":{}}`},

		{name: "unknown key", route: "manifests", body: `{"manifests":[],"colour":"red"}`, wantStatus: 400,
			wantFields: []FieldProblem{{"colour", problemUnknownKey}}},
		{name: "Manifests for manifests", route: "manifests", body: `{"Manifests":[` + envelopeJob + `]}`, wantStatus: 400,
			wantFields: []FieldProblem{{"Manifests", `unknown field; field names are case-sensitive, write it as "manifests"`}}},
		{name: "Namespace for namespace", route: "jobs", body: `{"manifest":` + envelopeJob + `,"Namespace":"team-b"}`, wantStatus: 400,
			wantFields: []FieldProblem{{"Namespace", `unknown field; field names are case-sensitive, write it as "namespace"`}}},
		{name: "a key encoding/json folds to a field (long s)", route: "jobs", body: `{"manifest":{},"\u017Fpot_instance_type":"g5.xlarge"}`, wantStatus: 400,
			wantFields: []FieldProblem{{"\u017Fpot_instance_type", `unknown field; field names are case-sensitive, write it as "spot_instance_type"`}}},
		{name: "duplicate namespace", route: "manifests", body: `{"manifests":[],"namespace":"team-a","namespace":"team-b"}`, wantStatus: 400,
			wantFields: []FieldProblem{{"namespace", problemDuplicateKey}}},
		{name: "duplicate namespace, the second escaped", route: "jobs", body: `{"manifest":{},"namespace":"team-a","n\u0061mespace":"team-b"}`, wantStatus: 400,
			wantFields: []FieldProblem{{"namespace", problemDuplicateKey}}},
		{name: "duplicate manifests", route: "manifests", body: `{"manifests":[],"manifests":[]}`, wantStatus: 400,
			wantFields: []FieldProblem{{"manifests", problemDuplicateKey}}},
		{name: "duplicate nested key", route: "jobs", body: `{"manifest":{},"retry":{"attempts":2,"on":["pod_failure"],"attempts":9}}`, wantStatus: 400,
			wantFields: []FieldProblem{{"retry.attempts", problemDuplicateKey}}},
		{name: "unknown nested key", route: "jobs", body: `{"manifest":{},"retry":{"attempts":2,"forever":true}}`, wantStatus: 400,
			wantFields: []FieldProblem{{"retry.forever", problemUnknownKey}}},
		{name: "nested key in the wrong case", route: "templates", body: `{"name":"a","manifest":{},"retry":{"Attempts":2}}`, wantStatus: 400,
			wantFields: []FieldProblem{{"retry.Attempts", `unknown field; field names are case-sensitive, write it as "attempts"`}}},
		{name: "duplicate label key", route: "jobs", body: `{"manifest":{},"labels":{"team":"a","team":"b"}}`, wantStatus: 400,
			wantFields: []FieldProblem{{"labels.team", problemDuplicateKey}}},
		{name: "duplicate parameter", route: "template jobs", body: `{"name":"a","parameters":{"gpus":1,"gpus":8}}`, wantStatus: 400,
			wantFields: []FieldProblem{{"parameters.gpus", problemDuplicateKey}}},
		{name: "duplicate key deep inside a parameter's value", route: "template jobs", body: `{"name":"a","parameters":{"env":[{"name":"A"},{"name":"B","name":"C"}]}}`, wantStatus: 400,
			wantFields: []FieldProblem{{"parameters.env[1].name", problemDuplicateKey}}},
		{name: "duplicate key in an object where a string belongs", route: "webhooks", body: `{"url":{"a":1,"a":2}}`, wantStatus: 400,
			wantFields: []FieldProblem{{"url.a", problemDuplicateKey}}},

		// The body is depth 1 and parameters depth 2, so p's value may nest maxEnvelopeDepth-2 deep.
		{name: "nesting at the bound", route: "template jobs", body: `{"name":"a","parameters":{"p":` + nested("[", "]", maxEnvelopeDepth-2) + `}}`},
		{name: "nesting past the bound", route: "template jobs", body: `{"name":"a","parameters":{"p":` + nested("[", "]", maxEnvelopeDepth-1) + `}}`, wantStatus: 400,
			wantFields: []FieldProblem{{"parameters.p" + strings.Repeat("[0]", maxEnvelopeDepth-2), "nested more than 64 deep"}}, detailNames: "parameters"},
		{name: "nesting far past the bound", route: "template jobs", body: `{"name":"a","parameters":{"p":` + nested(`{"a":`, "}", 100_000) + `}}`, wantStatus: 400},
		{name: "too large", route: "manifests", body: `{"manifests":[],"namespace":"` + strings.Repeat("a", maxJSONBody) + `"}`, wantStatus: 413},
		{name: "syntax error after a good key", route: "manifests", body: `{"namespace":"team-a",}`, wantStatus: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readInto(tt.route, tt.body)
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("readJSON(%s, %.80q) = %v, want nil", tt.route, tt.body, err)
				}
				return
			}
			apiErr, ok := err.(*Error)
			if !ok {
				t.Fatalf("readJSON(%s, %.80q) = %v, want an *Error", tt.route, tt.body, err)
			}
			if apiErr.Status() != tt.wantStatus {
				t.Errorf("readJSON(%s, %.80q) status = %d (%s), want %d", tt.route, tt.body, apiErr.Status(), apiErr.Detail, tt.wantStatus)
			}
			if tt.wantFields == nil {
				return
			}
			if diff := cmp.Diff(tt.wantFields, apiErr.Fields); diff != "" {
				t.Errorf("readJSON(%s, %.80q) fields (-want +got):\n%s", tt.route, tt.body, diff)
			}
			// The detail, which a client may show alone, names the key too.
			key := tt.detailNames
			if key == "" {
				key = tt.wantFields[0].Field
			}
			if !strings.Contains(apiErr.Detail, key) {
				t.Errorf("readJSON(%s, %.80q) detail = %q, want it to name %s", tt.route, tt.body, apiErr.Detail, key)
			}
		})
	}
}

// TestEnvelopeKeepsNumbersExact checks that a parameter's number keeps its literal: the check
// before decoding leaves UseNumber's decoding as it was.
func TestEnvelopeKeepsNumbersExact(t *testing.T) {
	v, err := readInto("template jobs", `{"name":"a","parameters":{"big":12345678901234567890,"small":0.1}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := v.(*templateJobRequest).Parameters
	want := map[string]any{"big": json.Number("12345678901234567890"), "small": json.Number("0.1")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
}

// TestEnvelopeFieldsFollowEmbedding checks jsonFields against encoding/json's own matching: an
// embedded struct's fields are the outer one's, a tag's name wins over the field's, and "-" and
// unexported fields are none.
func TestEnvelopeFieldsFollowEmbedding(t *testing.T) {
	type inner struct {
		Region string `json:"region"`
		Shadow string `json:"shadow"`
	}
	type outer struct {
		inner
		Name    string `json:"name,omitempty"`
		Shadow  int    `json:"shadow"`
		Plain   string
		Skipped string `json:"-"`
		hidden  string
	}
	got := map[string]string{}
	for name, ft := range jsonFields(reflect.TypeFor[outer]()) {
		got[name] = ft.String()
	}
	want := map[string]string{"region": "string", "name": "string", "shadow": "int", "Plain": "string"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jsonFields(outer) (-want +got):\n%s", diff)
	}
}
