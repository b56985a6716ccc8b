package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// TestListByNameStaysInTheTenant: two tenants each have a job named train-1; a name filter, exact
// or by prefix, in any order, lists only the asking tenant's, and a name that is no object name is
// a 400 naming the filter.
func TestListByNameStaysInTheTenant(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	keyA := memberKey(t, tenants, "ml", "acme", "team-a")
	keyB := memberKey(t, tenants, "rival", "rival", "team-b")
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: store, Regions: []string{"us-east-1"}})
	stored := func(tenant, ns, name string) string {
		t.Helper()
		now := time.Now()
		j := jobs.New("job-"+tenant+"-"+name, tenant, ns, "us-east-1", 50, nil, []map[string]any{
			{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name}},
		}, now)
		if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	own := stored("ml", "team-a", "train-1")
	theirs := stored("rival", "team-b", "train-1")
	list := func(key, query string) (int, []string) {
		req := httptest.NewRequest("GET", "/api/v1/jobs?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var out struct{ Items []struct{ ID, Name string } }
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		var ids []string
		for _, j := range out.Items {
			ids = append(ids, j.ID)
		}
		return rec.Code, ids
	}
	for _, q := range []string{"name=train-1", "name=train-*", "name=train-*&sort=created_at:asc", "name=train-1&sort=priority:asc"} {
		if code, ids := list(keyA, q); code != 200 || !slices.Equal(ids, []string{own}) {
			t.Errorf("tenant ml's ?%s = %d %v; want only its own %s", q, code, ids, own)
		}
		if code, ids := list(keyB, q); code != 200 || !slices.Equal(ids, []string{theirs}) {
			t.Errorf("tenant rival's ?%s = %d %v; want only its own %s", q, code, ids, theirs)
		}
	}
	if code, _ := list(keyA, "name=Train_1"); code != 400 {
		t.Errorf("?name=Train_1 = %d, want 400", code)
	}
}
