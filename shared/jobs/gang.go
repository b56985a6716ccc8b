package jobs

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// All or nothing once dispatched: a job's pods must all be scheduled within its ready timeout of
// its dispatch, or its attempt is deleted and the job queued again. Half a gang holds its room
// (and on spot, bills) for work that cannot start; a single pod that never schedules holds room
// for nothing, so a job of one pod is judged the same way. Kueue's waitForPodsReady does the same.

const (
	// DefaultReadyTimeout is a job's ready_timeout when it names none: Kueue's waitForPodsReady
	// default, long enough for a cluster autoscaler or Karpenter to bring up a node (a minute or
	// two on EKS) and pull a large image.
	DefaultReadyTimeout = 5 * time.Minute
	// DefaultReadyTimeoutMax is the longest ready_timeout a job may name unless the operator
	// says otherwise (TIDEGATE_READY_TIMEOUT_MAX): half an hour, six times the default, time for
	// a node to be launched, join and pull an image of tens of GB; past it, half a gang holds
	// room others could use while it waits for capacity that is not coming.
	DefaultReadyTimeoutMax = 30 * time.Minute
	// MinReadyTimeout is the least ready_timeout a job may name: below a second the judgement is
	// only as fine as the beat, which in dev runs every few seconds.
	MinReadyTimeout = time.Second
	// MaxReadyTimeouts is how many times a job's pods may fail to be scheduled in time: the
	// first timeouts queue it again, this one fails it with ReasonPodsNeverReady. Three waits of a
	// ready timeout each, backoffs between, are a quarter of an hour at the default: a gang the
	// cluster could not place three times running does not fit it, and each try holds room.
	MaxReadyTimeouts = 3
	// readyBackoff is the wait before a job that timed out is dispatched again, doubled with each
	// further timeout up to MaxBackoff: Kueue's requeuingStrategy.backoffBaseSeconds default,
	// time for what held the room to end.
	readyBackoff = time.Minute
)

// Why a job's pods were judged: queued again (with job.retrying) or failed.
const (
	ReasonPodsNotReady   = "pods_not_ready"
	ReasonPodsNeverReady = "pods_never_ready"
)

// PodsReady records that an attempt's pods were all scheduled, and when that was seen: from then
// on the attempt is never timed out (a pod evicted later is the retry policy's business).
type PodsReady struct {
	Attempt int       `json:"attempt" dynamodbav:"attempt"`
	At      time.Time `json:"at" dynamodbav:"at"`
}

// PodsSeen is what the beat saw of an attempt's pods: how many exist, and how many of them are
// scheduled (bound to a node, or PodScheduled true).
type PodsSeen struct {
	Exist, Scheduled int
}

// Readiness is what Ready decides of a dispatched job's pods: one of ReadyWait, ReadyDone,
// ReadyRequeue and ReadyFail.
type Readiness interface{ readiness() }

// ReadyWait: not all scheduled yet, and the timeout has not passed (or the job is not judged).
type ReadyWait struct{}

// ReadyDone: every pod the job runs at once is scheduled; recorded once, never judged again.
type ReadyDone struct{}

// ReadyRequeue: the timeout passed; the attempt goes, the job is queued again after NotBefore.
type ReadyRequeue struct {
	NotBefore time.Time
	Detail    string
}

// ReadyFail: the timeout passed for the MaxReadyTimeouts-th time; the job fails.
type ReadyFail struct{ Detail string }

func (ReadyWait) readiness()    {}
func (ReadyDone) readiness()    {}
func (ReadyRequeue) readiness() {}
func (ReadyFail) readiness()    {}

// Ready decides, at now, whether dispatched job j's current attempt has all its pods scheduled,
// given what the beat saw of them. A job is judged only while pending or running, when it runs to
// an end and runs pods, and until its attempt was once seen ready. The pods it waits for are its
// demand's pods (those that run at once); a record from before demand waits for those that exist.
func (j Job) Ready(seen PodsSeen, now time.Time) Readiness {
	if !j.AwaitsPods() {
		return ReadyWait{}
	}
	want := max(seen.Exist, 1)
	if n, err := strconv.Atoi(j.Demand["pods"]); err == nil && n > 0 {
		want = n
	}
	if seen.Exist >= want && seen.Scheduled >= want {
		return ReadyDone{}
	}
	since, ok := j.dispatchedAt()
	timeout := j.ReadyTimeoutOf()
	if !ok || now.Sub(since) < timeout {
		return ReadyWait{}
	}
	detail := fmt.Sprintf("%d of %d pods scheduled %s after dispatch", seen.Scheduled, want, timeout)
	if i, fail := j.Fails(RulePodsNotReady); fail {
		return ReadyFail{Detail: fmt.Sprintf("%s (its retry rule %d fails pods_not_ready)", detail, i+1)}
	}
	if j.ReadyTimeouts+1 >= MaxReadyTimeouts {
		return ReadyFail{Detail: fmt.Sprintf("%s (timeout %d of %d)", detail, j.ReadyTimeouts+1, MaxReadyTimeouts)}
	}
	wait := readyBackoff
	for i := 0; i < j.ReadyTimeouts && wait < MaxBackoff; i++ {
		wait *= 2
	}
	return ReadyRequeue{NotBefore: now.Add(min(wait, MaxBackoff)).UTC(), Detail: detail}
}

// AwaitsPods reports whether job j's pods are still to be judged by Ready: it is pending or
// running, runs to an end and runs pods, and its current attempt was never seen ready. A record
// without a ready timeout was submitted before jobs were judged so (the API stores one for every
// job since): its pods were never promised anything, and it is left alone.
func (j Job) AwaitsPods() bool {
	if (j.Status != StatusPending && j.Status != StatusRunning) || j.Podless || j.LongRunning() || j.ReadyTimeout == "" {
		return false
	}
	return j.PodsReady == nil || j.PodsReady.Attempt != j.AttemptOf()
}

// ReadyTimeoutOf is job j's ready timeout, DefaultReadyTimeout for one that cannot be read.
func (j Job) ReadyTimeoutOf() time.Duration {
	if d, err := time.ParseDuration(j.ReadyTimeout); err == nil && d > 0 {
		return d
	}
	return DefaultReadyTimeout
}

// dispatchedAt is when job j's current attempt was applied: its last move to pending.
func (j Job) dispatchedAt() (time.Time, bool) { return j.LastAt(StatusPending) }

// LastAt is when job j last moved to status s, from its history; false if it never did.
func (j Job) LastAt(s Status) (time.Time, bool) {
	for _, t := range slices.Backward(j.StatusHistory) {
		if t.Status == s {
			return t.At, true
		}
	}
	return time.Time{}, false
}

// NotReady is job j, whose attempt's pods were not all scheduled in time (r), moved back to the
// queue at at: the move writes job.retrying with reason "retrying: pods_not_ready: <detail>",
// keeps what the attempt left (kept), and counts the timeout in ReadyTimeouts, not against its
// retry policy's attempts: the job did nothing wrong, the cluster had no room.
func NotReady(j Job, r ReadyRequeue, kept AttemptRecord, at time.Time) (Job, Change, error) {
	next := j
	next.Attempt = j.AttemptOf() + 1
	next.ReadyTimeouts = j.ReadyTimeouts + 1
	kept.Attempt, kept.Reason, kept.EndedAt = j.AttemptOf(), ReasonPodsNotReady+": "+r.Detail, at.UTC()
	all := append(slices.Clone(j.Attempts), kept)
	next.Attempts = all[max(0, len(all)-MaxKeptAttempts):]
	notBefore := r.NotBefore
	next.NotBefore = &notBefore
	moved, ch, err := Move(next, StatusQueued, ReasonRetrying+": "+kept.Reason, at)
	if err != nil {
		return j, Change{}, err
	}
	ch.Retried = &Retried{
		Attempt: next.Attempt, SpotRetries: next.SpotRetries, ReadyTimeouts: next.ReadyTimeouts,
		NotBefore: notBefore, Attempts: next.Attempts, Preemptions: next.Preemptions,
	}
	return moved, ch, nil
}

// AllScheduled is the change that records job j's current attempt's pods all scheduled at at.
func AllScheduled(j Job, at time.Time) Change {
	return Change{From: j.Status, To: j.Status, At: at.UTC(), PodsReady: &PodsReady{Attempt: j.AttemptOf(), At: at.UTC()}}
}
