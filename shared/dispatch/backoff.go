package dispatch

import (
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/jobs"
)

// reasonRetryBackoff is the pending_reason of a retried job waiting out its retry policy's backoff.
const reasonRetryBackoff admission.Reason = "retry_backoff"

// backingOff splits queued into the jobs a drain may admit now and the retried ones still waiting
// out their backoff at now, as waits. A job backing off holds no room and no place: admission
// never sees it, so it cannot keep others of its tenant or region waiting.
func backingOff(queued []jobs.Job, now time.Time) (ready []jobs.Job, waits []admission.FlavorWait) {
	ready = queued[:0:0]
	for _, j := range queued {
		if j.BackingOff(now) {
			waits = append(waits, admission.FlavorWait{Wait: admission.Wait{ID: j.ID, Reason: reasonRetryBackoff}})
			continue
		}
		ready = append(ready, j)
	}
	return ready, waits
}
