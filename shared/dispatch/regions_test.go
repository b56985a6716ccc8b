package dispatch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

const west = "us-west-2"

// createRoaming stores queued job id that may run in any of regions, as the API stores one
// submitted with regions.
func (r rig) createRoaming(id, name string, priority int, spot *jobs.Spot, regions ...string) (jobs.Job, error) {
	return r.roamingJob(id, name, priority, spot, nil, "", regions)
}

// createRoamingWith is createRoaming with the Job's manifest edited first, and no cap.
func (r rig) createRoamingWith(id, name string, priority int, edit func(map[string]any), regions ...string) (jobs.Job, error) {
	return r.roamingJob(id, name, priority, nil, edit, "", regions)
}

// roamingJob stores queued job id that may run in any of regions, capped by spot, with its
// manifest edited by edit first and on_region_lost set to lost.
func (r rig) roamingJob(id, name string, priority int, spot *jobs.Spot, edit func(map[string]any), lost string, regions []string) (jobs.Job, error) {
	m := r.manifest(name)
	if edit != nil {
		edit(m)
	}
	now := r.clock.now()
	j := jobs.New(id, "ml", r.ns, "", priority, nil, []map[string]any{m}, now)
	j.Spot, j.Regions, j.OnRegionLost = spot, regions, lost
	_, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now)
	return j, err
}

// prices sets g5.xlarge's spot price in each region given.
func (r rig) prices(t *testing.T, byRegion map[string]float64) {
	t.Helper()
	for reg, p := range byRegion {
		if err := r.book.Set(reg, "g5.xlarge", p, r.clock.now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
}

func (r rig) drainIn(t *testing.T, regions ...string) {
	t.Helper()
	for _, reg := range regions {
		if err := r.dispatch.Drain(context.Background(), reg); err != nil {
			t.Fatalf("Drain(%s): %v", reg, err)
		}
	}
}

var capped = &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.60}

// TestRegionChoiceCheapest is the first case: a job allowed in us-east-1 and us-west-2,
// priced 0.50 and 0.30, runs in us-west-2, whichever region's drain sees it first; the record
// says where and why.
func TestRegionChoiceCheapest(t *testing.T) {
	r := newRigIn(t, func(string) int { return 5 }, region, west)
	r.prices(t, map[string]float64{region: 0.50, west: 0.30})
	j, err := r.createRoaming("job-roam", "roam", 50, capped, region, west)
	if err != nil {
		t.Fatal(err)
	}
	rung := &ringLog{next: r.reconcile.Ringer}
	r.dispatch.Ringer = rung
	r.drainIn(t, region) // the dearer region's drain passes it on
	if got := r.job(t, j.ID); got.Status != jobs.StatusQueued || got.Region != "" {
		t.Fatalf("after us-east-1's drain, job = %s in %q; want queued with no region (us-west-2 is cheaper)", got.Status, got.Region)
	}
	if got := rung.rung(); !slices.Equal(got, []string{west}) {
		t.Errorf("us-east-1's drain rang %v; want us-west-2, where it passed the job", got)
	}
	r.drainIn(t, west)
	got := r.job(t, j.ID)
	if got.Status != jobs.StatusPending || got.Region != west {
		t.Fatalf("after us-west-2's drain, job = %s in %q; want pending in us-west-2", got.Status, got.Region)
	}
	c := got.RegionChoice
	if c == nil || c.Region != west || c.Reason != admission.RegionLowestPrice || len(c.Views) != 2 {
		t.Fatalf("region_choice = %+v; want us-west-2 for %s with both regions' views", c, admission.RegionLowestPrice)
	}
	if v := c.Views[0]; v.Region != region || v.Price == nil || *v.Price != 0.50 || v.Wait != admission.WaitHigherPrice {
		t.Errorf("us-east-1's view = %+v; want price 0.50, passed over for %s", v, admission.WaitHigherPrice)
	}
	if active, _ := r.store.Active(context.Background(), west); len(active) != 1 || active[0].ID != j.ID {
		t.Errorf("us-west-2's active jobs = %v; want the roaming job, which holds its room", active)
	}
}

// TestRegionChoiceFull is the second case: with us-west-2 at capacity, the job runs in
// us-east-1 although us-west-2 is cheaper, whichever drain comes first.
func TestRegionChoiceFull(t *testing.T) {
	for _, order := range [][]string{{region, west, region}, {west, region}} {
		t.Run(order[0]+" first", func(t *testing.T) {
			r := newRigIn(t, func(reg string) int { return map[string]int{region: 5, west: 1}[reg] }, region, west)
			r.prices(t, map[string]float64{region: 0.50, west: 0.30})
			// us-west-2's one slot is taken by a job of its own.
			filler := r.submitIn(t, "job-filler", "filler", west)
			r.drainIn(t, west)
			if got := r.job(t, filler.ID); got.Status != jobs.StatusPending {
				t.Fatalf("filler = %s; want pending in us-west-2", got.Status)
			}
			j, err := r.createRoaming("job-roam", "roam", 50, capped, region, west)
			if err != nil {
				t.Fatal(err)
			}
			r.drainIn(t, order...)
			got := r.job(t, j.ID)
			if got.Status != jobs.StatusPending || got.Region != region {
				t.Fatalf("after drains %v, job = %s in %q (%s); want pending in us-east-1", order, got.Status, got.Region, got.PendingReason)
			}
			c := got.RegionChoice
			if c == nil || c.Region != region || c.Reason != admission.RegionOnly || c.Views[1].Wait != admission.WaitNoRoom {
				t.Errorf("region_choice = %+v; want us-east-1 as the only open region with room, us-west-2 %s", c, admission.WaitNoRoom)
			}
		})
	}
}

// TestRegionChoiceWaits: with every allowed region's price above the cap the job waits, its
// pending_reason saying so across them, each region's view saying why; with the cheaper one
// full and the other above the cap, it waits for room.
func TestRegionChoiceWaits(t *testing.T) {
	r := newRigIn(t, func(reg string) int { return map[string]int{region: 5, west: 0}[reg] }, region, west)
	r.prices(t, map[string]float64{region: 0.90, west: 0.70})
	j, err := r.createRoaming("job-roam", "roam", 50, capped, region, west)
	if err != nil {
		t.Fatal(err)
	}
	r.drainIn(t, region, west)
	got := r.job(t, j.ID)
	if got.Status != jobs.StatusQueued || got.PendingReason != string(admission.ReasonNoRegionOpen) {
		t.Fatalf("job = %s, %q; want queued, %s", got.Status, got.PendingReason, admission.ReasonNoRegionOpen)
	}
	if c := got.RegionChoice; c == nil || c.Region != "" || len(c.Views) != 2 || c.Views[0].Wait != string(admission.ReasonSpotPriceAboveCap) {
		t.Fatalf("region_choice = %+v; want no region, each view above the cap", c)
	}
	r.prices(t, map[string]float64{west: 0.30})
	r.clock.skip(2 * time.Minute) // past the price reader's cache
	// us-west-2, with no free slot, reads no roaming job: its drain keeps its summary (no room),
	// which us-east-1's next drain reads to say why the job waits.
	r.drainIn(t, region, west, region)
	if got := r.job(t, j.ID); got.Status != jobs.StatusQueued || got.PendingReason != string(admission.ReasonNoRegionWithRoom) {
		t.Fatalf("job = %s, %q; want queued, %s (us-west-2 open but has no room)", got.Status, got.PendingReason, admission.ReasonNoRegionWithRoom)
	}
}

// submitIn stores a queued job of region reg, as submit does for the rig's own region.
func (r rig) submitIn(t *testing.T, id, name, reg string) jobs.Job {
	t.Helper()
	j, err := r.createIn(id, name, 50, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// left are the rig's jobs not yet finished, in every region the dispatcher knows and roaming.
func (r rig) left(t *testing.T) (queued, active []jobs.Job) {
	t.Helper()
	ctx := context.Background()
	roaming, err := r.store.Roaming(ctx)
	if err != nil {
		t.Fatalf("Roaming: %v", err)
	}
	queued = roaming
	for reg := range r.dispatch.Regions {
		var q []jobs.Job
		for _, part := range dynamo.WaitingQueues(reg) {
			for after := ""; ; {
				page, err := r.store.QueuePage(ctx, part, after, 100)
				if err != nil {
					t.Fatalf("QueuePage(%s): %v", part, err)
				}
				q = append(q, page.Jobs...)
				if after = page.Next; after == "" {
					break
				}
			}
		}
		a, err := r.store.Active(ctx, reg)
		if err != nil {
			t.Fatalf("Active(%s): %v", reg, err)
		}
		queued, active = append(queued, q...), append(active, a...)
	}
	return queued, active
}

// createIn is createWith for a job of region reg, without a cap.
func (r rig) createIn(id, name string, priority int, edit func(map[string]any), reg string) (jobs.Job, error) {
	m := r.manifest(name)
	if edit != nil {
		edit(m)
	}
	now := r.clock.now()
	j := jobs.New(id, "ml", r.ns, reg, priority, nil, []map[string]any{m}, now)
	_, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now)
	return j, err
}

// ringLog rings through next and keeps the regions it rang.
type ringLog struct {
	next    Ringer
	mu      sync.Mutex
	regions []string
}

func (l *ringLog) Ring(ctx context.Context, region string) error {
	l.mu.Lock()
	l.regions = append(l.regions, region)
	l.mu.Unlock()
	return l.next.Ring(ctx, region)
}

func (l *ringLog) rung() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.regions)
}
