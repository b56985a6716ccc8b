package jobs

import (
	"fmt"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/outbox"
)

// What a job does when its region's cluster is lost (unreached for TIDEGATE_REGION_LOST_AFTER)
// while it runs there: OnRegionLostWait (the default, "") keeps it waiting for the region, its
// record saying region_unreachable; OnRegionLostRequeue queues it again, as a new attempt, for
// another of its regions, the lost attempt fenced.
const (
	OnRegionLostWait    = ""
	OnRegionLostRequeue = "requeue"
)

// ValidOnRegionLost says whether s is a job's on_region_lost.
func ValidOnRegionLost(s string) bool { return s == OnRegionLostWait || s == OnRegionLostRequeue }

// The reasons of the moves that take a job out of a region it was dispatched to, for the region
// rather than the job: "region_lost: <detail>" and "region_drained: <detail>".
const (
	ReasonRegionLost    = "region_lost"
	ReasonRegionDrained = "region_drained"
)

// Decisions about a job that its region's state made.
const (
	// DecisionRegionLost: its attempt in a lost region was fenced and the job queued again.
	DecisionRegionLost DecisionKind = "region_lost"
	// DecisionRegionDrained: an operator drained its region; its attempt was stopped and the job
	// queued again.
	DecisionRegionDrained DecisionKind = "region_drained"
	// DecisionFenceCleared: the objects its fenced attempt left in a region that came back were
	// deleted (Attempt and Region say which).
	DecisionFenceCleared DecisionKind = "fenced_attempt_deleted"
)

// Displaceable says whether job j may be taken out of its region for the region's sake and
// queued again: it is dispatched there (dispatching, pending or running) and runs to an end.
func (j Job) Displaceable() bool {
	return j.Status.Active() && !j.LongRunning() && !j.Group()
}

// Elsewhere says whether job j allows a region besides the one it is in.
func (j Job) Elsewhere() bool {
	return slices.ContainsFunc(j.Regions, func(r string) bool { return r != j.Region })
}

// Displaced is job j taken out of its region for the region's sake (reason ReasonRegionLost or
// ReasonRegionDrained, detail saying why) and queued again at at: a new attempt, in its place
// (its priority and created time are its own). A job that allows another region has its region
// cleared, so that a drain chooses again among the regions it allows (the region left among them:
// one that comes back is as good as any); one that does not waits in its region's queue. It
// counts against neither the job's retry policy nor its max_preemptions: the job did nothing
// wrong. fence, when set, is the region whose cluster may still run the attempt (only for a job
// that goes elsewhere): the move records it (Change.FenceIn), and the objects are deleted once
// the region is reached again. The move writes job.retrying.
func Displaced(j Job, reason, detail, fence string, at time.Time) (Job, Change, error) {
	elsewhere := j.Elsewhere()
	if !j.Displaceable() || fence != "" && !elsewhere {
		return j, Change{}, fmt.Errorf("job %s (%s %s in %q, regions %v) cannot be queued again for its region", j.ID, j.Kind, j.Status, j.Region, j.Regions)
	}
	next := j
	next.Attempt = j.AttemptOf() + 1
	kept := AttemptRecord{Attempt: j.AttemptOf(), Reason: reason + ": " + detail, EndedAt: at.UTC()}
	all := append(slices.Clone(j.Attempts), kept)
	next.Attempts = all[max(0, len(all)-MaxKeptAttempts):]
	if elsewhere {
		next.Region, next.Flavor = "", ""
	}
	moved, ch, err := Move(next, StatusQueued, kept.Reason, at)
	if err != nil {
		return j, Change{}, err
	}
	ev := Event(outbox.JobRetrying, moved, kept.Reason, at)
	ch.Event = &ev
	ch.Unplace, ch.FenceIn = elsewhere, fence
	ch.Retried = &Retried{
		Attempt: next.Attempt, SpotRetries: next.SpotRetries, ReadyTimeouts: next.ReadyTimeouts,
		NotBefore: at.UTC(), Attempts: next.Attempts, Preemptions: next.Preemptions,
	}
	return moved, ch, nil
}
