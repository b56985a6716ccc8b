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

// Release releases the dependents of job id if it has ended, and of each job it cancels in turn.
// It is safe to run twice at once, or again after a release cut short: every write holds only
// while the dependent is blocked waiting on the job.
func (r *Releaser) Release(ctx context.Context, id string) (Result, error) {
	var res Result
	var errs []error
	regions := map[string]bool{}
	for work := []string{id}; len(work) > 0; {
		next := work[0]
		work = work[1:]
		j, err := r.Jobs.Job(ctx, next)
		switch {
		case errors.Is(err, records.ErrNotFound):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		case !j.Status.Terminal() || !j.HasDependents:
			continue
		}
		step, err := r.releaseOne(ctx, j)
		errs = append(errs, err)
		res.Queued = append(res.Queued, step.queued...)
		res.Cancelled = append(res.Cancelled, step.cancelled...)
		work = append(work, step.more...)
		for _, region := range step.regions {
			regions[region] = true
		}
	}
	for region := range regions {
		if r.Ringer == nil {
			break
		}
		if err := r.Ringer.Ring(ctx, region); err != nil {
			// The jobs are queued; the beat's sweep rings every region with queued jobs.
			r.log().WarnContext(ctx, "dispatch not rung for released jobs; the sweep will", "region", region, "err", err)
		}
	}
	return res, errors.Join(errs...)
}

// step is what releasing one job's dependents did, and the cancelled ones with dependents of
// their own (more).
type step struct {
	queued, cancelled, more, regions []string
}

// releaseOne releases ended job j's dependents, atOnce at a time, then marks them released
// unless one failed (the sweep tries again).
func (r *Releaser) releaseOne(ctx context.Context, j jobs.Job) (step, error) {
	edges, err := r.Jobs.Dependents(ctx, j.ID)
	if err != nil {
		return step{}, err
	}
	var mu sync.Mutex
	var out step
	var errs []error
	var wg sync.WaitGroup
	slots := make(chan struct{}, atOnce)
	for _, e := range edges {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			d, outcome, err := r.releaseEdge(ctx, j, e)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("releasing job %s from job %s: %w", e.Dependent, j.ID, err))
			case outcome == jobs.StatusQueued:
				out.queued = append(out.queued, d.ID)
				out.regions = append(out.regions, regionsOf(d)...)
			case outcome == jobs.StatusCancelled:
				out.cancelled = append(out.cancelled, d.ID)
				if d.HasDependents {
					out.more = append(out.more, d.ID)
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	slices.Sort(out.regions)
	out.regions = slices.Compact(out.regions)
	return out, r.Jobs.Released(ctx, j.ID, edges)
}

// releaseEdge releases dependent e of ended job j: it answers the dependent and what became of
// it (queued, cancelled, or "" for nothing: it waits on others still, or was released already).
func (r *Releaser) releaseEdge(ctx context.Context, j jobs.Job, e dynamo.Edge) (jobs.Job, jobs.Status, error) {
	met, _ := e.On.Outcome(j.Status)
	var d jobs.Job
	var err error
	if met {
		d, err = r.Jobs.Unblock(ctx, e.Dependent, j.ID)
		if errors.Is(err, records.ErrStale) {
			err = nil // released already; but perhaps not queued yet, if that release died
		}
	} else {
		d, err = r.Jobs.Job(ctx, e.Dependent)
	}
	switch {
	case errors.Is(err, records.ErrNotFound):
		return d, "", nil // an edge whose dependent was never stored
	case err != nil:
		return d, "", err
	case d.Status != jobs.StatusBlocked:
		return d, "", nil
	case !met && slices.Contains(d.WaitingOn, j.ID):
		dep, _ := d.DependencyOn(j.ID)
		return r.move(ctx, d, jobs.StatusCancelled, jobs.NotMet(dep, j.Status))
	case met && len(d.WaitingOn) == 0:
		return r.move(ctx, d, jobs.StatusQueued, jobs.ReasonDependenciesMet)
	}
	return d, "", nil
}

// move moves blocked job d to status to; a move another release made first is no error.
func (r *Releaser) move(ctx context.Context, d jobs.Job, to jobs.Status, reason string) (jobs.Job, jobs.Status, error) {
	moved, c, err := jobs.Move(d, to, reason, r.now())
	if err != nil {
		return d, "", err
	}
	switch err := r.Jobs.Apply(ctx, d, c); {
	case errors.Is(err, records.ErrStale):
		return d, "", nil
	case err != nil:
		return d, "", err
	}
	return moved, to, nil
}

// Sweep releases the dependents of the ended jobs whose release is still due: those whose end
// was written by something that does not release (a dispatch that failed a job, say), and those
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
