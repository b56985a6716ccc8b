package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"

	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/wake"
)

// TestJobDecisions: a job's owner reads its decisions newest first, as many as it asks; another
// tenant asking for them gets a 404, as for the job itself, and a bad limit is a 400 naming it.
func TestJobDecisions(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	key := memberKey(t, tenants, "ml", "ml", "team-a")
	otherKey := memberKey(t, tenants, "other", "other", "elsewhere")
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: store, Policy: checker, Regions: []string{"us-east-1"}})
	now := time.Now().UTC()
	j := jobs.New("job-trail", "ml", "team-a", "us-east-1", 50, nil, []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "trail"}}}, now)
	if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	gate := &jobs.SpotGate{InstanceType: "g5.xlarge", MaxPrice: 0.5, CheckedAt: now}
	if err := store.KeepDecisions(ctx, []jobs.JobDecision{
		{JobID: j.ID, Decision: jobs.Decision{At: now, Kind: jobs.DecisionWaiting, Reason: "flavor_full", Resource: "nvidia.com/gpu", Price: gate}},
		{JobID: j.ID, Decision: jobs.Decision{At: now.Add(time.Second), Kind: jobs.DecisionRoomReclaimed, Reason: "reclaimed", Flavor: "gpu", Evicted: 2,
			Quota: map[string]jobs.QuotaStanding{"nvidia.com/gpu": {Held: "2", Nominal: "4"}}}},
		{JobID: j.ID, Decision: jobs.Decision{At: now.Add(2 * time.Second), Kind: jobs.DecisionAdmitted, Region: "us-east-1", Flavor: "gpu"}},
	}); err != nil {
		t.Fatal(err)
	}
	get := func(key, query string) (int, map[string]any) {
		req := httptest.NewRequest("GET", "/api/v1/jobs/"+j.ID+"/decisions"+query, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	status, out := get(key, "")
	items, _ := out["items"].([]any)
	if status != http.StatusOK || len(items) != 3 {
		t.Fatalf("GET decisions = %d %v; want the three", status, out)
	}
	var kinds []string
	for _, it := range items {
		kinds = append(kinds, it.(map[string]any)["kind"].(string))
	}
	if kinds[0] != "admitted" || kinds[1] != "room_reclaimed" || kinds[2] != "waiting" {
		t.Errorf("kinds %v; want newest first: admitted, room_reclaimed, waiting", kinds)
	}
	if status, out := get(key, "?limit=1"); status != http.StatusOK || len(out["items"].([]any)) != 1 {
		t.Errorf("GET decisions?limit=1 = %d %v; want the newest alone", status, out)
	}
	if status, out := get(key, "?limit=0"); status != http.StatusBadRequest || !jsonContains(out, "limit") {
		t.Errorf("GET decisions?limit=0 = %d %v; want 400 naming limit", status, out)
	}
	if status, out := get(otherKey, ""); status != http.StatusNotFound || out["items"] != nil {
		t.Errorf("another tenant's GET decisions = %d %v; want 404 and nothing of them", status, out)
	}
}

func jsonContains(v any, s string) bool {
	b, _ := json.Marshal(v)
	return strings.Contains(string(b), s)
}

// TestMemoryRaiseBoundAtSubmission: a hostile tenant submits a pod of 2Gi under an 8Gi cap on a
// pod's memory, with a rule raising memory 4× after OOMKilled attempts: the job records that its
// memory may be raised at most 4× (8Gi), what the policy allows; the raise cannot pass the cap.
func TestMemoryRaiseBoundAtSubmission(t *testing.T) {
	tables, db := testenv.Tables(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	key := memberKey(t, tenants, "ml", "ml", "team-a")
	mem := resource.MustParse("8Gi")
	checker, err := policy.NewChecker(policy.Config{MaxMemory: &mem})
	if err != nil {
		t.Fatal(err)
	}
	queueURL, q := testenv.Queue(t, "dispatch")
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: store, Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1"}})
	job := restrictedJob(func(pod map[string]any) {
		container(pod)["resources"] = map[string]any{"requests": map[string]any{"memory": "2Gi"}, "limits": map[string]any{"memory": "2Gi"}}
	})
	body := mustJSON(map[string]any{"manifest": job, "namespace": "team-a", "region": "us-east-1",
		"retry": map[string]any{"attempts": 3, "rules": []any{map[string]any{"on": []any{"OOMKilled"}, "action": "retry", "memory_factor": 4}}}})
	req := httptest.NewRequest("POST", "/api/v1/jobs", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	var out struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); rec.Code != http.StatusAccepted || err != nil {
		t.Fatalf("POST /api/v1/jobs = %d %s", rec.Code, rec.Body)
	}
	j, err := store.Job(context.Background(), out.Job.ID)
	if err != nil || j.MemoryFactorMax != 4 {
		t.Errorf("the job's memory may be raised %v× (%v); want 4× (8Gi of 2Gi)", j.MemoryFactorMax, err)
	}
}
