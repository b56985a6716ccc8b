package httpapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// settleTries bounds how often a submission reads its dependencies again because one ended
// between the read and the write: each try needs a dependency to end within milliseconds.
const settleTries = 5

// createWaiting stores new job j as its dependencies (deps, checked) leave it: queued when it has
// none or all have ended as asked, blocked on those that have not ended yet, or cancelled
// dependency_not_met when one has ended otherwise. A dependency the caller's tenant may not see
// is a 404 naming it, as a job of another tenant is everywhere else.
func (a *api) createWaiting(ctx context.Context, j jobs.Job, deps []jobs.Dependency, idem *dynamo.Idempotency, now time.Time) (jobs.Job, bool, error) {
	if len(deps) == 0 && j.Array == nil {
		return a.create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), idem, now)
	}
	j.DependsOn = deps
	for try := 1; ; try++ {
		statuses, err := a.dependencies(ctx, deps)
		if err != nil {
			return j, false, err
		}
		whole, _ := jobs.Split(deps) // an array's child-by-child ones its children wait on (createArray)
		status, waiting, reason := jobs.Settle(whole, statuses)
		event := outbox.JobQueued
		switch {
		case status == jobs.StatusBlocked:
			event = outbox.JobBlocked
		case status == jobs.StatusCancelled:
			event = outbox.JobCancelled
		case j.Array != nil:
			// An array waiting on nothing is started by the releaser, at once (arrays.go).
			status, reason = jobs.StatusBlocked, ""
		}
		settled := jobs.Block(j, status, waiting, reason, now)
		stored, replayed, err := a.createArray(ctx, settled, jobs.Event(event, settled, reasonOfEvent(status, reason), now), idem, now)
		if !errors.Is(err, dynamo.ErrDependencyEnded) || try == settleTries {
			return stored, replayed, err
		}
	}
}

// reasonOfEvent is the reason a new job's first event gives: why it was cancelled at once.
func reasonOfEvent(status jobs.Status, reason string) string {
	if status == jobs.StatusCancelled {
		return reason
	}
	return ""
}

// dependencies reads the status of each job deps name, refusing one the caller's tenant may not
// see (or that is gone) with a 404 naming it.
func (a *api) dependencies(ctx context.Context, deps []jobs.Dependency) (map[string]jobs.Status, error) {
	ids := make([]string, len(deps))
	for i, d := range deps {
		ids[i] = d.Job
	}
	read, err := a.jobs.Dependencies(ctx, ids)
	if err != nil {
		return nil, err
	}
	tenant := principalOf(ctx).Tenant
	out := map[string]jobs.Status{}
	for _, j := range read {
		if j.Tenant == tenant.Name && tenant.Allows(j.Namespace) {
			out[j.ID] = j.Status
		}
	}
	for i, d := range deps {
		if _, ok := out[d.Job]; !ok {
			e := Errorf(CodeNotFound, "no job %q in your namespaces: a job can depend only on jobs of its tenant's that are still kept", d.Job)
			e.Fields = []FieldProblem{{fmt.Sprintf("depends_on[%d].job", i), "no such job of yours"}}
			return nil, e
		}
	}
	return out, nil
}
