package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/metrics"
)

// TestRequestsAreCounted: each request adds one to APIRequests under the route pattern that
// served it and its status class; a path no route has counts as "unmatched", whatever the caller
// wrote, so no caller can mint dimension values.
func TestRequestsAreCounted(t *testing.T) {
	var log bytes.Buffer
	api := served(t, httpapi.Deps{Metrics: metrics.NewRecorder(&log, time.Now)})
	for _, target := range []string{"/healthz", "/api/v1/jobs/job_1", "/no/such/path/8f3a", "/another-invented-path"} {
		api.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
	}
	points, err := metrics.Read(log.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]string]float64{}
	for _, p := range points {
		if p.Metric.Name != metrics.APIRequests.Name {
			t.Errorf("a request recorded %s", p.Metric.Name)
		}
		got[[2]string{p.Dimensions[metrics.DimRoute], p.Dimensions[metrics.DimStatusClass]}] += p.Values[0]
	}
	want := map[[2]string]float64{
		{"GET /healthz", "2xx"}:          1,
		{"GET /api/v1/jobs/{id}", "4xx"}: 1, // no credentials
		{"unmatched", "4xx"}:             2,
	}
	if len(got) != len(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("APIRequests{%s, %s} = %v, want %v (all: %v)", k[0], k[1], got[k], n, got)
		}
	}
}
