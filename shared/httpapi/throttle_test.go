package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/ratelimit"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func TestRequestCost(t *testing.T) {
	two := tenancy.Tenant{Namespaces: []string{"team-a", "team-b"}}
	three := tenancy.Tenant{Namespaces: []string{"a", "b", "c"}}
	tests := []struct {
		pattern string
		query   string
		tenant  tenancy.Tenant
		regions int
		want    int
	}{
		{"GET /api/v1/jobs/{id}", "", three, 2, costRequest},
		{"POST /api/v1/jobs", "", three, 2, costRequest},
		{"GET /api/v1/jobs", "", two, 2, 2 * costPerNamespace},
		{"GET /api/v1/jobs", "", three, 2, 3 * costPerNamespace},
		{"GET /api/v1/jobs", "namespace=b", three, 2, costRequest},
		{"GET /api/v1/jobs", "", tenancy.Tenant{}, 2, costRequest},
		{"POST /api/v1/jobs/bulk-delete", "", three, 2, 3 * costPerNamespace},
		{"GET /api/v1/queue/stats", "", three, 2, 2 * costStatsPerRegion},
		{"GET /api/v1/queue/stats", "", three, 1, costStatsPerRegion},
		{"GET /api/v1/queue/stats", "", three, 0, costRequest},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		if got := requestCost(tt.pattern, q, tt.tenant, tt.regions); got != tt.want {
			t.Errorf("requestCost(%q, %q, %d namespaces, %d regions) = %d, want %d", tt.pattern, tt.query, len(tt.tenant.Namespaces), tt.regions, got, tt.want)
		}
	}
}

// A costly route that is renamed or dropped must take its cost along.
func TestCostlyRoutesAreRoutes(t *testing.T) {
	a := newAPI(Deps{})
	for pattern := range costly {
		if !slices.ContainsFunc(a.routes, func(r Route) bool { return r.Method+" "+r.Path == pattern && !r.Open }) {
			t.Errorf("costly names %q, which is not an authenticated route in register()", pattern)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for wait, want := range map[time.Duration]int{
		0: 1, time.Millisecond: 1, time.Second: 1, time.Second + time.Nanosecond: 2, 9500 * time.Millisecond: 10,
	} {
		if got := retryAfter(wait); got != want {
			t.Errorf("retryAfter(%s) = %d, want %d", wait, got, want)
		}
	}
}

// Open routes and requests that fail auth never reach a bucket: with a budget of one request,
// many of each answer as they always did, and no bucket is kept.
func TestThrottleLeavesOpenAndUnauthenticatedAlone(t *testing.T) {
	a := newAPI(Deps{Rate: ratelimit.Limit{Rate: 0.001, Burst: 1}})
	h := a.outermost(a.mux)
	for _, tt := range []struct {
		target string
		header string
		want   int
	}{
		{"/healthz", "", http.StatusOK},
		{"/openapi.json", "", http.StatusOK},
		{"/api/v1/jobs", "", http.StatusUnauthorized},
		{"/api/v1/queue/stats", "Basic eDp5", http.StatusUnauthorized},
	} {
		for i := range 20 {
			req := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("GET %s (request %d) = %d, want %d", tt.target, i+1, rec.Code, tt.want)
			}
		}
	}
	if n := a.buckets.Len(); n != 0 {
		t.Errorf("after open and unauthenticated requests, %d buckets kept, want none", n)
	}
}

// Every route a principal calls may answer 429, and /openapi.json must say so: a route that makes a
// job with the response that also says queue_full (its tenant's queued jobs at their cap).
func TestOpenAPIDescribesThrottling(t *testing.T) {
	makesJobs := map[string]bool{
		"POST /api/v1/jobs": true, "POST /api/v1/manifests": true,
		"POST /api/v1/templates/{name}/jobs": true, "POST /api/v1/jobs/{id}/retry": true,
	}
	var spec struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Ref string `json:"$ref"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openAPISpec, &spec); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	for _, r := range newAPI(Deps{}).routes {
		if r.Open || r.Path == "/api/v1/hosts/{host}/register" {
			continue
		}
		op := spec.Paths[r.Path][strings.ToLower(r.Method)]
		want := "#/components/responses/Throttled"
		if makesJobs[r.Method+" "+r.Path] {
			want = "#/components/responses/QueueFull"
		}
		if got := op.Responses["429"].Ref; got != want {
			t.Errorf("openapi.json: %s %s answers 429 with %q, want %s", r.Method, r.Path, got, want)
		}
	}
}
