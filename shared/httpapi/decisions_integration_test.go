package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"

	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/policy"
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
