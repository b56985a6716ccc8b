package httpapi_test

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/wake"
)

// limitQuota is the default share limitStack's API is given.
var limitQuota = tenancy.Quota{Jobs: 2}

// limitStack is the API on its own tables, with the default share limitQuota, and one key for
// each tenant given, by name (a member's, unless the tenant names its role); and its job store.
func limitStack(t *testing.T, tenants ...tenancy.Tenant) (stack, map[string]string, *dynamo.JobStore) {
	t.Helper()
	return limitStackWith(t, nil, tenants...)
}

// limitStackWith is limitStack with the API's Deps edited first.
func limitStackWith(t *testing.T, edit func(*httpapi.Deps), tenants ...tenancy.Tenant) (stack, map[string]string, *dynamo.JobStore) {
	t.Helper()
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	store := dynamo.NewTenantStore(db, tables.Control)
	keys := map[string]string{}
	for _, tn := range tenants {
		tn.Org, tn.Role, tn.CreatedAt = "acme", cmp.Or(tn.Role, tenancy.RoleMember), time.Now()
		if err := store.PutTenant(context.Background(), tn); err != nil {
			t.Fatal(err)
		}
		keys[tn.Name], _ = tenancy.NewKey()
		if err := store.AddKey(context.Background(), tn.Name, keys[tn.Name], time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	js := dynamo.NewJobStore(db, tables)
	deps := httpapi.Deps{
		Principals: store, Jobs: js, Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1"}, DefaultQuota: limitQuota,
	}
	if edit != nil {
		edit(&deps)
	}
	api := served(t, deps)
	return stack{apis: [2]http.Handler{api, api}, queueURL: queueURL, sqs: q, leases: dynamo.NewLeaseStore(db, tables.Control)}, keys, js
}

func TestMaxPriority(t *testing.T) {
	sixty, ten := 60, 10
	st, keys, _ := limitStack(t,
		tenancy.Tenant{Name: "open", Namespaces: []string{"team-a"}},
		tenancy.Tenant{Name: "capped", Namespaces: []string{"team-a"}, MaxPriority: &sixty},
		tenancy.Tenant{Name: "low", Namespaces: []string{"team-a"}, MaxPriority: &ten},
	)
	submit := func(key string, prio any) (int, map[string]any) {
		req := map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"}
		if prio != nil {
			req["priority"] = prio
		}
		return st.do(t, 0, "POST", "/api/v1/jobs", key, "application/json", mustJSON(req), nil)
	}
	jobPriority := func(out map[string]any) any { job, _ := out["job"].(map[string]any); return job["priority"] }

	status, out := submit(keys["capped"], 61)
	checkPriorityRefusal(t, "POST /api/v1/jobs at 61 by a tenant limited to 60", status, out, 60)
	if status, out := submit(keys["capped"], 60); status != 202 || jobPriority(out) != json.Number("60") {
		t.Errorf("POST /api/v1/jobs at the limit 60 = %d %v, want 202 at 60", status, out)
	}
	if status, out := submit(keys["capped"], nil); status != 202 || jobPriority(out) != json.Number("50") {
		t.Errorf("POST /api/v1/jobs with no priority under limit 60 = %d %v, want 202 at the default 50", status, out)
	}
	if status, out := submit(keys["low"], nil); status != 202 || jobPriority(out) != json.Number("10") {
		t.Errorf("POST /api/v1/jobs with no priority under limit 10 = %d %v, want 202 at 10: the default yields to the limit", status, out)
	}
	if status, out = submit(keys["open"], 100); status != 202 {
		t.Fatalf("POST /api/v1/jobs at 100 by a tenant with no limit = %d %v, want 202 as before limits", status, out)
	}

	// A retry keeps the job's priority, and meets the retrier's limit as a new job does.
	id := out["job"].(map[string]any)["id"].(string)
	status, out = st.do(t, 0, "POST", "/api/v1/jobs/"+id+"/retry", keys["capped"], "", "", nil)
	checkPriorityRefusal(t, "retry of a priority-100 job by a tenant limited to 60", status, out, 60)

	create := mustJSON(map[string]any{"name": "train", "manifest": templateJob(), "parameters": map[string]any{"tag": "1.36", "workers": 1, "message": "hi"}})
	if status, out := st.do(t, 0, "POST", "/api/v1/templates", keys["capped"], "application/json", create, nil); status != 201 {
		t.Fatalf("POST /api/v1/templates = %d %v, want 201", status, out)
	}
	run := mustJSON(map[string]any{"name": "train-1", "namespace": "team-a", "region": "us-east-1", "priority": 90})
	status, out = st.do(t, 0, "POST", "/api/v1/templates/train/jobs", keys["capped"], "application/json", run, nil)
	checkPriorityRefusal(t, "a template's job at 90 by a tenant limited to 60", status, out, 60)
}

// checkPriorityRefusal checks a 422 that names the field priority and the limit.
func checkPriorityRefusal(t *testing.T, what string, status int, out map[string]any, limit int) {
	t.Helper()
	if status != 422 || out["error"] != "policy_violation" {
		t.Fatalf("%s = %d %v, want 422 policy_violation", what, status, out)
	}
	vs, _ := out["violations"].([]any)
	v, _ := func() (map[string]any, bool) {
		if len(vs) != 1 {
			return nil, false
		}
		m, ok := vs[0].(map[string]any)
		return m, ok
	}()
	if v["field"] != "priority" || v["limit"] != json.Number(strconv.Itoa(limit)) {
		t.Errorf("%s: violations = %v, want one naming field priority and limit %d", what, out["violations"], limit)
	}
	if d, _ := out["detail"].(string); !strings.Contains(d, "limit of "+strconv.Itoa(limit)) || !strings.Contains(d, "--max-priority") {
		t.Errorf("%s: detail = %q, want it to name the limit %d and how to raise it", what, d, limit)
	}
}

func TestQueueStatsShare(t *testing.T) {
	st, keys, js := limitStack(t,
		tenancy.Tenant{Name: "q", Namespaces: []string{"team-a"}, Quotas: map[string]tenancy.Quota{"us-east-1": {Jobs: 3, GPUs: 8}}},
		tenancy.Tenant{Name: "p", Namespaces: []string{"team-a"}},
	)
	var ids []string
	for range 2 {
		body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"})
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["q"], "application/json", body, nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs = %d %v", status, out)
		}
		ids = append(ids, out["job"].(map[string]any)["id"].(string))
	}
	now := time.Now()
	if _, err := js.Claim(context.Background(), ids[0], "us-east-1", "tok", now, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ tenant, want string }{
		{"q", `[{"long_running":0,"share":{"gpus":8,"jobs":3},"tenant":"q","use":{"gpus":0,"jobs":1}}]`},
		{"p", `[{"long_running":0,"share":{"gpus":0,"jobs":2},"tenant":"p","use":{"gpus":0,"jobs":0}}]`},
	} {
		status, out := st.do(t, 0, "GET", "/api/v1/queue/stats", keys[tt.tenant], "", "", nil)
		regions, _ := out["regions"].([]any)
		if status != 200 || len(regions) != 1 {
			t.Fatalf("GET /api/v1/queue/stats as %s = %d %v", tt.tenant, status, out)
		}
		if got := mustJSON(regions[0].(map[string]any)["tenants"]); got != tt.want {
			t.Errorf("GET /api/v1/queue/stats as %s: tenants = %s, want %s (its own use beside its share)", tt.tenant, got, tt.want)
		}
	}
}
