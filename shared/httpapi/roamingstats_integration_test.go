package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dispatch"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/wake"
)

// roamRegions are the regions of TestQueueStatsRoaming's API.
var roamRegions = []string{"eu-west-1", "us-east-1", "us-west-2"}

// TestQueueStatsRoaming: jobs that may run in several regions and wait for one show in the queue
// stats as each region's drains last counted them: in the roaming figure of every region they
// allow, once in the total, and in no region's counts. Tenant a's figures hold only a's jobs,
// whatever tenant b queues, and b's only b's; an admin sees only its own tenant's (none). Once the
// roaming queue is empty every figure is 0 at once, before any drain counts again.
func TestQueueStatsRoaming(t *testing.T) {
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	tenants := dynamo.NewTenantStore(db, tables.Control)
	keys := map[string]string{}
	for _, tn := range []tenancy.Tenant{
		{Name: "a", Namespaces: []string{"team-a"}, Role: tenancy.RoleMember},
		{Name: "b", Namespaces: []string{"team-b"}, Role: tenancy.RoleMember},
		{Name: "boss", Namespaces: []string{"ops"}, Role: tenancy.RoleAdmin, Operator: true},
	} {
		tn.Org, tn.CreatedAt = "acme", time.Now()
		if err := tenants.PutTenant(context.Background(), tn); err != nil {
			t.Fatal(err)
		}
		keys[tn.Name], _ = tenancy.NewKey()
		if err := tenants.AddKey(context.Background(), tn.Name, keys[tn.Name], time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	js := dynamo.NewJobStore(db, tables)
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: js, Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, queueURL), Regions: roamRegions})
	st := stack{apis: [2]http.Handler{api, api}, queueURL: queueURL, sqs: q}

	var aIDs []string
	submit := func(tenant, ns string, where map[string]any) {
		t.Helper()
		body := map[string]any{"manifest": restrictedJob(nil), "namespace": ns}
		for k, v := range where {
			body[k] = v
		}
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys[tenant], "application/json", mustJSON(body), nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs as %s = %d %v", tenant, status, out)
		}
		if tenant == "a" {
			aIDs = append(aIDs, out["job"].(map[string]any)["id"].(string))
		}
	}
	eastWest := map[string]any{"regions": []string{"us-east-1", "us-west-2"}}
	submit("a", "team-a", eastWest)
	submit("a", "team-a", eastWest)
	submit("a", "team-a", map[string]any{"regions": []string{"us-east-1", "eu-west-1"}})
	submit("a", "team-a", map[string]any{"region": "us-east-1"})
	for range 5 {
		submit("b", "team-b", eastWest)
	}

	// Each region's drain takes its census; with no room, it dispatches nothing.
	clusters := map[string]string{}
	for _, r := range roamRegions {
		clusters[r] = "none"
	}
	d := &dispatch.Handler{Regions: clusters, Capacity: func(string) int { return 0 }, Store: js,
		Leases: dynamo.NewLeaseStore(db, tables.Control), Log: slog.New(slog.DiscardHandler), Now: time.Now}
	for _, r := range roamRegions {
		if err := d.Drain(context.Background(), r); err != nil {
			t.Fatalf("Drain(%s): %v", r, err)
		}
	}
	for _, tt := range []struct {
		caller string
		want   map[string]int // by region, and "" for the total
		queued int            // us-east-1's own queued count
	}{
		{"a", map[string]int{"eu-west-1": 1, "us-east-1": 3, "us-west-2": 2, "": 3}, 1},
		{"b", map[string]int{"eu-west-1": 0, "us-east-1": 5, "us-west-2": 5, "": 5}, 0},
		{"boss", map[string]int{"eu-west-1": 0, "us-east-1": 0, "us-west-2": 0, "": 0}, 0},
	} {
		got, queued := roamingFigures(t, st, keys[tt.caller], true)
		if !maps.Equal(got, tt.want) || queued != tt.queued {
			t.Errorf("GET /api/v1/queue/stats as %s: roaming = %v, us-east-1 queued %d; want %v, %d", tt.caller, got, queued, tt.want, tt.queued)
		}
	}

	// Every roaming job cancelled: no drain has counted since, yet the stats say none.
	for _, id := range aIDs[:3] {
		if status, out := st.do(t, 0, "DELETE", "/api/v1/jobs/"+id, keys["a"], "", "", nil); status != 200 {
			t.Fatalf("DELETE %s = %d %v", id, status, out)
		}
	}
	ids, err := js.Roaming(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range ids {
		if status, out := st.do(t, 0, "DELETE", "/api/v1/jobs/"+j.ID, keys["b"], "", "", nil); status != 200 {
			t.Fatalf("DELETE %s as b = %d %v", j.ID, status, out)
		}
	}
	got, _ := roamingFigures(t, st, keys["a"], false)
	if want := map[string]int{"eu-west-1": 0, "us-east-1": 0, "us-west-2": 0, "": 0}; !maps.Equal(got, want) {
		t.Errorf("GET /api/v1/queue/stats as a with the roaming queue empty: roaming = %v; want %v", got, want)
	}
}

// roamingFigures reads the queue stats with key: the roaming jobs by region ("" for the total),
// checking each says when it was counted (counted says whether a census should be there), and
// us-east-1's own queued count.
func roamingFigures(t *testing.T, st stack, key string, counted bool) (map[string]int, int) {
	t.Helper()
	status, out := st.do(t, 0, "GET", "/api/v1/queue/stats", key, "", "", nil)
	regions, _ := out["regions"].([]any)
	if status != 200 || len(regions) != len(roamRegions) {
		t.Fatalf("GET /api/v1/queue/stats = %d %v", status, out)
	}
	figures := map[string]int{}
	read := func(name string, v any) {
		r, _ := v.(map[string]any)
		n, err := r["jobs"].(json.Number).Int64()
		if err != nil || (r["counted_at"] != nil) != counted {
			t.Fatalf("roaming of %q = %v; want jobs, and counted_at set: %v", name, v, counted)
		}
		figures[name] = int(n)
	}
	read("", out["roaming"])
	queued := 0
	for _, r := range regions {
		r := r.(map[string]any)
		read(r["region"].(string), r["roaming"])
		if r["region"] == "us-east-1" {
			c := r["counts"].(map[string]any)
			if n, ok := c["queued"].(json.Number); ok {
				v, _ := n.Int64()
				queued = int(v)
			}
		}
	}
	return figures, queued
}
