package dispatch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
)

// downSet is the regions whose API servers are stopped, as every process sees them.
type downSet struct {
	mu   sync.Mutex
	down map[string]bool
}

func (d *downSet) set(region string, down bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down == nil {
		d.down = map[string]bool{}
	}
	d.down[region] = down
}

func (d *downSet) isDown(region string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.down[region]
}

// outage reaches each region through next, except those down, reached at a loopback port nothing
// listens on: a region's API server stopped, as the beat and the drains see it.
type outage struct {
	next reconcile.Clusters
	*downSet
}

var nowhere = &rest.Config{Host: "https://127.0.0.1:1", Timeout: 5 * time.Second}

func (o *outage) Client(ctx context.Context, region string) (kubernetes.Interface, error) {
	if o.isDown(region) {
		return kubernetes.NewForConfig(nowhere)
	}
	return o.next.Client(ctx, region)
}

func (o *outage) Dynamic(ctx context.Context, region string) (dynamic.Interface, error) {
	if o.isDown(region) {
		return dynamic.NewForConfig(nowhere)
	}
	return o.next.Dynamic(ctx, region)
}

// beat runs one beat of the rig's reconcile handler.
func (r rig) beat(t *testing.T) {
	t.Helper()
	if err := r.reconcile.HandleBeat(context.Background(), events.EventBridgeEvent{ID: fmt.Sprint("beat-", r.clock.now().UnixNano())}); err != nil {
		t.Logf("HandleBeat: %v", err) // a region out of reach fails the beat; the next goes on
	}
}

// TestLostRegionRequeuesWhatAsks is a region lost and back: while its cluster is out of reach it
// admits nothing (its queued jobs wait region_unreachable); once lost, its running job that asks
// (on_region_lost: requeue) and allows another region is queued again as a new attempt, the lost
// one fenced, and runs in the other region, while the jobs that did not ask stay, waiting for it.
// Back, the fenced attempt's objects are deleted before the region admits again, and the job's
// trail says so; no job is recorded twice.
func TestLostRegionRequeuesWhatAsks(t *testing.T) {
	r := newRigIn(t, func(string) int { return 5 }, region, west)
	ctx := context.Background()
	down := &outage{next: r.clusters, downSet: &downSet{}}
	r.dispatch.Health, r.dispatch.Clusters = r.store, down
	r.reconcile.Health, r.reconcile.Fences, r.reconcile.Clusters, r.reconcile.LostAfter = r.store, r.store, down, 5*time.Minute
	lost := func(j jobs.Job) jobs.Job { j.OnRegionLost = jobs.OnRegionLostRequeue; return j }
	asks := r.roamingWith(t, "job-asks", "asks", lost, region, west)
	waits := r.roamingWith(t, "job-waits", "waits", nil, region, west)
	pinned := r.roamingWith(t, "job-pinned", "pinned", lost, region)
	r.drainIn(t, region)
	for _, j := range []jobs.Job{asks, waits, pinned} {
		if got := r.job(t, j.ID); got.Status != jobs.StatusPending || got.Region != region {
			t.Fatalf("%s = %s in %q; want pending in us-east-1", j.ID, got.Status, got.Region)
		}
	}

	down.set(region, true)
	r.beat(t)
	later := r.submitIn(t, "job-later", "later", region)
	r.clock.skip(gateTTL + time.Second)
	r.drainIn(t, region)
	if got := r.job(t, later.ID); got.Status != jobs.StatusQueued || got.PendingReason != string(admission.ReasonRegionUnreachable) {
		t.Errorf("job queued in the unreached region = %s (%s); want queued region_unreachable", got.Status, got.PendingReason)
	}
	if got := r.job(t, asks.ID); got.Status != jobs.StatusPending || got.Region != region {
		t.Errorf("before the region is lost, %s = %s in %q; want left pending there", asks.ID, got.Status, got.Region)
	}

	r.clock.skip(6 * time.Minute)
	r.beat(t)
	got := r.job(t, asks.ID)
	if got.Status != jobs.StatusQueued || got.Region != "" || got.AttemptOf() != 2 {
		t.Fatalf("once the region is lost, %s = %s in %q attempt %d; want queued with no region, attempt 2", asks.ID, got.Status, got.Region, got.AttemptOf())
	}
	if last := got.StatusHistory[len(got.StatusHistory)-1]; !strings.HasPrefix(last.Reason, jobs.ReasonRegionLost+": its region us-east-1 was unreached for") {
		t.Errorf("%s's last history entry = %+v; want region_lost", asks.ID, last)
	}
	for _, j := range []jobs.Job{waits, pinned} {
		if got := r.job(t, j.ID); got.Status != jobs.StatusPending || got.Region != region || got.AttemptOf() != 1 {
			t.Errorf("%s (no requeue, or nowhere else) = %s in %q attempt %d; want left pending in us-east-1", j.ID, got.Status, got.Region, got.AttemptOf())
		}
	}
	fences, err := r.store.Fences(ctx, region)
	if err != nil || len(fences) != 1 || fences[0].JobID != asks.ID || fences[0].Attempt != 1 {
		t.Fatalf("fences in us-east-1 = %+v (%v); want %s's attempt 1", fences, err, asks.ID)
	}
	r.beat(t) // lost still: nothing moves twice
	if got := r.job(t, asks.ID); got.AttemptOf() != 2 {
		t.Errorf("a second beat of the lost region moved %s again: attempt %d", asks.ID, got.AttemptOf())
	}
	r.drainIn(t, west)
	if got := r.job(t, asks.ID); got.Status != jobs.StatusPending || got.Region != west || got.AttemptOf() != 2 {
		t.Fatalf("%s after us-west-2's drain = %s in %q attempt %d; want pending in us-west-2, attempt 2", asks.ID, got.Status, got.Region, got.AttemptOf())
	}

	// The fenced attempt reports nothing: an end written for it, as a beat that read the job
	// before the move would write it, is refused.
	_, c, err := jobs.Move(withStatus(asks, jobs.StatusPending, region), jobs.StatusSucceeded, "from the fenced attempt", r.clock.now())
	if err != nil {
		t.Fatal(err)
	}
	stale := withStatus(asks, jobs.StatusPending, region)
	stale.Attempt = 1
	if err := r.store.Apply(ctx, stale, c); err == nil {
		t.Error("an end for the fenced attempt in us-east-1 was recorded")
	}

	down.set(region, false)
	r.beat(t)
	if fences, err := r.store.Fences(ctx, region); err != nil || len(fences) != 0 {
		t.Errorf("fences after the region came back = %+v (%v); want none", fences, err)
	}
	if ds, err := r.store.Decisions(ctx, asks.ID, 20); err != nil || !hasDecision(ds, jobs.DecisionRegionLost) || !hasDecision(ds, jobs.DecisionFenceCleared) {
		t.Errorf("%s's decisions = %+v (%v); want region_lost and fenced_attempt_deleted", asks.ID, ds, err)
	}
	hl, err := r.store.Health(ctx, []string{region})
	if err != nil || hl[region].Closed() != "" {
		t.Errorf("us-east-1's health after its return = %+v (%v); want admitting", hl[region], err)
	}
	r.clock.skip(gateTTL + time.Second)
	r.drainIn(t, region)
	if got := r.job(t, later.ID); got.Status != jobs.StatusPending {
		t.Errorf("job queued in us-east-1 after its return = %s (%s); want pending", got.Status, got.PendingReason)
	}
}

// roamingWith stores queued job id allowed in regions, edited by edit first.
func (r rig) roamingWith(t *testing.T, id, name string, edit func(jobs.Job) jobs.Job, regions ...string) jobs.Job {
	t.Helper()
	now := r.clock.now()
	j := jobs.New(id, "ml", r.ns, "", 50, nil, []map[string]any{r.manifest(name)}, now)
	j.Regions = regions
	if len(regions) == 1 {
		j.Region, j.Regions = regions[0], nil
	}
	if edit != nil {
		j = edit(j)
	}
	if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	return j
}

func withStatus(j jobs.Job, s jobs.Status, region string) jobs.Job {
	j.Status, j.Region = s, region
	return j
}
