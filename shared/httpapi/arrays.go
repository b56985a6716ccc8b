package httpapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/records"
)

// childrenAllowed refuses an array whose children's objects the policy would refuse: each child's
// are the parent's named for its index (jobs.ChildName), so the longest names are the last
// child's.
func (a *api) childrenAllowed(ctx context.Context, s *submission) error {
	if s.array == nil {
		return nil
	}
	last := jobs.ChildManifests(s.manifests, s.array.Size-1)
	res := a.policy.Check(policy.Request{Manifests: last, Namespaces: principalOf(ctx).Tenant.Namespaces, DefaultNamespace: s.namespace})
	if res.Allowed() {
		return nil
	}
	e := policyError(res.Violations)
	e.Detail = fmt.Sprintf("the array's children name their objects after their index (child %d: %q): %s",
		s.array.Size-1, jobs.ChildName(jobs.NameOf(s.manifests), s.array.Size-1), e.Detail)
	return e
}

// createArray stores job j, with ev, as createWaiting settled it; an array's children are written
// first (a crash between leaves children no one lists, never a parent without them), then the
// parent, which the releaser starts at once when it waits on nothing. A key already used answers
// its job before any child is written.
func (a *api) createArray(ctx context.Context, j jobs.Job, ev outbox.Event, idem *dynamo.Idempotency, now time.Time) (jobs.Job, bool, error) {
	if j.Array == nil {
		return a.create(ctx, j, ev, idem, now)
	}
	if idem != nil {
		if prev, replayed, err := a.jobs.Replay(ctx, *idem, now); err != nil || replayed {
			return prev, replayed, err
		}
	}
	_, byChild := jobs.Split(j.DependsOn)
	if err := a.sameShape(ctx, j, byChild); err != nil {
		return j, false, err
	}
	if j.Status != jobs.StatusCancelled {
		start := time.Now()
		if err := a.jobs.CreateChildren(ctx, jobs.ChildByChild(jobs.Children(j), byChild), nil); err != nil {
			return j, false, err
		}
		a.logger(ctx).InfoContext(ctx, "stored an array's children", "job_id", j.ID, "children", j.Array.Size, "took", time.Since(start))
	}
	stored, replayed, err := a.create(ctx, j, ev, idem, now)
	if err == nil && !replayed {
		err = a.settleChildByChild(ctx, stored, byChild)
	}
	if err != nil || replayed || stored.Status != jobs.StatusBlocked || len(stored.WaitingOn) > 0 {
		if err == nil {
			err = a.withArrayStatus(ctx, &stored)
		}
		return stored, replayed, err
	}
	if _, err := a.releaser.Release(ctx, stored.ID); err != nil {
		// Stored, and due to the releaser: the next beat starts it.
		a.logger(ctx).WarnContext(ctx, "starting an array; the beat will", "job_id", stored.ID, "err", err)
	}
	started, err := a.jobs.Job(ctx, stored.ID)
	if err == nil {
		err = a.withArrayStatus(ctx, &started)
	}
	return started, false, err
}

// withArrayStatus fills in array parent j's children counted by status.
func (a *api) withArrayStatus(ctx context.Context, j *jobs.Job) error {
	if j.Array == nil {
		return nil
	}
	ends, err := a.jobs.ArrayEnds(ctx, j.ID)
	if err != nil && !errors.Is(err, records.ErrNotFound) {
		return err
	}
	st := jobs.StatusOf(*j, ends)
	j.ArrayStatus = &st
	return nil
}

// cancelChildren cancels the children of array j that its dispatch has reached, each as a job
// is cancelled (its objects deleted first); the releaser cancels the rest once the array is.
func (a *api) cancelChildren(ctx context.Context, j jobs.Job) error {
	children, err := a.jobs.ChildStates(ctx, j.ID)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range children {
		if !slices.Contains([]jobs.Status{jobs.StatusDispatching, jobs.StatusPending, jobs.StatusRunning}, c.Status) {
			continue
		}
		whole, err := a.jobs.Job(ctx, c.ID)
		if err == nil && !whole.Status.Terminal() {
			err = a.cancel(ctx, whole)
		}
		var conflict *Error
		if errors.As(err, &conflict) && conflict.Code == CodeConflict {
			err = nil // it ended meanwhile
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sameShape refuses an array's child-by-child dependency on a job that is not an array of the
// same size: child i must have a child i to wait for.
func (a *api) sameShape(ctx context.Context, j jobs.Job, byChild []jobs.Dependency) error {
	for i, d := range byChild {
		other, err := a.jobs.Job(ctx, d.Job)
		if err != nil {
			return err
		}
		if other.Array == nil || other.Array.Size != j.Array.Size {
			e := Errorf(CodePolicyViolation, "job %s is not an array of %d: an n_to_n dependency makes child i wait for child i of an array of the same size", d.Job, j.Array.Size)
			e.Fields = []FieldProblem{{fmt.Sprintf("depends_on[%d]", i), "an array of the same size, or leave mode out"}}
			return e
		}
	}
	return nil
}

// settleChildByChild settles each child of new array j against its counterpart of each array it
// depends on child by child that ended before the child's edge was written, whose own release
// therefore never saw it; one that ends later releases it as any dependency does.
func (a *api) settleChildByChild(ctx context.Context, j jobs.Job, byChild []jobs.Dependency) error {
	var errs []error
	for _, d := range byChild {
		others, err := a.jobs.ChildStates(ctx, d.Job)
		if err != nil {
			return err
		}
		for _, o := range others {
			if o.Status.Terminal() && o.ArrayIndex != nil {
				errs = append(errs, a.releaser.Settle(ctx, o, jobs.ChildID(j.ID, *o.ArrayIndex), d.On))
			}
		}
	}
	return errors.Join(errs...)
}

// settledForPurge settles ended array or workflow j's children now, as its release would, and
// refuses (409) to let its record go while any of them has not ended: a parent purged first would
// leave children let into the queue running with nothing to cancel them, and the rest blocked for
// good.
func (a *api) settledForPurge(ctx context.Context, j jobs.Job) error {
	if _, err := a.releaser.Release(ctx, j.ID); err != nil {
		return err
	}
	children, err := a.jobs.ChildStates(ctx, j.ID)
	if err != nil {
		return err
	}
	if left := slices.DeleteFunc(children, func(c jobs.Job) bool { return c.Status.Terminal() }); len(left) > 0 {
		return Errorf(CodeConflict, "job %s is %s, but %d of its children have not ended yet (%s is %s); purge it again once they have",
			j.ID, j.Status, len(left), left[0].ID, left[0].Status)
	}
	return nil
}
