// Package unblock releases the jobs that wait for a job that has ended: each dependent whose
// condition the end meets is taken off what it waits on, and queued once it waits on nothing;
// each one the end can no longer meet is cancelled dependency_not_met, and so are the jobs that
// wait on it in turn. The work is the dependents', never the queue's: a job's dependents are kept
// on it (dynamo's edges), and an ended job with dependents still to release is in a small index
// of its own that the reconcile beat reads, so a release cut short is finished a beat later.
package unblock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// Store is what a release reads and writes of jobs; dynamo.JobStore is the real one.
type Store interface {
	Job(ctx context.Context, id string) (jobs.Job, error)
	Dependents(ctx context.Context, id string) ([]dynamo.Edge, error)
	Unblock(ctx context.Context, dependent, dependency string) (jobs.Job, error)
	Apply(ctx context.Context, j jobs.Job, c jobs.Change) error
	Released(ctx context.Context, id string, edges []dynamo.Edge) error
	ReleaseDue(ctx context.Context, limit int) ([]string, error)
	// An array's: its children's ends counted, its record without its manifests (what a child's
	// end reads of it), its children's states, its start recorded.
	CountEnd(ctx context.Context, c jobs.Job) (jobs.ArrayEnds, error)
	Group(ctx context.Context, id string) (jobs.Job, error)
	ChildStates(ctx context.Context, parent string) ([]jobs.Job, error)
	Started(ctx context.Context, id string) error
}

// Ringer wakes dispatch for a region that has jobs newly queued; wake.Ringer is the real one.
type Ringer interface {
	Ring(ctx context.Context, region string) error
}

var _ Store = (*dynamo.JobStore)(nil)

// atOnce is how many dependents of one job are released side by side: a job with a thousand
// dependents takes about a thousand writes, which one at a time would take seconds.
const atOnce = 16

// sweepLimit bounds the ended jobs one sweep releases the dependents of; the next beat takes
// the rest.
const sweepLimit = 100

// Releaser releases dependents.
type Releaser struct {
	Jobs Store
	// Ringer, when set, is rung once for each region with jobs newly queued.
	Ringer Ringer
	Log    *slog.Logger
	Now    func() time.Time
}

// Result is what a release did: the jobs it queued and those it cancelled.
type Result struct {
	Queued, Cancelled []string
}

// Release releases the dependents of job id if it has ended, and of each job it cancels in turn;
// for an array's parent that waits on nothing it starts the array, and for an ended child it
// counts the end, passes the child's slot on and ends the parent with the last (arrays.go). It
// is safe to run twice at once, or again after a release cut short: every write holds only while
// the job it moves is where the release found it.
func (r *Releaser) Release(ctx context.Context, id string) (Result, error) {
	out := &step{}
	for work := []string{id}; len(work) > 0; {
		next := work[0]
		work = work[1:]
		j, err := r.Jobs.Job(ctx, next)
		switch {
		case errors.Is(err, records.ErrNotFound):
			continue
		case err != nil:
			out.fail(err)
			continue
		case j.Group() && j.Status == jobs.StatusBlocked && len(j.WaitingOn) == 0:
			if _, _, err := r.letIn(ctx, j, "", out); err != nil {
				out.fail(err)
			}
		case j.Group() && j.Status == jobs.StatusRunning:
			r.start(ctx, j, out) // a start cut short
		case !j.Status.Terminal() || !j.HasDependents:
			continue
		default:
			r.ended(ctx, j, out)
		}
		out.mu.Lock()
		work, out.more = append(work, out.more...), nil
		out.mu.Unlock()
	}
	r.ring(ctx, out.regions)
	return Result{Queued: out.queued, Cancelled: out.cancelled}, errors.Join(out.errs...)
}

// ring rings dispatch once for each of regions.
func (r *Releaser) ring(ctx context.Context, regions []string) {
	slices.Sort(regions)
	for _, region := range slices.Compact(regions) {
		if r.Ringer == nil {
			break
		}
		if err := r.Ringer.Ring(ctx, region); err != nil {
			// The jobs are queued; the beat's sweep rings every region with queued jobs.
			r.log().WarnContext(ctx, "dispatch not rung for released jobs; the sweep will", "region", region, "err", err)
		}
	}
}

// step is what a release did so far, and the ended jobs it is still to release (more).
type step struct {
	mu                               sync.Mutex
	queued, cancelled, more, regions []string
	errs                             []error
}

// failures is how many steps failed so far.
func (s *step) failures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.errs)
}

func (s *step) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

// record notes what became of job d.
func (s *step) record(d jobs.Job, to jobs.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch to {
	case jobs.StatusQueued:
		s.queued = append(s.queued, d.ID)
		s.regions = append(s.regions, regionsOf(d)...)
	case jobs.StatusCancelled:
		s.cancelled = append(s.cancelled, d.ID)
		if d.HasDependents {
			s.more = append(s.more, d.ID)
		}
	case jobs.StatusRunning, jobs.StatusSucceeded, jobs.StatusFailed:
		if d.HasDependents && to.Terminal() {
			s.more = append(s.more, d.ID)
		}
	}
}

// each runs f for 0 ≤ i < n, atOnce at a time.
func each(n int, f func(i int)) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, atOnce)
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			f(i)
		})
	}
	wg.Wait()
}

// ended settles what ended job j leaves: its count and slot in its array, its own array's
// children not ended, and its dependents; then marks it released unless a step failed (the
// sweep tries again).
func (r *Releaser) ended(ctx context.Context, j jobs.Job, out *step) {
	before := out.failures()
	if j.Parent != "" {
		r.childEnded(ctx, j, out)
	}
	if j.Group() {
		r.settleChildren(ctx, j, out)
	}
	edges, err := r.Jobs.Dependents(ctx, j.ID)
	if err != nil {
		out.fail(err)
		return
	}
	each(len(edges), func(i int) {
		e := edges[i]
		d, to, err := r.releaseEdge(ctx, j, e, out)
		if err != nil {
			out.fail(fmt.Errorf("releasing job %s from job %s: %w", e.Dependent, j.ID, err))
			return
		}
		out.record(d, to)
	})
	if out.failures() == before {
		if err := r.Jobs.Released(ctx, j.ID, edges); err != nil {
			out.fail(err)
		}
	}
}

// Settle releases dependent of ended job j as j's release would, for a dependent whose edge j's
// release may not have seen: it was written after j ended.
func (r *Releaser) Settle(ctx context.Context, j jobs.Job, dependent string, on jobs.Condition) error {
	out := &step{}
	d, to, err := r.releaseEdge(ctx, j, dynamo.Edge{Dependent: dependent, On: on}, out)
	if err != nil {
		return err
	}
	out.record(d, to)
	for _, id := range out.more {
		if _, err := r.Release(ctx, id); err != nil {
			return err
		}
	}
	r.ring(ctx, out.regions)
	return errors.Join(out.errs...)
}

// releaseEdge releases dependent e of ended job j: it answers the dependent and what became of
// it (queued, cancelled, or "" for nothing: it waits on others still, or was released already).
func (r *Releaser) releaseEdge(ctx context.Context, j jobs.Job, e dynamo.Edge, out *step) (jobs.Job, jobs.Status, error) {
	if met, _ := e.On.Outcome(j.Status); met {
		return r.free(ctx, e.Dependent, j.ID, out)
	}
	d, err := r.Jobs.Job(ctx, e.Dependent)
	switch {
	case errors.Is(err, records.ErrNotFound):
		return d, "", nil // an edge whose dependent was never stored
	case err != nil:
		return d, "", err
	case d.Status != jobs.StatusBlocked || !slices.Contains(d.WaitingOn, j.ID):
		return d, "", nil
	}
	dep, _ := d.DependencyOn(j.ID)
	return r.move(ctx, d, jobs.StatusCancelled, jobs.NotMet(dep, j.Status), "")
}

// free takes job from off what blocked job id waits on, and lets it in when it waits on nothing
// more: queued, or started if it is an array.
func (r *Releaser) free(ctx context.Context, id, from string, out *step) (jobs.Job, jobs.Status, error) {
	d, err := r.Jobs.Job(ctx, id)
	if err == nil && d.Status == jobs.StatusBlocked && slices.Equal(d.WaitingOn, []string{from}) {
		// Its last: let in with one write, which holds only while it waits on from alone.
		moved, to, err := r.letIn(ctx, d, from, out)
		if err != nil || to != "" {
			return moved, to, err
		}
		// Changed since it was read: take from off it as below.
	}
	if err == nil && d.Status == jobs.StatusBlocked {
		d, err = r.Jobs.Unblock(ctx, id, from)
		if errors.Is(err, records.ErrStale) {
			err = nil // released already; but perhaps not let in yet, if that release died
		}
	}
	switch {
	case errors.Is(err, records.ErrNotFound):
		return d, "", nil // an edge whose dependent was never stored
	case err != nil:
		return d, "", err
	case d.Status == jobs.StatusBlocked && len(d.WaitingOn) == 0:
		return r.letIn(ctx, d, "", out)
	}
	return d, "", nil
}

// letIn moves blocked job d, which waits on nothing but only (when set), into its queue; an
// array's or a workflow's parent it starts instead. to is "" where d was not where it was read.
func (r *Releaser) letIn(ctx context.Context, d jobs.Job, only string, out *step) (jobs.Job, jobs.Status, error) {
	if !d.Group() {
		return r.move(ctx, d, jobs.StatusQueued, jobs.ReasonDependenciesMet, only)
	}
	moved, to, err := r.apply(ctx, d, only, func() (jobs.Job, jobs.Change, error) { return jobs.Started(d, r.now()) })
	if err == nil && to != "" {
		moved.HasDependents = d.HasDependents
		r.start(ctx, moved, out)
	}
	return moved, to, err
}

// move moves job d to status to, holding only while it waits on only alone when that is set.
func (r *Releaser) move(ctx context.Context, d jobs.Job, to jobs.Status, reason, only string) (jobs.Job, jobs.Status, error) {
	return r.apply(ctx, d, only, func() (jobs.Job, jobs.Change, error) { return jobs.Move(d, to, reason, r.now()) })
}

// apply records the move made of job d, holding only while d waits on only alone when that is
// set, and answers d moved and its new status; a move another release made first is no error,
// and answers d as it was and "".
func (r *Releaser) apply(ctx context.Context, d jobs.Job, only string, moveOf func() (jobs.Job, jobs.Change, error)) (jobs.Job, jobs.Status, error) {
	moved, c, err := moveOf()
	if err != nil {
		return d, "", err
	}
	c.WaitingOnly = only
	switch err := r.Jobs.Apply(ctx, d, c); {
	case errors.Is(err, records.ErrStale):
		return d, "", nil
	case err != nil:
		return d, "", err
	}
	return moved, c.To, nil
}

// Sweep releases the dependents of the ended jobs whose release is still due: those whose end
// was written by something that does not release (a drain that failed a job at its spot deadline, say), and those
// whose release was cut short.
func (r *Releaser) Sweep(ctx context.Context) error {
	due, err := r.Jobs.ReleaseDue(ctx, sweepLimit)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range due {
		_, err := r.Release(ctx, id)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// regionsOf are the regions a queued job may run in, to ring.
func regionsOf(j jobs.Job) []string {
	if len(j.Regions) > 0 {
		return j.Regions
	}
	return []string{j.Region}
}

func (r *Releaser) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Releaser) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}
