package reconcile_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// detailGate is the real job store, but an end's details (the second write of an end) wait for
// release, or fail while failing is set; it counts the BatchGetItems of whole records that read
// any of the test's own jobs (prefix): other tests' Jobs in the shared cluster are watched too.
type detailGate struct {
	*dynamo.JobStore
	release chan struct{}
	failing bool
	prefix  string

	mu      sync.Mutex
	records int
	delay   time.Duration
}

func (g *detailGate) Apply(ctx context.Context, j jobs.Job, c jobs.Change) error {
	if c.Detailed {
		if g.failing {
			return errors.New("the function stopped before the end's details")
		}
		if g.release != nil {
			<-g.release
		}
	}
	return g.JobStore.Apply(ctx, j, c)
}

func (g *detailGate) Records(ctx context.Context, ids []string) ([]jobs.Job, error) {
	if slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, g.prefix) }) {
		g.mu.Lock()
		g.records++
		g.mu.Unlock()
		time.Sleep(g.delay)
	}
	return g.JobStore.Records(ctx, ids)
}

func (g *detailGate) reads() int { g.mu.Lock(); defer g.mu.Unlock(); return g.records }

// TestEndIsWrittenBeforeItsDetails: a watched job's end is written, and dispatch rung for its
// room, before its details are read and added; the details follow once they can be, in a second
// write, and the end has one event.
func TestEndIsWrittenBeforeItsDetails(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	if err := setupJob(ctx, r.store, r.kc, r.ns, 0); err != nil {
		t.Fatal(err)
	}
	gate := &detailGate{JobStore: r.store, release: make(chan struct{})}
	rings := &ringCounter{}
	h := r.instance(gate, rings, time.Now)
	h.Watch = 6 * time.Second
	done := make(chan error, 1)
	go func() { done <- h.HandleBeat(ctx, events.EventBridgeEvent{ID: "watching"}) }()

	time.Sleep(2 * time.Second) // the pass is over; the watch is on
	ended := time.Now()
	complete(t, r.kc, r.ns, benchName(0))
	waitStatus(t, r.store, r.id(0), jobs.StatusSucceeded, ended, endSeen)
	j, err := r.store.Job(ctx, r.id(0))
	if err != nil {
		t.Fatal(err)
	}
	if !j.DetailsDue || len(j.ClusterJobs) != 0 {
		t.Errorf("with its details held back, the end is recorded with details due %v and %d Jobs kept; want due, none kept", j.DetailsDue, len(j.ClusterJobs))
	}
	for deadline := time.Now().Add(2 * time.Second); rings.n() == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if rings.n() == 0 {
		t.Error("dispatch was not rung for the end's room before its details were added")
	}
	close(gate.release)
	if err := <-done; err != nil {
		t.Fatalf("the watching beat: %v", err)
	}
	if j, err = r.store.Job(ctx, r.id(0)); err != nil {
		t.Fatal(err)
	}
	if j.DetailsDue || len(j.ClusterJobs) != 1 || j.ClusterJobs[0].Succeeded != 1 {
		t.Errorf("after its details: due %v, Jobs kept %+v; want none due and its one Job, succeeded", j.DetailsDue, j.ClusterJobs)
	}
	if n := completedEvents(t, r.db, r.tables, r.id(0)); n != 1 {
		t.Errorf("%s has %d job.completed events, want 1", r.id(0), n)
	}
}

// TestNoRingForAnIdleRegion: an end in a region whose last drain found nothing waiting (its lease
// released idle) is recorded without ringing dispatch, which would find nothing to do; once a
// drain holds the lease again (a submission rang it), an end rings as before.
func TestNoRingForAnIdleRegion(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	for i := range 2 {
		if err := setupJob(ctx, r.store, r.kc, r.ns, i); err != nil {
			t.Fatal(err)
		}
	}
	leases := dynamo.NewLeaseStore(r.db, r.tables.Control)
	name := dynamo.DrainLease(benchRegion)
	if ok, err := leases.Acquire(ctx, name, "drain-1", time.Now(), time.Now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("taking the drain lease: %v, %v", ok, err)
	}
	if _, err := leases.ReleaseUnlessKnocked(ctx, name, "drain-1", true); err != nil {
		t.Fatal(err)
	}
	rings := &ringCounter{}
	h := r.instance(r.store, rings, time.Now)
	complete(t, r.kc, r.ns, benchName(0))
	if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: "idle"}); err != nil {
		t.Fatal(err)
	}
	if j, err := r.store.Job(ctx, r.id(0)); err != nil || j.Status != jobs.StatusSucceeded {
		t.Fatalf("the end in the idle region: %s, %v; want it recorded", j.Status, err)
	}
	if n := rings.n(); n != 0 {
		t.Errorf("an end in an idle region rang dispatch %d times; want none", n)
	}
	if ok, err := leases.Acquire(ctx, name, "drain-2", time.Now(), time.Now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("taking the drain lease again: %v, %v", ok, err)
	}
	complete(t, r.kc, r.ns, benchName(1))
	if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: "busy"}); err != nil {
		t.Fatal(err)
	}
	if n := rings.n(); n == 0 {
		t.Error("an end with a drain holding the region's lease rang nothing; want a ring")
	}
}

// TestDetailsLeftDueAreAddedByTheNextBeat: an instance that writes an end and stops before its
// details leaves them due, and the objects in place; a new instance's first beat adds them, with
// no second event, and a beat after that has nothing left to add.
func TestDetailsLeftDueAreAddedByTheNextBeat(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	if err := setupJob(ctx, r.store, r.kc, r.ns, 0); err != nil {
		t.Fatal(err)
	}
	complete(t, r.kc, r.ns, benchName(0))
	stopped := r.instance(&detailGate{JobStore: r.store, failing: true}, &ringCounter{}, time.Now)
	_ = stopped.HandleBeat(ctx, events.EventBridgeEvent{ID: "stops-between"}) // its error is the stop's
	j, err := r.store.Job(ctx, r.id(0))
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != jobs.StatusSucceeded || !j.DetailsDue || len(j.ClusterJobs) != 0 {
		t.Fatalf("after a beat that stopped between the two writes: %s, details due %v, %d Jobs kept; want succeeded, due, none",
			j.Status, j.DetailsDue, len(j.ClusterJobs))
	}
	if _, err := r.kc.BatchV1().Jobs(r.ns).Get(ctx, benchName(0), metav1.GetOptions{}); err != nil {
		t.Fatalf("the Job of an end whose details are due is gone: %v", err)
	}

	next := r.instance(r.store, &ringCounter{}, time.Now)
	if err := next.HandleBeat(ctx, events.EventBridgeEvent{ID: "next"}); err != nil {
		t.Fatalf("the next instance's beat: %v", err)
	}
	if j, err = r.store.Job(ctx, r.id(0)); err != nil {
		t.Fatal(err)
	}
	if j.DetailsDue || len(j.ClusterJobs) != 1 || j.ClusterJobs[0].Succeeded != 1 {
		t.Errorf("after the next beat: details due %v, Jobs kept %+v; want none due and its one Job, succeeded", j.DetailsDue, j.ClusterJobs)
	}
	if n := completedEvents(t, r.db, r.tables, r.id(0)); n != 1 {
		t.Errorf("%s has %d job.completed events, want 1", r.id(0), n)
	}
	spy := &readSpy{JobStore: r.store, prefix: "job-" + r.ns + "-"}
	after := r.instance(spy, &ringCounter{}, time.Now)
	if err := after.HandleBeat(ctx, events.EventBridgeEvent{ID: "after"}); err != nil {
		t.Fatal(err)
	}
	if err := after.HandleBeat(ctx, events.EventBridgeEvent{ID: "after-again"}); err != nil {
		t.Fatal(err)
	}
	spy.reset()
	if err := after.HandleBeat(ctx, events.EventBridgeEvent{ID: "quiet"}); err != nil {
		t.Fatal(err)
	}
	if read := spy.ours(); len(read) != 0 {
		t.Errorf("once its details were added, a quiet beat read %v; want none", read)
	}
}

// slowRinger counts rings, each of which takes a while, as a queue's send may.
type slowRinger struct{ ringCounter }

func (s *slowRinger) Ring(ctx context.Context, region string) error {
	time.Sleep(150 * time.Millisecond)
	return s.ringCounter.Ring(ctx, region)
}

// TestWatchTakesEndsTogether: ends that come while the watch reads the records of others are
// read together, in one BatchGetItem, and rung for together; each is recorded once.
func TestWatchTakesEndsTogether(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	const n = 10
	for i := range n {
		if err := setupJob(ctx, r.store, r.kc, r.ns, i); err != nil {
			t.Fatal(err)
		}
	}
	gate := &detailGate{JobStore: r.store, delay: 300 * time.Millisecond, prefix: "job-" + r.ns + "-"}
	rings := &slowRinger{}
	h := r.instance(gate, rings, time.Now)
	h.Watch, h.FollowDepth = 8*time.Second, 1
	done := make(chan error, 1)
	go func() { done <- h.HandleBeat(ctx, events.EventBridgeEvent{ID: "watching"}) }()

	time.Sleep(2 * time.Second) // the pass is over; the watch is on
	before := gate.reads()
	ended := time.Now()
	for i := range n {
		complete(t, r.kc, r.ns, benchName(i))
	}
	for i := range n {
		waitStatus(t, r.store, r.id(i), jobs.StatusSucceeded, ended, 3*endSeen)
	}
	if err := <-done; err != nil {
		t.Fatalf("the watching beat: %v", err)
	}
	if reads := gate.reads() - before; reads < 1 || reads > n/2 {
		t.Errorf("%d ends coming together took %d reads of whole records; want them read together, in at most %d", n, reads, n/2)
	}
	if rung := rings.n(); rung < 1 || rung > n/2 {
		t.Errorf("%d ends coming together rang dispatch %d times; want at least once and at most %d", n, rung, n/2)
	}
	for i := range n {
		if c := completedEvents(t, r.db, r.tables, r.id(i)); c != 1 {
			t.Errorf("%s has %d job.completed events, want 1", r.id(i), c)
		}
	}
}

// slowPass is the real job store whose reads of the records no LIST shows, which a warm beat's
// pass makes first, take delay.
type slowPass struct {
	*dynamo.JobStore
	delay time.Duration
}

func (s *slowPass) Unlisted(ctx context.Context, region string) ([]jobs.Job, error) {
	time.Sleep(s.delay)
	return s.JobStore.Unlisted(ctx, region)
}

// TestNextBeatResumesTheWatch: a job that ends between two beats of one process is recorded by
// the second beat's watch, resumed where the first's left off, while the second beat's pass is
// still reading; once, with one event.
func TestNextBeatResumesTheWatch(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	for i := range 2 {
		if err := setupJob(ctx, r.store, r.kc, r.ns, i); err != nil {
			t.Fatal(err)
		}
	}
	slow := &slowPass{JobStore: r.store}
	h := r.instance(slow, &ringCounter{}, time.Now)
	h.Watch = 2 * time.Second
	if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: "first"}); err != nil {
		t.Fatal(err)
	}
	complete(t, r.kc, r.ns, benchName(0)) // between the two beats

	slow.delay = 4 * time.Second
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- h.HandleBeat(ctx, events.EventBridgeEvent{ID: "second"}) }()
	waitStatus(t, r.store, r.id(0), jobs.StatusSucceeded, began, 3*time.Second)
	if err := <-done; err != nil {
		t.Fatalf("the second beat: %v", err)
	}
	if n := completedEvents(t, r.db, r.tables, r.id(0)); n != 1 {
		t.Errorf("%s has %d job.completed events, want 1", r.id(0), n)
	}
	if got := status(t, r.store, r.id(1)); got != jobs.StatusRunning {
		t.Errorf("%s, whose Job still runs, is %s; want running", r.id(1), got)
	}
}
