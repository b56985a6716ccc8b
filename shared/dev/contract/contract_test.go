package contract

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/httpapi"
)

// TestCheck: Check allows what openapi.json describes and names the operation and the problem in
// what it does not.
func TestCheck(t *testing.T) {
	d, err := Served()
	if err != nil {
		t.Fatal(err)
	}
	job := `{"job":{"id":"j","tenant":"t","namespace":"a","region":"","priority":50,"status":"queued",` +
		`"status_history":[{"status":"queued","at":"2026-12-07T10:00:00Z"}],"created_at":"2026-12-07T10:00:00Z","updated_at":"2026-12-07T10:00:00Z"}}`
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`
	notFound := `{"error":"not_found","detail":"no job x","request_id":"req_1"}`
	tests := []struct {
		name           string
		method, target string
		header         http.Header
		body           string
		status         int
		answer         string
		want           string // a part of the error; "" for none
	}{
		{"health as described", "GET", "/healthz", nil, "", 200, `{"status":"ok"}`, ""},
		{"health's field renamed", "GET", "/healthz", nil, "", 200, `{"state":"ok"}`, `healthz (GET /healthz) answered 200`},
		{"a field the contract does not name", "GET", "/healthz", nil, "", 200, `{"status":"ok","uptime":3}`, `uptime`},
		{"an error with a field the contract does not name", "GET", "/api/v1/jobs/x", nil, "", 404,
			`{"error":"not_found","detail":"no job x","request_id":"req_1","hint":"x"}`, `hint`},
		{"a webhook with its secret (an allOf)", "POST", "/api/v1/webhooks", jsonHeader(), `{"url":"https://h.example/x","events":["job.failed"]}`, 201,
			webhook(`,"secret":"whsec_x"`), ""},
		{"a webhook with its secret and one field more", "POST", "/api/v1/webhooks", jsonHeader(), `{"url":"https://h.example/x","events":["job.failed"]}`, 201,
			webhook(`,"secret":"whsec_x","signing_key":"k"`), "signing_key"},
		{"a webhook without its secret", "POST", "/api/v1/webhooks", jsonHeader(), `{"url":"https://h.example/x","events":["job.failed"]}`, 201,
			webhook(``), "secret"},
		{"an error as described", "GET", "/api/v1/jobs/x", nil, "", 404, notFound, ""},
		{"an error's detail renamed", "GET", "/api/v1/jobs/x", nil, "", 404,
			`{"error":"not_found","message":"no job x","request_id":"req_1"}`, `"detail"`},
		{"an error code the contract does not have", "GET", "/api/v1/jobs/x", nil, "", 404,
			`{"error":"missing","detail":"no job x","request_id":"req_1"}`, "getJob"},
		{"a status the operation does not declare", "POST", "/api/v1/jobs/x/retry", nil, "", 413,
			`{"error":"too_large","detail":"x","request_id":"req_1"}`, "retryJob (POST /api/v1/jobs/x/retry) answered 413"},
		{"a refused request refused", "POST", "/api/v1/jobs", jsonHeader(), `{"region":"us-east-1"}`, 400,
			`{"error":"invalid_request","detail":"x","request_id":"req_1"}`, ""},
		{"an idempotency key the contract refuses, refused", "POST", "/api/v1/jobs/x/retry", http.Header{"Idempotency-Key": {strings.Repeat("k", 300)}}, "", 400,
			`{"error":"invalid_request","detail":"x","request_id":"req_1"}`, ""},
		{"an idempotency key with a space, accepted", "POST", "/api/v1/jobs/x/retry", http.Header{"Idempotency-Key": {"a b"}}, "", 202,
			`{}`, "to a request the contract refuses"},
		{"regions instead of region", "POST", "/api/v1/jobs", jsonHeader(), `{"manifest":` + pod + `,"namespace":"a","regions":["us-east-1"]}`, 202,
			job, ""},
		{"neither region nor regions, accepted", "POST", "/api/v1/jobs", jsonHeader(), `{"manifest":` + pod + `,"namespace":"a"}`, 202,
			job, "to a request the contract refuses"},
		{"a request the contract refuses, accepted", "POST", "/api/v1/templates", jsonHeader(), `{"name":"t"}`, 201,
			`{}`, "answered 201 to a request the contract refuses"},
		{"a route the contract lacks", "GET", "/api/v1/nowhere", nil, "", 200, `{}`, "the contract has no such operation"},
		{"a route the contract lacks, not found", "GET", "/api/v1/nowhere", nil, "", 404, notFound, ""},
		{"the console's page", "GET", "/", nil, "", 200, "<html></html>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			for k, v := range tt.header {
				req.Header[k] = v
			}
			h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_1"}}
			err := d.Check(Exchange{Request: req, Body: []byte(tt.body), Status: tt.status, Header: h, Answer: []byte(tt.answer)})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check(%s %s → %d) = %v, want no error", tt.method, tt.target, tt.status, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check(%s %s → %d) = %v, want an error containing %q", tt.method, tt.target, tt.status, err, tt.want)
			}
		})
	}
}

// webhook is a registered webhook's answer with more fields at its end.
func webhook(more string) string {
	return `{"id":"wh_1","url":"https://h.example/x","events":["job.failed"],"created_at":"2026-12-07T10:00:00Z",` +
		`"updated_at":"2026-12-07T10:00:00Z","disabled":false` + more + `}`
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }

// TestWrapTheAPI: the API's own answers pass through Wrap unchanged and pass; an answer broken on
// purpose in front of it is reported.
func TestWrapTheAPI(t *testing.T) {
	d, err := Served()
	if err != nil {
		t.Fatal(err)
	}
	var failures []error
	api := Wrap(d, httpapi.New(httpapi.Deps{}), func(err error) { failures = append(failures, err) })
	for _, target := range []string{"/healthz", "/openapi.json", "/api/v1/jobs", "/api/v1/nowhere", "/"} {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code == 0 || rec.Body.Len() == 0 {
			t.Errorf("GET %s through Wrap = %d with %d bytes, want the API's answer", target, rec.Code, rec.Body.Len())
		}
	}
	if len(failures) != 0 {
		t.Errorf("the API's own answers failed the contract: %v", failures)
	}

	broken := Wrap(d, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"fine"}`))
	}), func(err error) { failures = append(failures, err) })
	broken.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	if len(failures) != 1 || !strings.Contains(failures[0].Error(), "healthz") {
		t.Errorf("a health answer of status fine gave %v, want one failure naming healthz", failures)
	}
}
