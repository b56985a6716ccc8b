package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/console"
)

// TestOpenAPIMatchesRoutes holds /openapi.json in step with register(): every registered route is
// described, every described operation is registered, and exactly the open routes need no security.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var spec struct {
		Paths map[string]map[string]struct {
			Security *[]any `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openAPISpec, &spec); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	var described, open []string
	for path, ops := range spec.Paths {
		for method, op := range ops {
			key := strings.ToUpper(method) + " " + path
			described = append(described, key)
			if op.Security != nil && len(*op.Security) == 0 {
				open = append(open, key)
			}
		}
	}
	var registered, registeredOpen []string
	for _, r := range newAPI(Deps{}).routes {
		key := r.Method + " " + r.Path
		registered = append(registered, key)
		if r.Open {
			registeredOpen = append(registeredOpen, key)
		}
	}
	for _, s := range [][]string{described, open, registered, registeredOpen} {
		slices.Sort(s)
	}
	if diff := cmp.Diff(registered, described); diff != "" {
		t.Errorf("routes in register() (-) vs operations in openapi.json (+):\n%s", diff)
	}
	if diff := cmp.Diff(registeredOpen, open); diff != "" {
		t.Errorf("open routes (-) vs operations with empty security in openapi.json (+):\n%s", diff)
	}
	if !slices.Contains(registeredOpen, "GET /healthz") || !slices.Contains(registeredOpen, "GET /openapi.json") || len(registeredOpen) != 2 {
		t.Errorf("open routes = %v, want exactly GET /healthz and GET /openapi.json (DESIGN.md)", registeredOpen)
	}
}

// TestConsoleAtRoot: the console's page and files answer at / and under /console/ with its CSP,
// while the API's routes and errors are as they were.
func TestConsoleAtRoot(t *testing.T) {
	h := New(Deps{})
	serve := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec
	}
	for _, target := range []string{"/", "/console/app.js", "/console/style.css"} {
		rec := serve(http.MethodGet, target)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Security-Policy") != console.CSP {
			t.Errorf("GET %s = %d, CSP %q", target, rec.Code, rec.Header().Get("Content-Security-Policy"))
		}
		if rec.Header().Get(headerRequestID) == "" {
			t.Errorf("GET %s: no request id", target)
		}
	}
	if rec := serve(http.MethodGet, "/"); !strings.Contains(rec.Body.String(), `src="/console/app.js"`) {
		t.Errorf("GET / is not the console's page: %.200s", rec.Body.String())
	}
	for _, c := range []struct {
		method, target string
		code           int
	}{
		{http.MethodPost, "/", http.StatusNotFound},
		{http.MethodGet, "/index.html", http.StatusNotFound},
		{http.MethodGet, "/api/v1/jobs", http.StatusUnauthorized},
		{http.MethodGet, "/api/v1/nothing", http.StatusNotFound},
	} {
		rec := serve(c.method, c.target)
		if rec.Code != c.code {
			t.Errorf("%s %s = %d, want %d", c.method, c.target, rec.Code, c.code)
		}
		if rec.Header().Get("Content-Security-Policy") != "" {
			t.Errorf("%s %s: the API's answers carry the console's CSP", c.method, c.target)
		}
		if !strings.Contains(rec.Body.String(), `"request_id"`) {
			t.Errorf("%s %s: not the API's error: %s", c.method, c.target, rec.Body.String())
		}
	}
}

// TestOpenAPIServesTheFile: GET /openapi.json answers openapi.json's bytes as they are, so the
// file scripts/test.sh lints (shared/httpapi/redocly.yaml) is the contract clients read.
func TestOpenAPIServesTheFile(t *testing.T) {
	file, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	a := newAPI(Deps{})
	rec := httptest.NewRecorder()
	a.outermost(a.mux).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json = %d, want 200", rec.Code)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("GET /openapi.json Content-Type = %q, want application/json", got)
	}
	if !bytes.Equal(rec.Body.Bytes(), file) {
		t.Errorf("GET /openapi.json served %d bytes that differ from openapi.json's %d", rec.Body.Len(), len(file))
	}
}
