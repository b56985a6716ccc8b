package dispatch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// TestKnockedDrainDrainsAgain: a drain rung while another drain of its region runs (as
// concurrent dispatch functions are in AWS) does not drop its ring: it knocks, and the running
// drain reads afresh and dispatches what came meanwhile before it lets its lease go. The job
// submitted during the first drain's reads is dispatched by that same Drain call.
func TestKnockedDrainDrainsAgain(t *testing.T) {
	r := newRig(t, 10)
	ctx := context.Background()
	other := &Handler{Regions: r.dispatch.Regions, Capacity: r.dispatch.Capacity, Store: r.store,
		Leases: r.dispatch.Leases, Prices: r.dispatch.Prices, Clusters: r.dispatch.Clusters, Log: r.dispatch.Log, Now: r.dispatch.Now}
	var late jobs.Job
	ks := &knockingStore{Store: r.dispatch.Store, during: func() {
		// After the running drain read its queue: a job comes, and its ring reaches another drain.
		var err error
		if late, err = r.create("job-knock-late", "knock-late", 50, nil); err != nil {
			t.Error(err)
		}
		if err := other.Drain(ctx, region); err != nil {
			t.Errorf("the second drain: %v", err)
		}
	}}
	r.dispatch.Store = ks
	if _, err := r.create("job-knock-first", "knock-first", 50, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	if n := ks.claims.Load(); n != 2 {
		t.Errorf("the knocked drain claimed %d jobs, want 2: the first, and the one submitted as it ran", n)
	}
	j, err := r.store.Job(ctx, late.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Status; got == jobs.StatusQueued {
		t.Errorf("the job whose ring found its region draining is still %s after that drain, want dispatched", got)
	}
	now := time.Now()
	if ok, err := r.dispatch.Leases.Acquire(ctx, "dispatch#"+region, "test", now, now.Add(time.Minute)); err != nil || !ok {
		t.Errorf("after the drains the region's lease is held (%v, %v), want it free", ok, err)
	}
}

// knockingStore is the real store, calling during once, on its first claim: while a drain runs,
// past its reads of the queue.
type knockingStore struct {
	Store
	during func()
	claims atomic.Int32
}

func (s *knockingStore) ClaimOn(ctx context.Context, id, region, flavor, token string, now, until time.Time) (jobs.Job, error) {
	j, err := s.Store.ClaimOn(ctx, id, region, flavor, token, now, until)
	if s.claims.Add(1) == 1 {
		s.during()
	}
	return j, err
}

// TestDrainReleasesIdle: a drain that admits its queue's last job releases its lease not idle
// (its apply may put the job back), the next, finding nothing waiting, idle; one that leaves a job
// waiting for room, not idle: an end there must ring it.
func TestDrainReleasesIdle(t *testing.T) {
	r := newRig(t, 2)
	leases := dynamo.NewLeaseStore(r.db, r.tables.Control)
	idle := func() bool {
		t.Helper()
		ok, err := leases.Idle(context.Background(), dynamo.DrainLease(region))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	drain := func() {
		t.Helper()
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
	}
	r.submit(t, "first", jobs.DefaultPriority, nil)
	drain()
	if idle() {
		t.Error("the drain that admitted the queue's last job released idle")
	}
	drain()
	if !idle() {
		t.Error("a drain that found nothing waiting did not release idle")
	}
	r.submit(t, "second", jobs.DefaultPriority, nil)
	r.submit(t, "third", jobs.DefaultPriority, nil)
	drain() // capacity 2, the first still active: the second starts, the third waits
	if idle() {
		t.Error("a drain that left a job waiting for room released idle")
	}
}
