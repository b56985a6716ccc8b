package dispatch

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// spotAndOnDemand are flavors over the sandbox's two nodes, told apart by the capacity-type
// label they carry: 2 CPUs of spot without GPUs, then 4 CPUs and 2 GPUs on demand.
const spotAndOnDemand = `{"us-east-1": [
  {"name": "spot", "node_labels": {"karpenter.sh/capacity-type": "spot"}, "resources": {"cpu": "2", "memory": "8Gi", "pods": "10"}},
  {"name": "on-demand", "node_labels": {"karpenter.sh/capacity-type": "on-demand"},
   "resources": {"cpu": "4", "memory": "8Gi", "pods": "10", "nvidia.com/gpu": "2"}}]}`

// submitNeeding stores queued job job-<name> whose pods ask demand, selecting selector, as the
// policy records them at submission.
func (r rig) submitNeeding(t *testing.T, name string, priority int, demand, selector map[string]string) jobs.Job {
	t.Helper()
	m := r.manifest(name)
	if selector != nil {
		sel := map[string]any{}
		for k, v := range selector {
			sel[k] = v
		}
		m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"] = sel
	}
	now := r.clock.now()
	j := jobs.New("job-"+name, "ml", r.ns, region, priority, nil, []map[string]any{m}, now)
	j.Demand, j.NodeSelector = demand, selector
	if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestDrainPlacesOnFlavors: each job is admitted on the first flavor with all its demand free, a
// GPU job where the GPUs are, a job whose node selector names a flavor only there; its record
// keeps the flavor and its pods select the flavor's labels. A job the flavor it names cannot
// hold now waits flavor_full naming the resource, and one no flavor could ever hold waits
// larger_than_every_flavor; neither holds up the rest.
func TestDrainPlacesOnFlavors(t *testing.T) {
	r := newRig(t, 10)
	set, err := flavors.Parse(spotAndOnDemand)
	if err != nil {
		t.Fatal(err)
	}
	r.dispatch.Flavors = set
	spot := map[string]string{"karpenter.sh/capacity-type": "spot"}
	first := r.submitNeeding(t, "first", 90, map[string]string{"cpu": "1500m", "memory": "1Gi", "pods": "1"}, nil)
	next := r.submitNeeding(t, "next", 80, map[string]string{"cpu": "1", "memory": "1Gi", "pods": "1"}, nil)
	gpu := r.submitNeeding(t, "gpu", 70, map[string]string{"cpu": "100m", "nvidia.com/gpu": "1", "pods": "1"}, nil)
	pinned := r.submitNeeding(t, "pinned", 60, map[string]string{"cpu": "1", "pods": "1"}, spot)
	wide := r.submitNeeding(t, "wide", 50, map[string]string{"cpu": "20", "pods": "200"}, nil)
	small := r.submitNeeding(t, "small", 40, map[string]string{"cpu": "250m", "pods": "1"}, spot)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kc, err := r.clusters.Client(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		job    jobs.Job
		flavor string // "" for one that waits
		reason admission.Reason
		lacks  string
	}{
		{first, "spot", "", ""},
		{next, "on-demand", "", ""},
		{gpu, "on-demand", "", ""},
		{pinned, "", admission.ReasonFlavorFull, "cpu"},
		{wide, "", admission.ReasonLargerThanFlavors, "cpu"},
		{small, "spot", "", ""},
	} {
		j := r.job(t, tt.job.ID)
		if tt.flavor == "" {
			if j.Status != jobs.StatusQueued || j.PendingReason != string(tt.reason) || j.PendingResource != tt.lacks {
				t.Errorf("%s = %s (%q, lacking %q), want queued (%q, lacking %q)", j.ID, j.Status, j.PendingReason, j.PendingResource, tt.reason, tt.lacks)
			}
			continue
		}
		if j.Status != jobs.StatusPending || j.Flavor != tt.flavor {
			t.Errorf("%s = %s on flavor %q (%q), want pending on %q", j.ID, j.Status, j.Flavor, j.PendingReason, tt.flavor)
			continue
		}
		kj, err := kc.BatchV1().Jobs(r.ns).Get(ctx, j.ID[len("job-"):], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"spot": "spot", "on-demand": "on-demand"}[tt.flavor]
		if got := kj.Spec.Template.Spec.NodeSelector["karpenter.sh/capacity-type"]; got != want {
			t.Errorf("%s's applied pods select capacity type %q, want %q (flavor %s)", j.ID, got, want, tt.flavor)
		}
	}
}

// TestDrainCountsWhatActiveJobsHold: the room a drain sees is each flavor's less its active jobs'
// demand, on the flavors they were admitted on, so a second drain admits nothing the first
// filled, and a job of 200 pods of 100m (20 CPUs) waits for a 32-CPU flavor half held.
func TestDrainCountsWhatActiveJobsHold(t *testing.T) {
	r := newRig(t, 10)
	set, err := flavors.Parse(`{"us-east-1": [{"name": "big", "resources": {"cpu": "32", "pods": "500"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	r.dispatch.Flavors = set
	half := r.submitNeeding(t, "half", 90, map[string]string{"cpu": "16", "pods": "1"}, nil)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	if j := r.job(t, half.ID); j.Status != jobs.StatusPending || j.Flavor != "big" {
		t.Fatalf("the first job = %s on %q, want pending on big", j.Status, j.Flavor)
	}
	wide := r.submitNeeding(t, "wide", 50, map[string]string{"cpu": "20", "pods": "200"}, nil)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	if j := r.job(t, wide.ID); j.Status != jobs.StatusQueued || j.PendingReason != string(admission.ReasonFlavorFull) || j.PendingResource != "cpu" {
		t.Errorf("200 pods of 100m beside 16 CPUs held = %s (%q, lacking %q), want queued for cpu (flavor_full)", j.Status, j.PendingReason, j.PendingResource)
	}
}

// TestDrainSharesFlavorsByQuota: quotas in resources per flavor. Tenant gpu-team is sure of 1 of
// the on-demand flavor's 2 GPUs and may borrow none; tenant cpu-team is sure of 1 spot CPU. Each
// tenant's jobs within its nominal quota start; gpu-team's second GPU job waits
// tenant_quota_exhausted naming the GPUs, though one is free, and cpu-team borrows the spot CPU
// no one claims.
func TestDrainSharesFlavorsByQuota(t *testing.T) {
	r := newRig(t, 10)
	set, err := flavors.Parse(spotAndOnDemand)
	if err != nil {
		t.Fatal(err)
	}
	r.dispatch.Flavors = set
	tenants := dynamo.NewTenantStore(r.db, r.tables.Control)
	for _, tn := range []tenancy.Tenant{
		{Name: "gpu-team", Quotas: map[string]tenancy.Quota{region: {Flavors: map[string]tenancy.FlavorQuota{
			"on-demand": {Nominal: map[string]string{"nvidia.com/gpu": "1", "cpu": "2", "pods": "4"}, BorrowingLimit: map[string]string{"nvidia.com/gpu": "0"}}}}}},
		{Name: "cpu-team", Quotas: map[string]tenancy.Quota{region: {Flavors: map[string]tenancy.FlavorQuota{
			"spot": {Nominal: map[string]string{"cpu": "1", "pods": "4"}}}}}},
	} {
		tn.Org, tn.Namespaces, tn.Role, tn.CreatedAt = "acme", []string{r.ns}, tenancy.RoleMember, time.Now()
		if err := tenants.PutTenant(context.Background(), tn); err != nil {
			t.Fatal(err)
		}
	}
	r.dispatch.Tenants = tenants
	submit := func(tenant, name string, demand map[string]string) string {
		t.Helper()
		now := r.clock.now()
		j := jobs.New("job-"+name, tenant, r.ns, region, 50, nil, []map[string]any{r.manifest(name)}, now)
		j.Demand = demand
		if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	gpu := map[string]string{"cpu": "500m", "nvidia.com/gpu": "1", "pods": "1"}
	g1, g2 := submit("gpu-team", "g1", gpu), submit("gpu-team", "g2", gpu)
	c1 := submit("cpu-team", "c1", map[string]string{"cpu": "1", "pods": "1"})
	c2 := submit("cpu-team", "c2", map[string]string{"cpu": "1", "pods": "1"})
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id, flavor, reason, lacks string
	}{
		{g1, "on-demand", "", ""},
		{g2, "", string(admission.ReasonTenantQuotaExhausted), "nvidia.com/gpu"},
		{c1, "spot", "", ""}, {c2, "spot", "", ""}, // the second borrowed: no one's nominal claims it
	} {
		j := r.job(t, tt.id)
		if j.Flavor != tt.flavor || j.PendingReason != tt.reason || j.PendingResource != tt.lacks {
			t.Errorf("%s = %s on %q (%q, lacking %q), want flavor %q (%q, lacking %q)", tt.id, j.Status, j.Flavor, j.PendingReason, j.PendingResource, tt.flavor, tt.reason, tt.lacks)
		}
	}
}

// TestFlavorCountedIsFlavorRun: a hostile tenant's job says nothing of flavors in its node
// selector but requires on-demand nodes through node affinity, hoping to be counted on the spot
// flavor, where there is room, and run on on-demand nodes. It is counted on spot, and its pods
// select spot's labels on top of what they asked: they can run on spot's nodes or nowhere, never
// on a flavor it is not counted against.
func TestFlavorCountedIsFlavorRun(t *testing.T) {
	r := newRig(t, 10)
	set, err := flavors.Parse(spotAndOnDemand)
	if err != nil {
		t.Fatal(err)
	}
	r.dispatch.Flavors = set
	now := r.clock.now()
	m := r.manifest("sneak")
	m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["affinity"] = map[string]any{
		"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
			"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{
				"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}}}}}}}}
	j := jobs.New("job-sneak", "hostile", r.ns, region, 50, nil, []map[string]any{m}, now)
	j.Demand = map[string]string{"cpu": "1", "pods": "1"}
	if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	got := r.job(t, j.ID)
	if got.Status != jobs.StatusPending || got.Flavor != "spot" {
		t.Fatalf("the job = %s on %q, want pending on spot, the flavor with room", got.Status, got.Flavor)
	}
	kc, err := r.clusters.Client(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	kj, err := kc.BatchV1().Jobs(r.ns).Get(context.Background(), "sneak", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sel := kj.Spec.Template.Spec.NodeSelector["karpenter.sh/capacity-type"]; sel != "spot" {
		t.Errorf("the applied pods select capacity type %q, want spot: the flavor it is counted on", sel)
	}
}
