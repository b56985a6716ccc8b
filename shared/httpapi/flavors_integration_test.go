package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// flavorsDeps gives the API two flavors in us-east-1: 8 CPUs of spot, then 4 CPUs and 2 GPUs on
// demand.
func flavorsDeps(t *testing.T) func(*httpapi.Deps) {
	set, err := flavors.Parse(`{"us-east-1": [
	  {"name": "spot", "node_labels": {"karpenter.sh/capacity-type": "spot"}, "resources": {"cpu": "8", "pods": "20"}},
	  {"name": "on-demand", "node_labels": {"karpenter.sh/capacity-type": "on-demand"}, "resources": {"cpu": "4", "pods": "20", "nvidia.com/gpu": "2"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	return func(d *httpapi.Deps) {
		d.Flavors = func(region string) flavors.Region { return set.Of(region, 10, 0) }
	}
}

// cpuJob is restrictedJob with parallelism pods each requesting cpu, selecting selector.
func cpuJob(parallelism int, cpu string, selector map[string]any) map[string]any {
	m := restrictedJob(func(pod map[string]any) {
		pod["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"cpu": cpu, "memory": "64Mi"}}
		if selector != nil {
			pod["nodeSelector"] = selector
		}
	})
	m["spec"].(map[string]any)["parallelism"] = parallelism
	return m
}

// TestSubmitRefusesWhatNoFlavorHolds: a job whose pods that run at once ask for more than every
// flavor it may run on has in all (200 pods of 100m is 20 CPUs; the largest flavor has 8) is a
// 422 saying what it asks and the most there is, and so is one whose node selector agrees with
// no flavor; one that fits a flavor is queued with its demand and node selector on its record.
func TestSubmitRefusesWhatNoFlavorHolds(t *testing.T) {
	st, keys, _ := limitStackWith(t, flavorsDeps(t), tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}})
	for _, tt := range []struct {
		name     string
		manifest map[string]any
		want     string
	}{
		{"200 pods of 100m", cpuJob(200, "100m", nil), "ask for cpu 20, more than any flavor of region us-east-1 it may run on has (spot, on-demand, at most 8)"},
		{"5 CPUs on spot", cpuJob(1, "5", map[string]any{"karpenter.sh/capacity-type": "spot"}), ""},
		{"5 CPUs on demand", cpuJob(1, "5", map[string]any{"karpenter.sh/capacity-type": "on-demand"}), "at most 4"},
		{"a capacity type no flavor has", cpuJob(1, "1", map[string]any{"karpenter.sh/capacity-type": "reserved"}), "agrees with none of region us-east-1's flavors"},
	} {
		body := mustJSON(map[string]any{"manifest": tt.manifest, "region": "us-east-1", "namespace": "team-a"})
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys["a"], "application/json", body, nil)
		if tt.want == "" {
			job, _ := out["job"].(map[string]any)
			if status != 202 || mustJSON(job["node_selector"]) != `{"karpenter.sh/capacity-type":"spot"}` || mustJSON(job["demand"]) != `{"cpu":"5","memory":"64Mi","pods":"1"}` {
				t.Errorf("%s: POST = %d %v, want 202 with its demand and node selector", tt.name, status, out)
			}
			continue
		}
		if status != 422 || !strings.Contains(mustJSON(out), tt.want) {
			t.Errorf("%s: POST = %d %v, want 422 saying %q", tt.name, status, out, tt.want)
		}
	}
}

// TestQueueStatsFlavors: the stats list each flavor's capacity and what the active jobs hold of it
// per resource, and each tenant's use, nominal quota, borrowed and lent amounts; a tenant sees its
// own share of each flavor and never another's, and the operator sees every tenant's.
func TestQueueStatsFlavors(t *testing.T) {
	st, keys, js := limitStackWith(t, flavorsDeps(t),
		tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}, Quotas: map[string]tenancy.Quota{"us-east-1": {Flavors: map[string]tenancy.FlavorQuota{
			"spot": {Nominal: map[string]string{"cpu": "4"}, LendingLimit: map[string]string{"cpu": "1"}}}}}},
		tenancy.Tenant{Name: "b", Namespaces: []string{"team-b"}},
		tenancy.Tenant{Name: "boss", Namespaces: []string{"ops"}, Role: tenancy.RoleAdmin, Operator: true},
	)
	now := time.Now()
	for _, sub := range []struct{ tenant, namespace, cpu, flavor string }{{"a", "team-a", "2", "spot"}, {"b", "team-b", "3", "on-demand"}} {
		body := mustJSON(map[string]any{"manifest": cpuJob(1, sub.cpu, nil), "region": "us-east-1", "namespace": sub.namespace})
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", keys[sub.tenant], "application/json", body, nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs as %s = %d %v", sub.tenant, status, out)
		}
		id := out["job"].(map[string]any)["id"].(string)
		if _, err := js.ClaimOn(context.Background(), id, "us-east-1", sub.flavor, "tok-"+id, now, now.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	// Every flavor counts every resource a flavor lists (spot has no GPUs); the default quota of
	// limitStack (2 jobs) is 2 pods nominal on each flavor, and a's quota in resources names no
	// pods, so a's pod is borrowed.
	const (
		spotA = `{"borrowed":{"cpu":"0","nvidia.com/gpu":"0","pods":"1"},"in_use":{"cpu":"2","nvidia.com/gpu":"0","pods":"1"},"lent":{"cpu":"1","nvidia.com/gpu":"0","pods":"0"},"nominal":{"cpu":"4","nvidia.com/gpu":"0","pods":"0"},"tenant":"a"}`
		spotB = `{"borrowed":{"cpu":"0","nvidia.com/gpu":"0","pods":"0"},"in_use":{"cpu":"0","nvidia.com/gpu":"0","pods":"0"},"lent":{"cpu":"0","nvidia.com/gpu":"0","pods":"2"},"nominal":{"cpu":"0","nvidia.com/gpu":"0","pods":"2"},"tenant":"b"}`
		odA   = `{"borrowed":{"cpu":"0","nvidia.com/gpu":"0","pods":"0"},"in_use":{"cpu":"0","nvidia.com/gpu":"0","pods":"0"},"lent":{"cpu":"0","nvidia.com/gpu":"0","pods":"0"},"nominal":{"cpu":"0","nvidia.com/gpu":"0","pods":"0"},"tenant":"a"}`
		odB   = `{"borrowed":{"cpu":"3","nvidia.com/gpu":"0","pods":"0"},"in_use":{"cpu":"3","nvidia.com/gpu":"0","pods":"1"},"lent":{"cpu":"0","nvidia.com/gpu":"0","pods":"1"},"nominal":{"cpu":"0","nvidia.com/gpu":"0","pods":"2"},"tenant":"b"}`
	)
	for _, tt := range []struct{ caller, spot, onDemand string }{
		{"a", "[" + spotA + "]", "[" + odA + "]"},
		{"b", "[" + spotB + "]", "[" + odB + "]"},
		{"boss", "[" + spotA + "," + spotB + "]", "[" + odA + "," + odB + "]"},
	} {
		status, out := st.do(t, 0, "GET", "/api/v1/queue/stats", keys[tt.caller], "", "", nil)
		regions, _ := out["regions"].([]any)
		if status != 200 || len(regions) != 1 {
			t.Fatalf("GET /api/v1/queue/stats as %s = %d %v", tt.caller, status, out)
		}
		fs, _ := regions[0].(map[string]any)["flavors"].([]any)
		if len(fs) != 2 {
			t.Fatalf("GET /api/v1/queue/stats as %s: flavors = %v, want spot and on-demand", tt.caller, fs)
		}
		spot, od := fs[0].(map[string]any), fs[1].(map[string]any)
		if got := mustJSON(spot["in_use"]); got != `{"cpu":"2","nvidia.com/gpu":"0","pods":"1"}` {
			t.Errorf("as %s: spot in use = %s, want a's 2 CPUs and 1 pod", tt.caller, got)
		}
		if got := mustJSON(od["capacity"]); got != `{"cpu":"4","nvidia.com/gpu":"2","pods":"20"}` {
			t.Errorf("as %s: on-demand capacity = %s", tt.caller, got)
		}
		if got := mustJSON(spot["tenants"]); got != tt.spot {
			t.Errorf("as %s: spot's tenants = %s, want %s", tt.caller, got, tt.spot)
		}
		if got := mustJSON(od["tenants"]); got != tt.onDemand {
			t.Errorf("as %s: on-demand's tenants = %s, want %s", tt.caller, got, tt.onDemand)
		}
	}
}
