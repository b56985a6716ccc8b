package reconcile_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/reconcile"
)

// endSeen bounds how long after its Job completes a watching beat may take to record the end. The
// goal is two seconds at the median; one end on a machine others share gets twice that.
const endSeen = 4 * time.Second

// TestWatchRecordsEndsAsTheyHappen: after its pass, a beat with Watch set records a job's end
// within seconds of its Job completing, once, rings dispatch for the room and the webhook queue
// for the event, and returns when its window is over. A beat that arrives meanwhile without a
// watch of its own finds the lease held and does nothing.
func TestWatchRecordsEndsAsTheyHappen(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	for i := range 3 {
		if err := setupJob(ctx, r.store, r.kc, r.ns, i); err != nil {
			t.Fatal(err)
		}
	}
	rings, bell := &ringCounter{}, &bellCounter{}
	h := r.instance(r.store, rings, time.Now)
	h.Watch, h.Bell = 8*time.Second, bell
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- h.HandleBeat(ctx, events.EventBridgeEvent{ID: "watching"}) }()

	time.Sleep(2 * time.Second) // the pass is over; the watch is on
	spy := &readSpy{JobStore: r.store, prefix: "job-" + r.ns + "-"}
	other := r.instance(spy, &ringCounter{}, time.Now)
	began := time.Now()
	if err := other.HandleBeat(ctx, events.EventBridgeEvent{ID: "overlapping"}); err != nil {
		t.Fatalf("a beat overlapping a watching one: %v", err)
	}
	if took, read := time.Since(began), spy.ours(); took > time.Second || len(read) > 0 {
		t.Errorf("a beat overlapping a watching one took %s and read %v; want it to do nothing at once", took, read)
	}

	for i := range 2 {
		ended := time.Now()
		complete(t, r.kc, r.ns, benchName(i))
		waitStatus(t, r.store, r.id(i), jobs.StatusSucceeded, ended, endSeen)
	}
	if rings.n() < 1 || bell.n() < 1 {
		t.Errorf("after two ends the watch rang dispatch %d times and the webhook queue %d; want each at least once", rings.n(), bell.n())
	}
	if err := <-done; err != nil {
		t.Fatalf("the watching beat: %v", err)
	}
	if took := time.Since(start); took < h.Watch-time.Second || took > h.Watch+3*time.Second {
		t.Errorf("a beat watching for %s returned after %s", h.Watch, took)
	}
	for i := range 2 {
		if n := completedEvents(t, r.db, r.tables, r.id(i)); n != 1 {
			t.Errorf("%s has %d job.completed events, want 1", r.id(i), n)
		}
	}
	if got := status(t, r.store, r.id(2)); got != jobs.StatusRunning {
		t.Errorf("%s, whose Job still runs, is %s; want running", r.id(2), got)
	}
}

// TestWatchHandsOver: a watching beat that finds the lease held waits for the beat before it to
// let go, then passes and watches in turn.
func TestWatchHandsOver(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	if err := setupJob(ctx, r.store, r.kc, r.ns, 0); err != nil {
		t.Fatal(err)
	}
	first, second := r.instance(r.store, &ringCounter{}, time.Now), r.instance(r.store, &ringCounter{}, time.Now)
	first.Watch, second.Watch = 2*time.Second, 6*time.Second
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = first.HandleBeat(ctx, events.EventBridgeEvent{ID: "first"}) })
	time.Sleep(500 * time.Millisecond)
	wg.Go(func() { errs[1] = second.HandleBeat(ctx, events.EventBridgeEvent{ID: "second"}) })
	time.Sleep(3 * time.Second) // the first has let go; the second watches
	ended := time.Now()
	complete(t, r.kc, r.ns, benchName(0))
	waitStatus(t, r.store, r.id(0), jobs.StatusSucceeded, ended, endSeen)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("beat %d: %v", i, err)
		}
	}
}

// TestWatchStopsWhenItsLeaseIsTaken: a watching beat whose lease another beat has taken (its own
// ran out under it, say) stops within a renewal, acting no more, and leaves the other's lease be.
func TestWatchStopsWhenItsLeaseIsTaken(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	if err := setupJob(ctx, r.store, r.kc, r.ns, 0); err != nil {
		t.Fatal(err)
	}
	h := r.instance(r.store, &ringCounter{}, time.Now)
	h.Watch = 40 * time.Second
	done := make(chan error, 1)
	go func() { done <- h.HandleBeat(ctx, events.EventBridgeEvent{ID: "watching"}) }()
	time.Sleep(time.Second)
	leases := dynamo.NewLeaseStore(r.db, r.tables.Control)
	// Two minutes on, the watching beat's lease has run out as far as the other beat can tell.
	later := time.Now().Add(2 * time.Minute)
	if ok, err := leases.Acquire(ctx, "reconcile", "intruder", later, later.Add(time.Hour)); err != nil || !ok {
		t.Fatalf("taking the lease from the watching beat = %v, %v; want true", ok, err)
	}
	taken := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("the beat that lost its lease answered %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("a watching beat went on for %s after its lease was taken; want it to stop within a renewal", time.Since(taken).Round(time.Second))
	}
	complete(t, r.kc, r.ns, benchName(0))
	time.Sleep(2 * time.Second)
	if got := status(t, r.store, r.id(0)); got != jobs.StatusRunning {
		t.Errorf("after the watching beat stopped, %s was recorded %s; want nobody acting on it", r.id(0), got)
	}
	if ok, err := leases.Acquire(ctx, "reconcile", "third", time.Now(), time.Now().Add(time.Minute)); err != nil || ok {
		t.Errorf("a third beat took the lease (%v, %v): the stopped beat released the intruder's lease", ok, err)
	}
}

// waitStatus waits until job id's record is in status want, failing when that takes longer than
// within after since.
func waitStatus(t *testing.T, store *dynamo.JobStore, id string, want jobs.Status, since time.Time, within time.Duration) {
	t.Helper()
	for time.Since(since) <= within {
		if status(t, store, id) == want {
			t.Logf("%s recorded %s %s after its Job moved", id, want, time.Since(since).Round(10*time.Millisecond))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%s is %s %s after its Job moved; want %s within %s", id, status(t, store, id), time.Since(since).Round(time.Millisecond), want, within)
}

// benchName is the name of setupJob's Job number i.
func benchName(i int) string { return fmt.Sprintf("bench-%04d", i) }

// bellCounter counts the webhook queue's rings.
type bellCounter struct{ ringCounter }

func (b *bellCounter) RingDrain(ctx context.Context) error { return b.Ring(ctx, "") }

var _ reconcile.WebhookBell = (*bellCounter)(nil)
