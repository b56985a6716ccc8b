package unblock

import (
	"context"
	"errors"
	"fmt"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// ReasonArrayCancelled is the reason a child its array's cancel cancels before it ran.
const ReasonArrayCancelled = "array_cancelled"

// start lets the first Parallelism children of running array p into their queue, or takes
// running workflow p off what each of its jobs waits on (those let in already are left as they
// are), then takes p out of the release index.
func (r *Releaser) start(ctx context.Context, p jobs.Job, out *step) {
	before := out.failures()
	if p.Workflow != nil {
		each(len(p.Workflow.Steps), func(i int) {
			c, to, err := r.free(ctx, p.Workflow.Steps[i].Job, p.ID, out)
			if err != nil {
				out.fail(fmt.Errorf("starting job %s of workflow %s: %w", p.Workflow.Steps[i].Job, p.ID, err))
				return
			}
			out.record(c, to)
		})
	} else {
		each(min(p.Array.Parallelism, p.Array.Size), func(i int) {
			r.letChildIn(ctx, p, i, out)
		})
	}
	if out.failures() == before {
		if err := r.Jobs.Started(ctx, p.ID); err != nil {
			out.fail(err)
		}
	}
}

// letChildIn lets child i of array p into its queue, unless it is there already or beyond.
func (r *Releaser) letChildIn(ctx context.Context, p jobs.Job, i int, out *step) {
	c, to, err := r.free(ctx, jobs.ChildID(p.ID, i), p.ID, out)
	if err != nil {
		out.fail(fmt.Errorf("letting child %d of array %s in: %w", i, p.ID, err))
		return
	}
	out.record(c, to)
}

// childEnded counts ended child c on its array or workflow, and passes an array child's slot on
// to the child Parallelism after it; the last end ends the parent, succeeded when every child
// did, else failed.
func (r *Releaser) childEnded(ctx context.Context, c jobs.Job, out *step) {
	ends, err := r.Jobs.CountEnd(ctx, c)
	if err != nil {
		out.fail(err)
		return
	}
	p, err := r.Jobs.Group(ctx, c.Parent)
	switch {
	case errors.Is(err, records.ErrNotFound):
		return
	case err != nil:
		out.fail(err)
		return
	case !p.Group() || p.Status != jobs.StatusRunning:
		return // cancelled, or ended already: nothing to let in
	}
	if p.Array != nil && c.ArrayIndex != nil {
		if next := *c.ArrayIndex + p.Array.Parallelism; next < p.Array.Size {
			r.letChildIn(ctx, p, next, out)
		}
	}
	if ends.Ended() < p.GroupSize() {
		return
	}
	status, reason := jobs.ArrayEnd(ends)
	moved, to, err := r.end(ctx, p, status, reason)
	if err != nil {
		out.fail(err)
		return
	}
	moved.HasDependents = p.HasDependents
	out.record(moved, to)
}

// end moves running array p to its end; to is "" where another release did first.
func (r *Releaser) end(ctx context.Context, p jobs.Job, status jobs.Status, reason string) (jobs.Job, jobs.Status, error) {
	return r.move(ctx, p, status, reason, "")
}

// settleChildren cancels the children of ended array p that were never let in, or wait queued:
// its cancel left them. Children already dispatched were cancelled by whoever cancelled the array
// (the API, which reaches their cluster), or run to their end. They are settled: no count and no
// slot of theirs is left to pass on.
func (r *Releaser) settleChildren(ctx context.Context, p jobs.Job, out *step) {
	children, err := r.Jobs.ChildStates(ctx, p.ID)
	if err != nil {
		out.fail(err)
		return
	}
	var left []jobs.Job
	for _, c := range children {
		if c.Status == jobs.StatusBlocked || c.Status == jobs.StatusQueued {
			left = append(left, c)
		}
	}
	each(len(left), func(i int) {
		c := left[i]
		moved, ch, err := jobs.Move(c, jobs.StatusCancelled, ReasonArrayCancelled, r.now())
		if err != nil {
			out.fail(err)
			return
		}
		ch.Settled = c.Array == nil // an array's own children are settled at its end
		switch err := r.Jobs.Apply(ctx, c, ch); {
		case errors.Is(err, records.ErrStale):
		case err != nil:
			out.fail(fmt.Errorf("cancelling child %s of array %s: %w", c.ID, p.ID, err))
		default:
			out.mu.Lock()
			out.cancelled = append(out.cancelled, moved.ID)
			out.mu.Unlock()
		}
	})
}
