package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestQueueStatsOperator: the operator's GET /api/v1/queue/stats shows every tenant with jobs
// active in the region or a share set for it, each one's use beside its share; a member, a viewer
// and a tenant's admin still see only their own tenant, though others have jobs active there.
func TestQueueStatsOperator(t *testing.T) {
	st, keys, js := limitStack(t,
		tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}, Quotas: map[string]tenancy.Quota{"us-east-1": {Jobs: 3, GPUs: 8}}},
		tenancy.Tenant{Name: "b", Namespaces: []string{"team-b"}},
		tenancy.Tenant{Name: "idle", Namespaces: []string{"team-c"}, Quotas: map[string]tenancy.Quota{"us-east-1": {Jobs: 1}}},
		tenancy.Tenant{Name: "boss", Namespaces: []string{"ops"}, Role: tenancy.RoleAdmin, Operator: true},
		tenancy.Tenant{Name: "watch", Namespaces: []string{"team-d"}, Role: tenancy.RoleViewer},
		tenancy.Tenant{Name: "lead", Namespaces: []string{"team-l"}, Role: tenancy.RoleAdmin},
	)
	// a has one job active and one queued; b has two active.
	now := time.Now()
	for _, sub := range []struct {
		tenant, namespace string
		claim             bool
	}{{"a", "team-a", true}, {"a", "team-a", false}, {"b", "team-b", true}, {"b", "team-b", true}} {
		body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": sub.namespace})
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys[sub.tenant], "application/json", body, nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs as %s = %d %v", sub.tenant, status, out)
		}
		if sub.claim {
			id := out["job"].(map[string]any)["id"].(string)
			if _, err := js.Claim(context.Background(), id, "us-east-1", "tok-"+id, now, now.Add(2*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The beat could not reach the region once: every caller sees it, with how long. The operator
	// has cordoned it too: everyone sees the state, only the operator who did it.
	if err := js.Missed(context.Background(), "us-east-1", now.Add(-time.Minute), errors.New("dial tcp: connection refused")); err != nil {
		t.Fatal(err)
	}
	if err := js.SetCordon(context.Background(), "us-east-1", dynamo.Cordoned, "operator:alice", now); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ caller, want string }{
		{"boss", `[{"long_running":0,"share":{"gpus":8,"jobs":3},"tenant":"a","use":{"gpus":0,"jobs":1}},` +
			`{"long_running":0,"share":{"gpus":0,"jobs":2},"tenant":"b","use":{"gpus":0,"jobs":2}},` +
			`{"long_running":0,"share":{"gpus":0,"jobs":1},"tenant":"idle","use":{"gpus":0,"jobs":0}}]`},
		{"a", `[{"long_running":0,"share":{"gpus":8,"jobs":3},"tenant":"a","use":{"gpus":0,"jobs":1}}]`},
		{"watch", `[{"long_running":0,"share":{"gpus":0,"jobs":2},"tenant":"watch","use":{"gpus":0,"jobs":0}}]`},
		{"lead", `[{"long_running":0,"share":{"gpus":0,"jobs":2},"tenant":"lead","use":{"gpus":0,"jobs":0}}]`},
	} {
		status, out := st.do(t, 0, "GET", "/api/v1/queue/stats", keys[tt.caller], "", "", nil)
		regions, _ := out["regions"].([]any)
		if status != 200 || len(regions) != 1 {
			t.Fatalf("GET /api/v1/queue/stats as %s = %d %v", tt.caller, status, out)
		}
		if got := mustJSON(regions[0].(map[string]any)["tenants"]); got != tt.want {
			t.Errorf("GET /api/v1/queue/stats as %s: tenants = %s, want %s", tt.caller, got, tt.want)
		}
		reach, _ := regions[0].(map[string]any)["reach"].(map[string]any)
		var gone float64
		_, _ = fmt.Sscan(fmt.Sprint(reach["unreachable_seconds"]), &gone)
		// Why names the cluster's endpoint: the operator sees it, a tenant only that it failed.
		why := map[bool]any{true: "dial tcp: connection refused", false: nil}[tt.caller == "boss"]
		if reach == nil || fmt.Sprint(reach["consecutive_failures"]) != "1" || reach["last_error"] != why || gone < 59 {
			t.Errorf("GET /api/v1/queue/stats as %s: reach = %v, want one failure a minute ago, why %v", tt.caller, reach, why)
		}
		who := map[bool]any{true: "operator:alice", false: nil}[tt.caller == "boss"]
		if reach["state"] != "cordoned" || reach["cordon"] != "cordoned" || reach["cordoned_by"] != who || out["held"] != false {
			t.Errorf("GET /api/v1/queue/stats as %s: state %v, cordon %v by %v, held %v; want cordoned, by %v, not held", tt.caller, reach["state"], reach["cordon"], reach["cordoned_by"], out["held"], who)
		}
	}
}

// TestQueueStatsSpotPrices: spot_prices gives, per instance type the caller's own queued jobs
// cap, the history the drains kept (oldest first) beside those jobs' caps, as the region's census
// counted them. Another tenant's job capping another type, or the same type at another cap, shows
// in no one else's stats, an operator's included.
func TestQueueStatsSpotPrices(t *testing.T) {
	st, keys, js := limitStack(t,
		tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}},
		tenancy.Tenant{Name: "b", Namespaces: []string{"team-b"}},
		tenancy.Tenant{Name: "boss", Namespaces: []string{"ops"}, Role: tenancy.RoleAdmin, Operator: true},
	)
	submit := func(tenant, namespace, typ string, price float64) {
		body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": namespace,
			"max_spot_price": price, "spot_instance_type": typ})
		if status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys[tenant], "application/json", body, nil); status != 202 {
			t.Fatalf("POST /api/v1/jobs as %s = %d %v", tenant, status, out)
		}
	}
	submit("a", "team-a", "g5.xlarge", 0.3)
	submit("a", "team-a", "g5.xlarge", 0.3)
	submit("a", "team-a", "g5.xlarge", 0.25)
	submit("b", "team-b", "g5.xlarge", 0.9)
	submit("b", "team-b", "p4d.24xlarge", 12)
	step := time.Minute
	now := time.Now().UTC().Truncate(time.Second)
	for i, p := range []float64{0.5, 0.45, 0.4} {
		at := now.Add(time.Duration(i-3) * step)
		if err := js.KeepSpotPrice(context.Background(), "us-east-1", "g5.xlarge", step, jobs.PricePoint{At: at, Price: p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := js.KeepSpotPrice(context.Background(), "us-east-1", "p4d.24xlarge", step, jobs.PricePoint{At: now, Price: 20}); err != nil {
		t.Fatal(err)
	}
	takeCensus(t, js, st.leases, "us-east-1")
	want := func(points string) string {
		return `[{"caps":[{"jobs":1,"max_price":0.25},{"jobs":2,"max_price":0.3}],"instance_type":"g5.xlarge","points":` + points + `}]`
	}
	at := func(i int) string { return now.Add(time.Duration(i-3) * step).Format(time.RFC3339) }
	for _, tt := range []struct{ caller, want string }{
		{"a", want(`[{"at":"` + at(0) + `","price":0.5},{"at":"` + at(1) + `","price":0.45},{"at":"` + at(2) + `","price":0.4}]`)},
		{"boss", `[]`},
	} {
		status, out := st.do(t, 0, "GET", "/api/v1/queue/stats", keys[tt.caller], "", "", nil)
		regions, _ := out["regions"].([]any)
		if status != 200 || len(regions) != 1 {
			t.Fatalf("GET /api/v1/queue/stats as %s = %d %v", tt.caller, status, out)
		}
		if got := mustJSON(regions[0].(map[string]any)["spot_prices"]); got != tt.want {
			t.Errorf("GET /api/v1/queue/stats as %s: spot_prices = %s, want %s", tt.caller, got, tt.want)
		}
	}
}

// TestJobInUnreachedRegion: a job dispatched to a region whose cluster the beat last failed to
// reach is shown waiting region_unreachable, without the live reads that would not answer; once
// the region is reached again, it is not.
func TestJobInUnreachedRegion(t *testing.T) {
	st, keys, js := limitStack(t, tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}})
	body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"})
	status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["a"], "application/json", body, nil)
	if status != 202 {
		t.Fatalf("POST /api/v1/jobs = %d %v", status, out)
	}
	id := out["job"].(map[string]any)["id"].(string)
	now := time.Now()
	if _, err := js.Claim(context.Background(), id, "us-east-1", "tok", now, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := js.Missed(context.Background(), "us-east-1", now, errors.New("dial tcp: connection refused")); err != nil {
		t.Fatal(err)
	}
	if status, got := st.do(t, 0, "GET", "/api/v1/jobs/"+id, keys["a"], "", "", nil); status != 200 || got["pending_reason"] != "region_unreachable" {
		t.Errorf("GET the job in the unreached region = %d, pending_reason %v; want region_unreachable", status, got["pending_reason"])
	}
	if err := js.Reached(context.Background(), "us-east-1", now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if status, got := st.do(t, 0, "GET", "/api/v1/jobs/"+id, keys["a"], "", "", nil); status != 200 || got["pending_reason"] != nil {
		t.Errorf("GET the job once its region is reached = %d, pending_reason %v; want none", status, got["pending_reason"])
	}
}

// TestQueueAhead: GET /api/v1/queue/{region}/ahead counts and sums what is ahead of one of the
// caller's queued jobs, its own tenant's apart. Hostile: another tenant's jobs ahead are counted
// but never named (no id, name, tenant or namespace of theirs in the answer), and another tenant
// cannot ask about the caller's job (404).
func TestQueueAhead(t *testing.T) {
	st, keys, _ := limitStack(t, tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}}, tenancy.Tenant{Name: "b", Namespaces: []string{"team-b"}})
	submit := func(tenant, ns string, priority int) map[string]any {
		body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": ns, "priority": priority})
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys[tenant], "application/json", body, nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs as %s = %d %v", tenant, status, out)
		}
		return out["job"].(map[string]any)
	}
	submit("a", "team-a", 90)
	theirs := submit("b", "team-b", 80)
	mine := submit("a", "team-a", 10)
	id := mine["id"].(string)
	status, out := st.do(t, 0, "GET", "/api/v1/queue/us-east-1/ahead?job="+id, keys["a"], "", "", nil)
	if status != 200 || fmt.Sprint(out["jobs_ahead"]) != "2" || fmt.Sprint(out["own_jobs_ahead"]) != "1" || out["complete"] != true {
		t.Fatalf("ahead of a's last job = %d %v; want 2 ahead, 1 of them a's", status, out)
	}
	if all, own := out["demand_ahead"].(map[string]any), out["own_demand_ahead"].(map[string]any); own["pods"] != "1" || all["pods"] != "2" {
		t.Errorf("demand ahead = %v, own %v; want 2 pods in all, 1 of them a's (each job asks %v)", all, own, mine["demand"])
	}
	body := mustJSON(out)
	for _, secret := range []string{theirs["id"].(string), theirs["name"].(string), "team-b", `"b"`} {
		if strings.Contains(body, secret) {
			t.Errorf("ahead of a's job names %q of tenant b: %s", secret, body)
		}
	}
	if status, out := st.do(t, 0, "GET", "/api/v1/queue/us-east-1/ahead?job="+id, keys["b"], "", "", nil); status != 404 {
		t.Errorf("b asking about a's job = %d %v; want 404", status, out)
	}
	for _, tt := range []struct {
		path string
		want int
	}{{"/api/v1/queue/us-east-1/ahead", 400}, {"/api/v1/queue/eu-west-9/ahead?job=" + id, 404}, {"/api/v1/queue/us-east-1/ahead?job=job-nope", 404}} {
		if status, out := st.do(t, 0, "GET", tt.path, keys["a"], "", "", nil); status != tt.want {
			t.Errorf("GET %s = %d %v; want %d", tt.path, status, out, tt.want)
		}
	}
}
