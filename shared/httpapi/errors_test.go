package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// serveOnce answers one request with an API that has no stores: enough for every answer that is
// decided before a store is asked.
func serveOnce(t *testing.T, method, target, body string, header map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	New(Deps{}).ServeHTTP(rec, req)
	resp := rec.Result()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v", method, target, err)
	}
	return resp, out
}

func TestErrorAnswers(t *testing.T) {
	tests := []struct {
		name, method, target string
		header               map[string]string
		wantStatus           int
		wantCode             string
		wantAllow            string
	}{
		{name: "no credentials", method: "GET", target: "/api/v1/jobs", wantStatus: 401, wantCode: "unauthenticated"},
		{name: "not bearer", method: "GET", target: "/api/v1/jobs", header: map[string]string{"Authorization": "Basic Zm9vOmJhcg=="}, wantStatus: 401, wantCode: "unauthenticated"},
		{name: "empty bearer", method: "GET", target: "/api/v1/jobs", header: map[string]string{"Authorization": "Bearer  "}, wantStatus: 401, wantCode: "unauthenticated"},
		{name: "unknown route", method: "GET", target: "/api/v1/nope", wantStatus: 404, wantCode: "not_found"},
		{name: "wrong method", method: "DELETE", target: "/healthz", wantStatus: 405, wantCode: "method_not_allowed", wantAllow: "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := serveOnce(t, tt.method, tt.target, "", tt.header)
			if resp.StatusCode != tt.wantStatus || body["error"] != tt.wantCode {
				t.Errorf("%s %s = %d %v, want %d %s", tt.method, tt.target, resp.StatusCode, body["error"], tt.wantStatus, tt.wantCode)
			}
			id := resp.Header.Get("X-Request-Id")
			if id == "" || body["request_id"] != id {
				t.Errorf("%s %s: X-Request-Id %q, body request_id %v; want the same non-empty id", tt.method, tt.target, id, body["request_id"])
			}
			if d, _ := body["detail"].(string); d == "" {
				t.Errorf("%s %s: no detail saying what to fix", tt.method, tt.target)
			}
			if got := resp.Header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("%s %s: Allow = %q, want %q", tt.method, tt.target, got, tt.wantAllow)
			}
		})
	}
}

func TestRequestIDKeptOrMade(t *testing.T) {
	resp, _ := serveOnce(t, "GET", "/healthz", "", map[string]string{"X-Request-Id": "from-the-gateway-1"})
	if got := resp.Header.Get("X-Request-Id"); got != "from-the-gateway-1" {
		t.Errorf("a well-formed incoming id: X-Request-Id = %q, want it kept", got)
	}
	resp, _ = serveOnce(t, "GET", "/healthz", "", map[string]string{"X-Request-Id": "bad id\nwith newline"})
	if got := resp.Header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
		t.Errorf("a malformed incoming id: X-Request-Id = %q, want a fresh req_ id", got)
	}
}

func TestPanicIsA500WithOnlyTheRequestID(t *testing.T) {
	a := newAPI(Deps{})
	a.mux.HandleFunc("GET /boom", a.serve(func(http.ResponseWriter, *http.Request) error { panic("secret cause") }))
	rec := httptest.NewRecorder()
	a.outermost(a.mux).ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
	var body map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	id := rec.Header().Get("X-Request-Id")
	if rec.Code != 500 || body["error"] != "internal" || !strings.Contains(body["detail"].(string), id) {
		t.Errorf("panicking handler answered %d %v, want 500 internal naming request id %s", rec.Code, body, id)
	}
	if strings.Contains(rec.Body.String(), "secret cause") {
		t.Errorf("the 500 leaks its cause to the client: %s", rec.Body.String())
	}
}

func TestDecodeJSON(t *testing.T) {
	type body struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	tests := []struct {
		name, in, contentType string
		wantStatus            int
		wantFields            []FieldProblem
	}{
		{name: "good", in: `{"name":"a","count":1}`, wantStatus: 0},
		{name: "unknown field", in: `{"name":"a","colour":"red"}`, wantStatus: 400, wantFields: []FieldProblem{{Field: "colour", Problem: "unknown field; remove it"}}},
		{name: "wrong type", in: `{"count":"three"}`, wantStatus: 400, wantFields: []FieldProblem{{Field: "count", Problem: "must be int, not string"}}},
		{name: "trailing data", in: `{"name":"a"} {"name":"b"}`, wantStatus: 400},
		{name: "trailing garbage", in: `{"name":"a"}x`, wantStatus: 400},
		{name: "empty", in: ``, wantStatus: 400},
		{name: "cut short", in: `{"name":`, wantStatus: 400},
		{name: "not json", in: `name=a`, wantStatus: 400},
		{name: "too large", in: `{"name":"` + strings.Repeat("a", maxJSONBody) + `"}`, wantStatus: 413},
		{name: "yaml content type", in: `{}`, contentType: "application/yaml", wantStatus: 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/", strings.NewReader(tt.in))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			var b body
			err := decodeJSON(httptest.NewRecorder(), req, &b)
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("decodeJSON(%q) = %v, want nil", tt.in, err)
				}
				return
			}
			apiErr, ok := err.(*Error)
			if !ok {
				t.Fatalf("decodeJSON(%.40q) = %v, want an *Error", tt.in, err)
			}
			if apiErr.Status() != tt.wantStatus {
				t.Errorf("decodeJSON(%.40q) status = %d (%s), want %d", tt.in, apiErr.Status(), apiErr.Detail, tt.wantStatus)
			}
			if tt.wantFields != nil {
				if diff := cmp.Diff(tt.wantFields, apiErr.Fields); diff != "" {
					t.Errorf("decodeJSON(%q) fields (-want +got):\n%s", tt.in, diff)
				}
			}
		})
	}
}
