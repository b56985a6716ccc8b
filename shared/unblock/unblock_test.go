package unblock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/unblock"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const region = "us-east-1"

// rig is a jobs table on DynamoDB Local and a releaser over it that counts its rings.
type rig struct {
	t     *testing.T
	store *dynamo.JobStore
	rel   *unblock.Releaser
	rings *ringer
	now   time.Time
	n     int
}

type ringer struct {
	mu      sync.Mutex
	regions []string
}

func (r *ringer) Ring(_ context.Context, region string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.regions = append(r.regions, region)
	return nil
}

func newRig(t *testing.T) *rig {
	tables, db := testenv.Tables(t)
	store := dynamo.NewJobStore(db, tables)
	r := &rig{t: t, store: store, rings: &ringer{}, now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	r.rel = &unblock.Releaser{Jobs: store, Ringer: r.rings, Now: func() time.Time { return r.now }}
	return r
}

// submit stores a job of tenant ml waiting on deps, settled as the API settles it.
func (r *rig) submit(deps ...jobs.Dependency) jobs.Job {
	r.t.Helper()
	ctx := context.Background()
	r.n++
	j := jobs.New(fmt.Sprintf("job-%03d", r.n), "ml", "team-a", region, 50, nil,
		[]map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("c%d", r.n)}}}, r.now)
	j.Podless = true
	if len(deps) > 0 {
		ids := make([]string, len(deps))
		for i, d := range deps {
			ids[i] = d.Job
		}
		read, err := r.store.Dependencies(ctx, ids)
		if err != nil {
			r.t.Fatalf("Dependencies: %v", err)
		}
		statuses := map[string]jobs.Status{}
		for _, d := range read {
			statuses[d.ID] = d.Status
		}
		j.DependsOn = deps
		status, waiting, reason := jobs.Settle(deps, statuses)
		j = jobs.Block(j, status, waiting, reason, r.now)
	}
	if _, _, err := r.store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", r.now), nil, r.now); err != nil {
		r.t.Fatalf("Create(%s): %v", j.ID, err)
	}
	return j
}

// end walks job id to status to through the moves a job makes: claimed, applied, then its end.
func (r *rig) end(id string, to jobs.Status) {
	r.t.Helper()
	ctx := context.Background()
	path := map[jobs.Status][]jobs.Status{
		jobs.StatusSucceeded: {jobs.StatusDispatching, jobs.StatusPending, jobs.StatusSucceeded},
		jobs.StatusFailed:    {jobs.StatusFailed},
		jobs.StatusCancelled: {jobs.StatusCancelled},
	}[to]
	for _, s := range path {
		j, err := r.store.Job(ctx, id)
		if err != nil {
			r.t.Fatalf("Job(%s): %v", id, err)
		}
		_, c, err := jobs.Move(j, s, "test", r.now)
		if err != nil {
			r.t.Fatalf("Move(%s → %s): %v", id, s, err)
		}
		if s == jobs.StatusDispatching {
			c.NewClaim = &jobs.Claim{Token: "t", Until: r.now.Add(time.Minute)}
		}
		if err := r.store.Apply(ctx, j, c); err != nil {
			r.t.Fatalf("Apply(%s → %s): %v", id, s, err)
		}
	}
}

func (r *rig) job(id string) jobs.Job {
	r.t.Helper()
	j, err := r.store.Job(context.Background(), id)
	if err != nil {
		r.t.Fatalf("Job(%s): %v", id, err)
	}
	return j
}

func (r *rig) due() []string {
	r.t.Helper()
	ids, err := r.store.ReleaseDue(context.Background(), 100)
	if err != nil {
		r.t.Fatalf("ReleaseDue: %v", err)
	}
	return ids
}

// TestReleaseQueuesWhenAllAreMet: a job waiting on two is released by neither alone; once both
// have ended as it asks it is queued, in its region's queue, dispatch is rung, and both are out
// of the release index.
func TestReleaseQueuesWhenAllAreMet(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	x, y := r.submit(), r.submit()
	d := r.submit(jobs.Dependency{Job: x.ID, On: jobs.OnSucceeded}, jobs.Dependency{Job: y.ID, On: jobs.OnEnded})
	if d.Status != jobs.StatusBlocked || !slices.Equal(d.WaitingOn, []string{x.ID, y.ID}) {
		t.Fatalf("submitted %s %v, want blocked on both", d.Status, d.WaitingOn)
	}
	if got := r.due(); len(got) != 0 {
		t.Errorf("release index before any end = %v, want empty", got)
	}
	r.end(x.ID, jobs.StatusSucceeded)
	if got := r.due(); !slices.Equal(got, []string{x.ID}) {
		t.Errorf("release index after %s ended = %v, want it alone", x.ID, got)
	}
	res, err := r.rel.Release(ctx, x.ID)
	if err != nil || len(res.Queued)+len(res.Cancelled) != 0 {
		t.Errorf("Release(%s) = %+v, %v; want nothing queued yet", x.ID, res, err)
	}
	if got := r.job(d.ID); got.Status != jobs.StatusBlocked || !slices.Equal(got.WaitingOn, []string{y.ID}) {
		t.Errorf("after %s: %s waiting on %v, want blocked on %s", x.ID, got.Status, got.WaitingOn, y.ID)
	}
	r.end(y.ID, jobs.StatusCancelled) // "ended" takes a cancel too
	if err := r.rel.Sweep(ctx); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	got := r.job(d.ID)
	if got.Status != jobs.StatusQueued || len(got.WaitingOn) != 0 || got.PendingReason != "" {
		t.Errorf("after both: %s waiting on %v (%q), want queued on nothing", got.Status, got.WaitingOn, got.PendingReason)
	}
	if last := got.StatusHistory[len(got.StatusHistory)-1]; last.Reason != jobs.ReasonDependenciesMet {
		t.Errorf("its last history entry = %+v, want reason %s", last, jobs.ReasonDependenciesMet)
	}
	if queued, err := r.store.HasQueued(ctx, region); err != nil || !queued {
		t.Errorf("HasQueued(%s) = %v, %v; want the released job in its queue", region, queued, err)
	}
	if !slices.Contains(r.rings.regions, region) {
		t.Errorf("rings = %v, want %s rung", r.rings.regions, region)
	}
	if got := r.due(); len(got) != 0 {
		t.Errorf("release index after the sweep = %v, want empty", got)
	}
	if edges, err := r.store.Dependents(ctx, y.ID); err != nil || len(edges) != 0 {
		t.Errorf("Dependents(%s) after release = %v, %v; want none kept", y.ID, edges, err)
	}
}

// TestReleaseCancelsDownTheGraph: a dependency that fails cancels what waits for its success,
// and that cancel goes on down the graph, while what waits for any end is queued.
func TestReleaseCancelsDownTheGraph(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	a := r.submit()
	b := r.submit(jobs.Dependency{Job: a.ID, On: jobs.OnSucceeded})
	c := r.submit(jobs.Dependency{Job: b.ID, On: jobs.OnSucceeded})
	d := r.submit(jobs.Dependency{Job: b.ID, On: jobs.OnEnded})
	e := r.submit(jobs.Dependency{Job: a.ID, On: jobs.OnFailed})
	r.end(a.ID, jobs.StatusFailed)
	res, err := r.rel.Release(ctx, a.ID)
	if err != nil {
		t.Fatalf("Release(%s): %v", a.ID, err)
	}
	slices.Sort(res.Queued)
	slices.Sort(res.Cancelled)
	if !slices.Equal(res.Cancelled, []string{b.ID, c.ID}) || !slices.Equal(res.Queued, []string{d.ID, e.ID}) {
		t.Errorf("Release = %+v, want %s and %s cancelled, %s and %s queued", res, b.ID, c.ID, d.ID, e.ID)
	}
	for id, want := range map[string]string{b.ID: a.ID + " failed", c.ID: b.ID + " cancelled"} {
		got := r.job(id)
		last := got.StatusHistory[len(got.StatusHistory)-1]
		if got.Status != jobs.StatusCancelled || !strings.HasPrefix(last.Reason, jobs.ReasonDependencyNotMet+": "+want) {
			t.Errorf("%s: %s, %q; want cancelled %s: %s…", id, got.Status, last.Reason, jobs.ReasonDependencyNotMet, want)
		}
	}
	if got := r.due(); len(got) != 0 {
		t.Errorf("release index after the cascade = %v, want empty", got)
	}
}

// TestReleaseCutShortIsFinished: a release that died after taking a job off what its dependent
// waits on, before queueing it, is finished by the next sweep; and a second release changes
// nothing.
func TestReleaseCutShortIsFinished(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	x := r.submit()
	d := r.submit(jobs.Dependency{Job: x.ID})
	r.end(x.ID, jobs.StatusSucceeded)
	if _, err := r.store.Unblock(ctx, d.ID, x.ID); err != nil {
		t.Fatalf("Unblock: %v", err)
	}
	if got := r.job(d.ID); got.Status != jobs.StatusBlocked || len(got.WaitingOn) != 0 {
		t.Fatalf("cut short: %s on %v, want blocked on nothing", got.Status, got.WaitingOn)
	}
	if err := r.rel.Sweep(ctx); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if got := r.job(d.ID); got.Status != jobs.StatusQueued {
		t.Errorf("after the sweep: %s, want queued", got.Status)
	}
	before := len(r.job(d.ID).StatusHistory)
	if res, err := r.rel.Release(ctx, x.ID); err != nil || len(res.Queued) != 0 {
		t.Errorf("Release again = %+v, %v; want nothing", res, err)
	}
	if after := len(r.job(d.ID).StatusHistory); after != before {
		t.Errorf("a second release wrote %d history entries", after-before)
	}
}

// TestCreateRefusesAnEndedDependency: a dependency that ended between the dependent's read and
// its write refuses the write (the caller settles the job again), and one of another tenant's
// is refused the same way: the mark holds only for the same tenant.
func TestCreateRefusesAnEndedDependency(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	x := r.submit()
	r.end(x.ID, jobs.StatusSucceeded)
	j := jobs.New("job-late", "ml", "team-a", region, 50, nil, nil, r.now)
	j.DependsOn = []jobs.Dependency{{Job: x.ID, On: jobs.OnSucceeded}}
	j = jobs.Block(j, jobs.StatusBlocked, []string{x.ID}, jobs.ReasonWaitingForDependencies, r.now)
	if _, _, err := r.store.Create(ctx, j, jobs.Event(outbox.JobBlocked, j, "", r.now), nil, r.now); !errors.Is(err, dynamo.ErrDependencyEnded) {
		t.Errorf("Create on an ended dependency = %v, want ErrDependencyEnded", err)
	}
	y := r.submit()
	other := jobs.New("job-other", "intruder", "team-b", region, 50, nil, nil, r.now)
	other = jobs.Block(other, jobs.StatusBlocked, []string{y.ID}, jobs.ReasonWaitingForDependencies, r.now)
	if _, _, err := r.store.Create(ctx, other, jobs.Event(outbox.JobBlocked, other, "", r.now), nil, r.now); !errors.Is(err, dynamo.ErrDependencyEnded) {
		t.Errorf("Create on another tenant's job = %v, want refused", err)
	}
	if got := r.job(y.ID); got.HasDependents {
		t.Errorf("another tenant's refused dependent marked %s as having dependents", y.ID)
	}
}

// submitArray stores an array as the API does (children first, then the parent) and starts it.
func (r *rig) submitArray(size, parallelism int, deps ...jobs.Dependency) jobs.Job {
	r.t.Helper()
	ctx := context.Background()
	p := r.submitParent(size, parallelism, deps...)
	if err := r.store.CreateChildren(ctx, jobs.Children(p), nil); err != nil {
		r.t.Fatalf("CreateChildren: %v", err)
	}
	if _, _, err := r.store.Create(ctx, p, jobs.Event(outbox.JobBlocked, p, "", r.now), nil, r.now); err != nil {
		r.t.Fatalf("Create(%s): %v", p.ID, err)
	}
	if _, err := r.rel.Release(ctx, p.ID); err != nil {
		r.t.Fatalf("Release(%s): %v", p.ID, err)
	}
	return r.job(p.ID)
}

func (r *rig) submitParent(size, parallelism int, deps ...jobs.Dependency) jobs.Job {
	r.n++
	p := jobs.New(fmt.Sprintf("job-%03d", r.n), "ml", "team-a", region, 50, nil,
		[]map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("c%d", r.n)}}}, r.now)
	p.Podless = true
	p.Array = &jobs.Array{Size: size, Parallelism: parallelism}
	p.DependsOn = deps
	waiting := make([]string, len(deps))
	for i, d := range deps {
		waiting[i] = d.Job
	}
	return jobs.Block(p, jobs.StatusBlocked, waiting, jobs.ReasonWaitingForDependencies, r.now)
}

// statuses counts an array's children by status.
func (r *rig) statuses(parent string) map[jobs.Status]int {
	r.t.Helper()
	cs, err := r.store.ChildStates(context.Background(), parent)
	if err != nil {
		r.t.Fatalf("ChildStates: %v", err)
	}
	out := map[jobs.Status]int{}
	for _, c := range cs {
		out[c.Status]++
	}
	return out
}

// TestArrayLetsParallelismIn: an array of 7 at parallelism 3 has 3 children queued at its start
// and never more than 3 queued or running; each end lets the next in, the last ends the parent
// (failed, as one child failed) and releases what waits on it; every end is counted once, however
// often it is released.
func TestArrayLetsParallelismIn(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	p := r.submitArray(7, 3)
	if p.Status != jobs.StatusRunning {
		t.Fatalf("the array after its start is %s, want running", p.Status)
	}
	after := r.submit(jobs.Dependency{Job: p.ID, On: jobs.OnFailed})
	if got := r.statuses(p.ID); got[jobs.StatusQueued] != 3 || got[jobs.StatusBlocked] != 4 {
		t.Fatalf("children at the start = %v, want 3 queued, 4 blocked", got)
	}
	for i := range 7 {
		to := jobs.StatusSucceeded
		if i == 4 {
			to = jobs.StatusFailed
		}
		r.end(jobs.ChildID(p.ID, i), to)
		for range 2 { // a release run twice counts the end once
			if _, err := r.rel.Release(ctx, jobs.ChildID(p.ID, i)); err != nil {
				t.Fatalf("Release(child %d): %v", i, err)
			}
		}
		got := r.statuses(p.ID)
		if active := got[jobs.StatusQueued] + got[jobs.StatusPending] + got[jobs.StatusDispatching]; active > 3 || active != min(3, 6-i) {
			t.Errorf("after child %d ended: %v, want %d let in", i, got, min(3, 6-i))
		}
	}
	ends, err := r.store.ArrayEnds(ctx, p.ID)
	if err != nil || ends != (jobs.ArrayEnds{Succeeded: 6, Failed: 1}) {
		t.Errorf("ArrayEnds = %+v, %v; want 6 succeeded, 1 failed", ends, err)
	}
	if got := r.job(p.ID); got.Status != jobs.StatusFailed {
		t.Errorf("the array after its last child = %s, want failed", got.Status)
	}
	if got := r.job(after.ID); got.Status != jobs.StatusQueued {
		t.Errorf("the job waiting for the array's failure = %s, want queued", got.Status)
	}
	if got := r.due(); len(got) != 0 {
		t.Errorf("release index after the array = %v, want empty", got)
	}
}

// TestArrayWaitsForItsDependencies: an array blocked on a job lets no child in until that job
// succeeds; cancelled, its children not let in are cancelled and settled.
func TestArrayWaitsForItsDependencies(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	x := r.submit()
	p := r.submitArray(4, 2, jobs.Dependency{Job: x.ID, On: jobs.OnSucceeded})
	if p.Status != jobs.StatusBlocked || r.statuses(p.ID)[jobs.StatusBlocked] != 4 {
		t.Fatalf("the array on a queued job: %s with children %v, want blocked, all 4 blocked", p.Status, r.statuses(p.ID))
	}
	r.end(x.ID, jobs.StatusSucceeded)
	if _, err := r.rel.Release(ctx, x.ID); err != nil {
		t.Fatal(err)
	}
	if got := r.job(p.ID); got.Status != jobs.StatusRunning || r.statuses(p.ID)[jobs.StatusQueued] != 2 {
		t.Fatalf("after its dependency: %s with children %v, want running, 2 queued", got.Status, r.statuses(p.ID))
	}
	running := r.job(p.ID)
	_, c, err := jobs.Move(running, jobs.StatusCancelled, "test", r.now)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.Apply(ctx, running, c); err != nil {
		t.Fatal(err)
	}
	if _, err := r.rel.Release(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if got := r.statuses(p.ID); got[jobs.StatusCancelled] != 4 {
		t.Errorf("children after the array's cancel = %v, want all 4 cancelled", got)
	}
	if got := r.due(); len(got) != 0 {
		t.Errorf("release index after the cancel = %v, want empty (the children settled)", got)
	}
}

// TestAnEvictionIsNoEnd: a dependency evicted for another job is queued again as a new attempt,
// which is no end: it enters no release index and its dependent stays blocked, until the
// attempt after it succeeds.
func TestAnEvictionIsNoEnd(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	x := r.submit()
	d := r.submit(jobs.Dependency{Job: x.ID, On: jobs.OnSucceeded})
	for _, s := range []jobs.Status{jobs.StatusDispatching, jobs.StatusPending, jobs.StatusRunning} {
		j := r.job(x.ID)
		_, c, err := jobs.Move(j, s, "test", r.now)
		if err != nil {
			t.Fatal(err)
		}
		if s == jobs.StatusDispatching {
			c.NewClaim = &jobs.Claim{Token: "t", Until: r.now.Add(time.Minute)}
		}
		if err := r.store.Apply(ctx, j, c); err != nil {
			t.Fatal(err)
		}
	}
	running := r.job(x.ID)
	_, c, err := jobs.Preempted(running, "reclaimed", jobs.AttemptRecord{Attempt: 1}, r.now)
	if err != nil || c.To != jobs.StatusQueued {
		t.Fatalf("Preempted = %+v, %v; want queued again", c, err)
	}
	if err := r.store.Apply(ctx, running, c); err != nil {
		t.Fatal(err)
	}
	if err := r.rel.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.due(); len(got) != 0 {
		t.Errorf("release index after an eviction = %v, want empty", got)
	}
	if got := r.job(d.ID); got.Status != jobs.StatusBlocked {
		t.Errorf("the dependent after its dependency's eviction = %s, want blocked", got.Status)
	}
	r.end(x.ID, jobs.StatusSucceeded)
	if _, err := r.rel.Release(ctx, x.ID); err != nil {
		t.Fatal(err)
	}
	if got := r.job(d.ID); got.Status != jobs.StatusQueued {
		t.Errorf("the dependent after its dependency's next attempt succeeded = %s, want queued", got.Status)
	}
}
