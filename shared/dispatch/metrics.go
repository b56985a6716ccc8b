package dispatch

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/metrics"
)

// Outcomes of a dispatch attempt, as metrics.DispatchOutcomes counts them.
const (
	outcomeDispatched = "dispatched"
	outcomeRejected   = "rejected_by_cluster" // a name collision too: the job fails at once
	outcomeFailed     = "dispatch_failed"
	outcomeRetried    = "retried"
	outcomeNameInUse  = "name_in_use"
)

// gauge records what a drain left in region: its waiting jobs (and how many of them their price
// holds), its active jobs (those it found and those it admitted) and its oldest waiting job's
// age. The waiting jobs and the oldest are the census's, less what p admitted, or what p judged
// where it saw more; the gated ones are those p judged (a drain reads the gated jobs it passes
// over on its way to filling its room, not those behind).
func (h *Handler) gauge(ctx context.Context, region string, c dynamo.Census, p plan, active int, waits []admission.FlavorWait) {
	created := make(map[string]time.Time, len(p.queued))
	for _, j := range p.queued {
		created[j.ID] = j.CreatedAt
	}
	gated, oldest, now := 0, 0.0, h.now()
	if !c.Oldest.IsZero() {
		oldest = now.Sub(c.Oldest).Seconds()
	}
	for _, w := range waits {
		if w.Reason == admission.ReasonSpotPriceAboveCap || w.Reason == admission.ReasonSpotPriceUnknown {
			gated++
		}
		if at, ok := created[w.ID]; ok {
			oldest = max(oldest, now.Sub(at).Seconds())
		}
	}
	queued := max(len(waits), c.Jobs-len(p.decision.Admit))
	if queued == 0 {
		oldest = 0 // the census's oldest was among those admitted
	}
	dims := []string{region}
	err := errors.Join(
		h.Metrics.Put(metrics.QueuedJobs, dims, float64(queued)),
		h.Metrics.Put(metrics.GatedJobs, dims, float64(gated)),
		h.Metrics.Put(metrics.ActiveJobs, dims, float64(active)),
		h.Metrics.Put(metrics.OldestQueuedAge, dims, oldest),
	)
	h.metricError(ctx, err)
}

// counted records one dispatch attempt of j that ended in to, for reason: its outcome, and for a
// job dispatched the time since it was submitted.
func (h *Handler) counted(ctx context.Context, j jobs.Job, to jobs.Status, reason string) {
	outcome := outcomeDispatched
	switch {
	case to == jobs.StatusFailed && strings.HasPrefix(reason, jobs.ReasonDispatchFailed):
		outcome = outcomeFailed
	case to == jobs.StatusFailed:
		outcome = outcomeRejected
	case to == jobs.StatusQueued:
		outcome = outcomeNameInUse
	case to == jobs.StatusDispatching:
		outcome = outcomeRetried
	}
	err := h.Metrics.Put(metrics.DispatchOutcomes, []string{j.Region, outcome}, 1)
	if outcome == outcomeDispatched {
		err = errors.Join(err, h.Metrics.Put(metrics.SubmitToDispatched, []string{j.Region}, float64(h.now().Sub(j.CreatedAt)/time.Millisecond)))
	}
	h.metricError(ctx, err)
}

func (h *Handler) metricError(ctx context.Context, err error) {
	if err != nil {
		h.Log.WarnContext(ctx, "recording dispatch metrics", "error", err)
	}
}
