package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestQueueCapHostileTenant: tenant a, whose queued jobs the census counts at its cap (100, the
// deployment's), is refused 429 queue_full on every route that makes a job (a submission, a
// manifests submission, a template's job, a retry), each saying its count, its cap and what to do,
// with Retry-After; tenant b submits at the same moment as ever. A tenant whose record raises its
// cap, or sets none, submits past the deployment's. A replay of a key that made a's job before the
// flood is answered with that job.
func TestQueueCapHostileTenant(t *testing.T) {
	var skew atomic.Int64 // the API's clock, ahead of the wall's by this much
	thousand, none := 1000, 0
	st, keys, js := limitStackWith(t, func(d *httpapi.Deps) {
		d.MaxQueuedPerTenant = 100
		d.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	},
		tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}},
		tenancy.Tenant{Name: "b", Namespaces: []string{"team-b"}},
		tenancy.Tenant{Name: "big", Namespaces: []string{"team-c"}, MaxQueued: &thousand},
		tenancy.Tenant{Name: "free", Namespaces: []string{"team-d"}, MaxQueued: &none},
	)
	ctx := context.Background()
	job := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"})
	idem := map[string]string{"Idempotency-Key": "before-the-flood"}
	status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["a"], "application/json", job, idem)
	if status != 202 {
		t.Fatalf("a's first POST /api/v1/jobs = %d %v, want 202", status, out)
	}
	firstID := out["job"].(map[string]any)["id"].(string)
	create := mustJSON(map[string]any{"name": "train", "manifest": templateJob(), "parameters": map[string]any{"tag": "1.36", "workers": 1, "message": "hi"}})
	if status, out := st.do(t, 0, "POST", "/api/v1/templates", keys["a"], "application/json", create, nil); status != 201 {
		t.Fatalf("POST /api/v1/templates = %d %v, want 201", status, out)
	}

	// The census as a's flood left it: 10,000 of b's would not count for a, nor a's for b.
	census := dynamo.RegionCensus{Region: "us-east-1", At: time.Now(), Queued: map[string]dynamo.Queued{
		"a": {Batch: 97, LongRunning: 1}, "b": {Batch: 3}, "big": {Batch: 500}, "free": {Batch: 10_000}},
		RoamingAll: map[string]int{"a": 2}}
	if err := js.PutCensus(ctx, census); err != nil {
		t.Fatal(err)
	}
	loadRoaming(t, js, "a")          // so the roaming queue holds a job, and its census counts
	skew.Add(int64(6 * time.Second)) // past what the API kept of the censuses before

	for _, call := range []struct{ what, path, body string }{
		{"POST /api/v1/jobs", "/api/v1/jobs", job},
		{"POST /api/v1/manifests", "/api/v1/manifests", mustJSON(map[string]any{"manifests": []any{restrictedJob(nil)}, "namespace": "team-a", "region": "us-east-1"})},
		{"POST /api/v1/templates/train/jobs", "/api/v1/templates/train/jobs", mustJSON(map[string]any{"name": "train-1", "namespace": "team-a", "region": "us-east-1", "parameters": map[string]any{"tag": "1.36", "workers": 1, "message": "hi"}})},
		{"a retry", "/api/v1/jobs/" + firstID + "/retry", ""},
	} {
		rec := serve(st, "POST", call.path, keys["a"], call.body, nil)
		var body map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != 429 || body["error"] != "queue_full" {
			t.Errorf("%s as a at its cap = %d %v, want 429 queue_full", call.what, rec.Code, body)
			continue
		}
		detail, _ := body["detail"].(string)
		for _, say := range []string{"tenant a has 100 jobs queued and its cap is 100", "Wait for its queue to drain", "--max-queued"} {
			if !strings.Contains(detail, say) {
				t.Errorf("%s as a: detail %q does not say %q", call.what, detail, say)
			}
		}
		if got := rec.Header().Get("Retry-After"); got != "60" {
			t.Errorf("%s as a: Retry-After %q, want 60", call.what, got)
		}
	}

	// b, at the same moment, is let through; so are tenants whose records lift the cap.
	for tenant, ns := range map[string]string{"b": "team-b", "big": "team-c", "free": "team-d"} {
		body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": ns})
		if status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys[tenant], "application/json", body, nil); status != 202 {
			t.Errorf("POST /api/v1/jobs as %s while a is at its cap = %d %v, want 202", tenant, status, out)
		}
	}

	// An array counts what it lets into the queue at once: its parallelism. b holds 3 of its 100.
	array := func(size, parallelism int) string {
		return mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-b", "array": map[string]any{"size": size, "parallelism": parallelism}})
	}
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["b"], "application/json", array(500, 98), nil); status != 429 {
		t.Errorf("b's array letting 98 in beside its 3 = %d %v, want 429 past its cap of 100", status, out)
	}
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["b"], "application/json", array(500, 101), nil); status != 400 || !strings.Contains(mustJSON(out["fields"]), "array.parallelism") {
		t.Errorf("b's array letting 101 in = %d %v, want 400 naming array.parallelism", status, out)
	}
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["b"], "application/json", array(500, 90), nil); status != 202 {
		t.Errorf("b's array letting 90 in = %d %v, want 202", status, out)
	}
	// A workflow counts the jobs its start lets in: a, at its cap, is refused one.
	wf := mustJSON(map[string]any{"name": "w", "jobs": []any{map[string]any{"name": "x", "manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"}}})
	if rec := serve(st, "POST", "/api/v1/workflows", keys["a"], wf, nil); rec.Code != 429 {
		t.Errorf("a's workflow at its cap = %d %s, want 429", rec.Code, rec.Body)
	}

	// The key that made a's job before the flood still answers that job.
	status, out = st.do(t, 0, "POST", "/api/v1/jobs", keys["a"], "application/json", job, idem)
	if got, _ := out["job"].(map[string]any); status != 200 || got["id"] != firstID {
		t.Errorf("a's POST /api/v1/jobs replaying its key at its cap = %d %v, want 200 with %s", status, out, firstID)
	}
}

// TestQueueCapCountsACensus: with a cap of 2, a tenant's two jobs are let through, and once a
// drain's census has counted them the third is refused; a census that counts them gone (cancelled)
// lets the tenant submit again.
func TestQueueCapCountsACensus(t *testing.T) {
	var skew atomic.Int64
	two := 2
	st, keys, js := limitStackWith(t, func(d *httpapi.Deps) {
		d.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	}, tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}, MaxQueued: &two})
	job := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"})
	var ids []string
	for i := range 2 {
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["a"], "application/json", job, nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs %d of 2 = %d %v, want 202", i+1, status, out)
		}
		ids = append(ids, out["job"].(map[string]any)["id"].(string))
	}
	takeCensus(t, js, st.leases, "us-east-1")
	skew.Add(int64(6 * time.Second))
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["a"], "application/json", job, nil); status != 429 || out["error"] != "queue_full" {
		t.Errorf("POST /api/v1/jobs past a cap of 2 the census counted = %d %v, want 429 queue_full", status, out)
	}
	if status, out := st.do(t, 0, "DELETE", "/api/v1/jobs/"+ids[0], keys["a"], "", "", nil); status != 200 {
		t.Fatalf("DELETE %s = %d %v", ids[0], status, out)
	}
	takeCensus(t, js, st.leases, "us-east-1") // a drain of its own process would wait a minute; this one is new
	skew.Add(int64(6 * time.Second))
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["a"], "application/json", job, nil); status != 202 {
		t.Errorf("POST /api/v1/jobs after a census counted one of two gone = %d %v, want 202", status, out)
	}
}

// loadRoaming stores a queued job of tenant's that may run in two regions.
func loadRoaming(t *testing.T, js *dynamo.JobStore, tenant string) {
	t.Helper()
	j := jobs.New(fmt.Sprintf("job-roam-%s-%d", tenant, time.Now().UnixNano()), tenant, "team-"+tenant, "", 50, nil,
		[]map[string]any{{"kind": "Job", "metadata": map[string]any{"name": "roam"}}}, time.Now())
	j.Regions = []string{"us-east-1", "us-west-2"}
	if err := js.Load(context.Background(), []jobs.Job{j}); err != nil {
		t.Fatal(err)
	}
}

// serve sends one request to st's first API process and answers the recorded response, headers
// and all.
func serve(st stack, method, path, key, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	st.apis[0].ServeHTTP(rec, req)
	return rec
}
