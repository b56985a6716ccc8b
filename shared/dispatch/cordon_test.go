package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// cordon sets region's cordon as the admin command does, and lets the drains' gates expire.
func (r rig) cordon(t *testing.T, reg, cordon string) {
	t.Helper()
	if err := r.store.SetCordon(context.Background(), reg, cordon, "operator:test", r.clock.now()); err != nil {
		t.Fatal(err)
	}
	r.clock.skip(gateTTL + time.Second)
}

// TestCordonedRegionAdmitsNothing: a cordoned region admits none of its queued jobs, which wait
// region_cordoned in their place, while a job that allows another region runs there; what runs
// in the cordoned region goes on; uncordoned, it admits again.
func TestCordonedRegionAdmitsNothing(t *testing.T) {
	r := newRigIn(t, func(string) int { return 5 }, region, west)
	r.dispatch.Health = r.store
	running := r.submitIn(t, "job-running", "running", region)
	r.drainIn(t, region)
	r.cordon(t, region, dynamo.Cordoned)

	pinned := r.submitIn(t, "job-pinned", "pinned", region)
	roam, err := r.createRoaming("job-roam", "roam", 50, nil, region, west)
	if err != nil {
		t.Fatal(err)
	}
	r.drainIn(t, region, west, region)
	if got := r.job(t, pinned.ID); got.Status != jobs.StatusQueued || got.PendingReason != string(admission.ReasonRegionCordoned) {
		t.Errorf("pinned job in the cordoned region = %s (%s); want queued region_cordoned", got.Status, got.PendingReason)
	}
	got := r.job(t, roam.ID)
	if got.Status != jobs.StatusPending || got.Region != west {
		t.Errorf("roaming job = %s in %q; want pending in us-west-2, us-east-1 being cordoned", got.Status, got.Region)
	}
	if got.RegionChoice == nil || len(got.RegionChoice.Views) != 2 || got.RegionChoice.Views[0].Wait != string(admission.ReasonRegionCordoned) {
		t.Errorf("roaming job's region choice = %+v; want us-east-1 passed over as cordoned", got.RegionChoice)
	}
	if got := r.job(t, running.ID); got.Status != jobs.StatusPending || got.Region != region {
		t.Errorf("job already running in the cordoned region = %s in %q; want it left as it was", got.Status, got.Region)
	}

	r.cordon(t, region, "")
	r.drainIn(t, region)
	if got := r.job(t, pinned.ID); got.Status != jobs.StatusPending {
		t.Errorf("pinned job after uncordon = %s (%s); want pending", got.Status, got.PendingReason)
	}
}

// TestDrainedRegionRunsItsJobsElsewhere: draining a region stops each job running there (its
// objects deleted) and queues it again as a new attempt: one that allows another region runs
// there next; one that does not waits in its place, region_draining.
func TestDrainedRegionRunsItsJobsElsewhere(t *testing.T) {
	r := newRigIn(t, func(string) int { return 5 }, region, west)
	r.dispatch.Health = r.store
	ctx := context.Background()
	roam, err := r.createRoaming("job-roam", "roam", 50, nil, region, west)
	if err != nil {
		t.Fatal(err)
	}
	pinned := r.submitIn(t, "job-pinned", "pinned", region)
	r.drainIn(t, region)
	if got := r.job(t, roam.ID); got.Status != jobs.StatusPending || got.Region != region {
		t.Fatalf("roaming job = %s in %q; want pending in us-east-1 (first by name)", got.Status, got.Region)
	}

	r.cordon(t, region, dynamo.Draining)
	r.drainIn(t, region)
	got := r.job(t, roam.ID)
	if got.Status != jobs.StatusQueued || got.Region != "" || got.AttemptOf() != 2 {
		t.Fatalf("drained roaming job = %s in %q, attempt %d; want queued with no region, attempt 2", got.Status, got.Region, got.AttemptOf())
	}
	if last := got.StatusHistory[len(got.StatusHistory)-1]; !strings.HasPrefix(last.Reason, jobs.ReasonRegionDrained) {
		t.Errorf("drained job's last history entry = %+v; want %s", last, jobs.ReasonRegionDrained)
	}
	if ds, err := r.store.Decisions(ctx, roam.ID, 10); err != nil || !hasDecision(ds, jobs.DecisionRegionDrained) {
		t.Errorf("drained job's decisions = %+v (%v); want %s", ds, err, jobs.DecisionRegionDrained)
	}
	cs, err := r.clusters.Client(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"roam", "pinned"} {
		// Deleted in the foreground: gone, or going once the garbage collector has its pods.
		if k, err := cs.BatchV1().Jobs(r.ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) && (err != nil || k.DeletionTimestamp == nil) {
			t.Errorf("the drained attempt's Job %s is still in the cluster, not being deleted (err %v)", name, err)
		}
	}
	p := r.job(t, pinned.ID)
	if p.Status != jobs.StatusQueued || p.Region != region || p.AttemptOf() != 2 {
		t.Errorf("drained pinned job = %s in %q attempt %d; want queued in us-east-1, attempt 2", p.Status, p.Region, p.AttemptOf())
	}
	r.drainIn(t, west, region)
	if got := r.job(t, roam.ID); got.Status != jobs.StatusPending || got.Region != west || got.AttemptOf() != 2 {
		t.Errorf("drained roaming job after us-west-2's drain = %s in %q attempt %d; want pending in us-west-2, attempt 2", got.Status, got.Region, got.AttemptOf())
	}
	if p := r.job(t, pinned.ID); p.Status != jobs.StatusQueued || p.PendingReason != string(admission.ReasonRegionDraining) {
		t.Errorf("pinned job in the draining region = %s (%s); want queued region_draining", p.Status, p.PendingReason)
	}
}

// hasDecision says whether ds holds a decision of kind k.
func hasDecision(ds []jobs.Decision, k jobs.DecisionKind) bool {
	for _, d := range ds {
		if d.Kind == k {
			return true
		}
	}
	return false
}

// TestHeldTenantWaitsInItsPlace: the operator's hold dispatches none of a tenant's jobs, which
// wait tenant_held, while another tenant's run; released, the held jobs run. Hostile: the hold
// of one tenant never holds another's.
func TestHeldTenantWaitsInItsPlace(t *testing.T) {
	r := newRig(t, 5)
	ctx := context.Background()
	tenants := dynamo.NewTenantStore(r.db, r.tables.Control)
	r.dispatch.Tenants = tenants
	for _, name := range []string{"ml", "web"} {
		if err := tenants.PutTenant(ctx, tenancy.Tenant{Name: name, Org: "acme", Namespaces: []string{r.ns + "-" + name}, Role: tenancy.RoleMember}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tenants.SetHeld(ctx, "ml", true); err != nil {
		t.Fatal(err)
	}
	if err := tenants.SetHeld(ctx, "nobody", true); err == nil {
		t.Error("holding a tenant that does not exist: no error")
	}
	held := r.submit(t, "held", 90, nil)
	now := r.clock.now()
	other := jobs.New("job-other", "web", r.ns, region, 10, nil, []map[string]any{r.manifest("other")}, now)
	if _, _, err := r.store.Create(ctx, other, jobs.Event(outbox.JobQueued, other, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	r.drainIn(t, region)
	if got := r.job(t, held.ID); got.Status != jobs.StatusQueued || got.PendingReason != string(admission.ReasonTenantHeld) {
		t.Errorf("held tenant's job = %s (%s); want queued tenant_held", got.Status, got.PendingReason)
	}
	if got := r.job(t, other.ID); got.Status != jobs.StatusPending {
		t.Errorf("the other tenant's job = %s (%s); want pending: a hold is one tenant's", got.Status, got.PendingReason)
	}
	if err := tenants.SetHeld(ctx, "ml", false); err != nil {
		t.Fatal(err)
	}
	r.clock.skip(quotaTTL + time.Second)
	r.drainIn(t, region)
	if got := r.job(t, held.ID); got.Status != jobs.StatusPending {
		t.Errorf("released tenant's job = %s (%s); want pending", got.Status, got.PendingReason)
	}
}

// TestUnreachedApplyWaitsForItsRegion: an apply that cannot reach the cluster gives the job back
// to the queue, region_unreachable and its dispatch attempts uncounted, and records the region
// missed, so the next drains admit nothing there.
func TestUnreachedApplyWaitsForItsRegion(t *testing.T) {
	r := newRig(t, 5)
	r.dispatch.Health = r.store
	r.dispatch.Clusters = unreachedClusters{}
	j := r.submit(t, "far", 50, nil)
	r.drainIn(t, region)
	got := r.job(t, j.ID)
	if got.Status != jobs.StatusQueued || got.PendingReason != string(admission.ReasonRegionUnreachable) || got.DispatchAttempts != 0 {
		t.Errorf("job = %s (%s), dispatch attempts %d; want queued region_unreachable, none counted", got.Status, got.PendingReason, got.DispatchAttempts)
	}
	hl, err := r.store.Health(context.Background(), []string{region})
	if err != nil || hl[region].Failures != 1 || hl[region].Closed() != admission.ReasonRegionUnreachable {
		t.Errorf("health = %+v (%v); want one failure, closed unreachable", hl[region], err)
	}
}

// unreachedClusters reaches a cluster whose API server is not listening (port 1 of loopback).
type unreachedClusters struct{}

func (unreachedClusters) Dynamic(context.Context, string) (dynamic.Interface, error) {
	return dynamic.NewForConfig(&rest.Config{Host: "https://127.0.0.1:1", Timeout: 5 * time.Second})
}
