package dispatch

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// spotOnly is an edit of a Job's manifest that requires spot nodes, as a tenant's may.
func spotOnly(m map[string]any) {
	spec := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["nodeSelector"] = map[string]any{"karpenter.sh/capacity-type": "spot"}
	spec["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{
			map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot"}}}}}}}}
}

// deadlineSpot is a g5.xlarge cap at maxPrice whose deadline is in from now.
func (r rig) deadlineSpot(maxPrice float64, in time.Duration, on jobs.OnDeadline) *jobs.Spot {
	at := r.clock.now().Add(in).UTC()
	return &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: maxPrice, Deadline: &at, OnDeadline: on}
}

// TestSpotDeadline is the scenario: with the price above their caps, jobs with a 30 s
// spot deadline wait until it; then the one that asked runs on demand (its Job selecting
// on-demand nodes, its spot requirement gone), the one that asked to fail fails with
// spot_deadline_passed and nothing of it in the cluster, and one whose price is within its cap
// runs on spot as it asked, deadline or not.
func TestSpotDeadline(t *testing.T) {
	r := newRig(t, 5)
	if err := r.book.Set(region, "g5.xlarge", 0.55, r.clock.now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	onDemand, err := r.createWith("job-od", "od", 50, r.deadlineSpot(0.40, 30*time.Second, jobs.OnDeadlineOnDemand), spotOnly)
	if err != nil {
		t.Fatal(err)
	}
	failing, err := r.createWith("job-fail", "fail", 50, r.deadlineSpot(0.40, 30*time.Second, jobs.OnDeadlineFail), spotOnly)
	if err != nil {
		t.Fatal(err)
	}
	drain := func() {
		t.Helper()
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
	}
	drain()
	for _, id := range []string{onDemand.ID, failing.ID} {
		if j := r.job(t, id); j.Status != jobs.StatusQueued || j.PendingReason != string(admission.ReasonSpotPriceAboveCap) {
			t.Fatalf("%s before its deadline = %s, %q; want queued, spot_price_above_cap", id, j.Status, j.PendingReason)
		}
	}

	r.clock.skip(30 * time.Second)
	within := r.submitAs(t, "job-within", "within", 50, r.deadlineSpot(0.60, -time.Second, jobs.OnDeadlineOnDemand))
	drain()

	ctx := context.Background()
	kc, err := r.clusters.Client(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	od := r.job(t, onDemand.ID)
	last := od.StatusHistory[len(od.StatusHistory)-1]
	if od.Status == jobs.StatusQueued || last.Status != jobs.StatusPending || last.Reason != jobs.ReasonSpotDeadlineOnDemand {
		t.Fatalf("on-demand job past its deadline = %s, last transition %+v; want pending, %q", od.Status, last, jobs.ReasonSpotDeadlineOnDemand)
	}
	kj, err := kc.BatchV1().Jobs(r.ns).Get(ctx, "od", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := kj.Spec.Template.Spec
	if got := pod.NodeSelector["karpenter.sh/capacity-type"]; got != "on-demand" {
		t.Errorf("applied Job's nodeSelector = %v, want karpenter.sh/capacity-type: on-demand", pod.NodeSelector)
	}
	if pod.Affinity != nil && pod.Affinity.NodeAffinity != nil && pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		t.Errorf("applied Job still requires %+v, want the spot requirement gone", pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	}

	f := r.job(t, failing.ID)
	last = f.StatusHistory[len(f.StatusHistory)-1]
	if f.Status != jobs.StatusFailed || last.Reason != jobs.ReasonSpotDeadlinePassed {
		t.Errorf("failing job past its deadline = %s, last transition %+v; want failed, %s", f.Status, last, jobs.ReasonSpotDeadlinePassed)
	}
	if _, err := kc.BatchV1().Jobs(r.ns).Get(ctx, "fail", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the failed job's Job: %v, want not found (nothing applied)", err)
	}
	if evs := eventsByJob(t, r)[failing.ID]; evs[outbox.JobFailed] != 1 || evs[outbox.JobDispatched] != 0 {
		t.Errorf("failed job's events = %v, want one job.failed and no job.dispatched", evs)
	}

	w := r.job(t, within.ID)
	if w.Status == jobs.StatusQueued || w.StatusHistory[len(w.StatusHistory)-1].Reason != "" {
		t.Errorf("job within its cap past its deadline = %s, %+v; want dispatched on spot", w.Status, w.StatusHistory)
	}
	kw, err := kc.BatchV1().Jobs(r.ns).Get(ctx, "within", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sel := kw.Spec.Template.Spec.NodeSelector; sel["karpenter.sh/capacity-type"] != "" {
		t.Errorf("job within its cap has nodeSelector %v, want none of the capacity type", sel)
	}
}

// TestSpotDeadlineLiftsOnlyThePrice: a tenant's deadline past and on demand takes no room the
// region has not got, and no share of another tenant's: it only lifts the price gate.
func TestSpotDeadlineLiftsOnlyThePrice(t *testing.T) {
	r := newRig(t, 2)
	if err := r.book.Set(region, "g5.xlarge", 0.55, r.clock.now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	tenants := dynamo.NewTenantStore(r.db, r.tables.Control)
	for _, name := range []string{"a", "b"} {
		if err := tenants.PutTenant(context.Background(), tenancy.Tenant{
			Name: name, Org: "acme", Namespaces: []string{r.ns}, Role: tenancy.RoleMember, CreatedAt: time.Now(),
			Quotas: map[string]tenancy.Quota{region: {Jobs: 1}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	r.dispatch.Tenants = tenants
	submit := func(tenant, name string, priority int, spot *jobs.Spot) string {
		t.Helper()
		now := r.clock.now()
		j := jobs.New("job-"+name, tenant, r.ns, region, priority, nil, []map[string]any{r.manifest(name)}, now)
		j.Spot = spot
		if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	drain := func() {
		t.Helper()
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
	}
	held := submit("a", "a-held", 50, nil)
	drain() // a now holds its share
	past := submit("a", "a-past", 100, r.deadlineSpot(0.40, -time.Second, jobs.OnDeadlineOnDemand))
	other := submit("b", "b-plain", 0, nil)
	drain()
	if j := r.job(t, held); j.Status == jobs.StatusQueued {
		t.Fatalf("a's first job is still queued")
	}
	if j := r.job(t, other); j.Status == jobs.StatusQueued {
		t.Errorf("b's job, under its share, = queued (%s); want dispatched before a's job past its deadline", j.PendingReason)
	}
	j := r.job(t, past)
	if j.Status != jobs.StatusQueued || j.PendingReason != string(admission.ReasonTenantQuotaExhausted) && j.PendingReason != string(admission.ReasonFlavorFull) {
		t.Errorf("a's job past its deadline = %s, %q; want queued for room, not dispatched past a's share or the region's room", j.Status, j.PendingReason)
	}
}
