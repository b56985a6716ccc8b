package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// capRetryAfter is what a submission refused at its tenant's cap is told to wait, in seconds: a
// minute, how often a region's drain counts its queues, so the jobs that have left them since
// (dispatched, cancelled, deleted) no longer count by then.
const capRetryAfter = 60

// overCap answers whether a new job of tenant t would take its queued jobs past its cap
// (tenancy.Tenant.QueuedLimit of the deployment's), and if so the 429 that says so, with
// Retry-After set on w.
//
// The count is the drains' censuses (queueCensus.queuedOf), as this process read them at most
// censusFresh ago, not the queues themselves: no submission reads a queue, however long any tenant
// makes it. It is approximate. A tenant may pass its cap by what it submits between a census's
// start and the next one that this process reads: its request rate times about a minute (the
// census interval) and censusFresh. And a job that left the queue still counts until the next
// census, so a tenant at its cap waits up to a minute after its queue drains. An exact count would
// be a counter per tenant written in the same transaction as every submission, claim and end of a
// job: a write more on the paths every job takes, to close a gap that the request budget already
// bounds. A census that cannot be read lets the submission through: the cap guards the queues
// against floods, and a failed read is no flood.
func (a *api) overCap(ctx context.Context, w http.ResponseWriter, t tenancy.Tenant, adds int) error {
	limit := t.QueuedLimit(a.maxQueued)
	if limit == 0 {
		return nil
	}
	if adds > limit {
		// An array whose parallelism alone is past the cap would wait for ever at it.
		return Invalid(fmt.Sprintf("the submission lets %d jobs into the queue at once, more than tenant %s's cap of %d queued jobs", adds, t.Name, limit),
			FieldProblem{"array.parallelism", fmt.Sprintf("at most %d", limit)})
	}
	c, err := a.cachedCensus(ctx)
	if err != nil {
		a.logger(ctx).WarnContext(ctx, "queued jobs not counted; the submission is let through", "tenant", t.Name, "err", err)
		return nil
	}
	n := c.queuedOf(t.Name)
	if n+adds <= limit {
		return nil
	}
	w.Header().Set("Retry-After", strconv.Itoa(capRetryAfter))
	return queueFull(t.Name, n, limit)
}

// queueFull is the 429 of a submission that would take tenant's n queued jobs past its cap.
func queueFull(tenant string, n, limit int) *Error {
	msg := fmt.Sprintf(msgQueueFull, tenant, n, limit)
	e := Errorf(CodeQueueFull, detailQueueFull, msg, capRetryAfter)
	e.Violations = []any{limitViolation{Field: "queued_jobs", Limit: limit, Message: msg}}
	return e
}

// msgQueueFull says whose queued jobs, how many and the cap.
const msgQueueFull = "tenant %s has %d jobs queued and its cap is %d"

// replayOverCap answers a submission refused at its cap (refused) that carries an Idempotency-Key:
// if the key already made a job, with the same body, that job is answered 200 as a replay would be,
// since the job exists whatever the queue holds now; a key used with another body is the usual 409.
// Otherwise the refusal stands.
func (a *api) replayOverCap(ctx context.Context, w http.ResponseWriter, idem *dynamo.Idempotency, refused error) error {
	if idem == nil {
		return refused
	}
	j, ok, err := a.jobs.Replay(ctx, *idem, a.now())
	switch {
	case errors.Is(err, dynamo.ErrIdempotencyConflict):
		w.Header().Del("Retry-After")
		return Errorf(CodeConflict, "%s", err.Error())
	case err != nil:
		return err
	case !ok:
		return refused
	}
	w.Header().Del("Retry-After")
	return writeJSON(w, http.StatusOK, map[string]any{"job": j})
}
