package jobs

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/outbox"
)

// ReasonPreempted starts the reason of the move that queues a job again after its region evicted
// it to make room for another: "preempted: <why>", why being reclaimed (its tenant had borrowed
// the room) or lower_priority (its own tenant's job of higher priority needed it).
const ReasonPreempted = "preempted"

// ReasonPreemptedTooOften starts the reason of the move that fails a job evicted more often than
// its max_preemptions allows.
const ReasonPreemptedTooOften = "preempted_too_often"

// MaxMaxPreemptions bounds a job's max_preemptions.
const MaxMaxPreemptions = 100

// Shield keeps a job admitted by evicting a tenant's jobs from being evicted for that tenant's
// jobs until Until, so two tenants never take the same room back and forth.
type Shield struct {
	Tenant string    `json:"tenant" dynamodbav:"tenant"`
	Until  time.Time `json:"until" dynamodbav:"until"`
}

// Preempted is job j, evicted to make room for another job (why), moved back to the queue at at:
// in its place, since its priority and created time are its own. The move writes job.preempted,
// keeps what the attempt left (kept), and counts the eviction in Preemptions, not against its
// retry policy's attempts: the job did nothing wrong. Its next run is a new attempt, so nothing
// the evicted one reports is recorded. A job evicted as often as its MaxPreemptions allows fails
// preempted_too_often instead.
func Preempted(j Job, why string, kept AttemptRecord, at time.Time) (Job, Change, error) {
	if i, fail := j.Fails(RulePreempted); fail {
		return Move(j, StatusFailed, fmt.Sprintf("%s: %s: its retry rule %d fails preempted", ReasonPreempted, why, i+1), at)
	}
	if m := j.MaxPreemptions; m != nil && j.Preemptions >= *m {
		// A job evicted more often than it allows fails instead: the work it loses each time is
		// worth more to its owner than waiting for its room.
		return Move(j, StatusFailed, fmt.Sprintf("%s: evicted (%s) with %d evictions already, its max_preemptions %d", ReasonPreemptedTooOften, why, j.Preemptions, *m), at)
	}
	next := j
	next.Attempt = j.AttemptOf() + 1
	next.Preemptions = j.Preemptions + 1
	next.Shield = nil
	kept.Attempt, kept.Reason, kept.EndedAt = j.AttemptOf(), ReasonPreempted+": "+why, at.UTC()
	all := append(slices.Clone(j.Attempts), kept)
	next.Attempts = all[max(0, len(all)-MaxKeptAttempts):]
	moved, ch, err := Move(next, StatusQueued, kept.Reason, at)
	if err != nil {
		return j, Change{}, err
	}
	ev := Event(outbox.JobPreempted, moved, kept.Reason, at)
	ch.Event = &ev
	ch.Retried = &Retried{
		Attempt: next.Attempt, SpotRetries: next.SpotRetries, ReadyTimeouts: next.ReadyTimeouts,
		NotBefore: at.UTC(), Attempts: next.Attempts, Preemptions: next.Preemptions,
	}
	return moved, ch, nil
}

// Shielded is the change that shields queued job j from tenant's jobs until until, and records
// why it waits: jobs were evicted for it.
func Shielded(j Job, tenant, reason string, until, at time.Time) Change {
	return Change{From: j.Status, To: j.Status, At: at.UTC(), PendingReason: reason, Shield: &Shield{Tenant: tenant, Until: until.UTC()}}
}

// CheckpointURI is the checkpoint prefix of job id of tenant under bucket: s3://BUCKET/TENANT/ID/,
// "" without a bucket. Each job has its own, which all its attempts share.
func CheckpointURI(bucket, tenant, id string) string {
	if bucket == "" {
		return ""
	}
	return "s3://" + strings.TrimSuffix(strings.TrimPrefix(bucket, "s3://"), "/") + "/" + tenant + "/" + id + "/"
}
