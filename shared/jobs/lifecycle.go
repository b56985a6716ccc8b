package jobs

import (
	"errors"
	"fmt"
	"time"

	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/outbox"
)

// IDKey is the label and annotation every object a job creates carries, pod templates included:
// the beat finds a job's objects by the label, dispatch tells its own objects from another's by
// the annotation, and hosting leaves pods that carry it out of its hosts.
const IDKey = "tidegate.io/job-id"

// moves lists, for each status, the statuses a job in it may move to, with the event each move
// writes ("" for none). A job's life only goes forward; the one way back is dispatch giving a
// claimed job back to the queue, while an earlier job's finished objects still hold its names,
// and the beat's retry of a job whose attempt ended in a way its retry policy retries (Retrying).
var moves = map[Status]map[Status]outbox.Type{
	StatusBlocked: {
		StatusRunning:   outbox.JobStarted,   // an array's parent, let in: its children may run
		StatusQueued:    outbox.JobQueued,    // every job it waits for ended as it asked
		StatusCancelled: outbox.JobCancelled, // one of them cannot any more, or a user cancelled it
	},
	StatusQueued: {
		StatusDispatching: "",               // claimed by a drain
		StatusFailed:      outbox.JobFailed, // its price still held it at its spot deadline
		StatusCancelled:   outbox.JobCancelled,
	},
	StatusDispatching: {
		StatusPending:   outbox.JobDispatched,
		StatusFailed:    outbox.JobFailed, // the cluster refused its objects
		StatusQueued:    "",               // back to wait for a name held by a finishing job
		StatusCancelled: outbox.JobCancelled,
	},
	StatusPending: {
		StatusQueued:    outbox.JobRetrying, // its attempt ended in a way its retry policy retries
		StatusRunning:   outbox.JobStarted,
		StatusSucceeded: outbox.JobCompleted, // podless: done once applied
		StatusFailed:    outbox.JobFailed,
		StatusCancelled: outbox.JobCancelled,
	},
	StatusRunning: {
		StatusQueued:    outbox.JobRetrying, // as from pending
		StatusSucceeded: outbox.JobCompleted,
		StatusFailed:    outbox.JobFailed,
		StatusCancelled: outbox.JobCancelled,
	},
}

// workflowEvents are the events a workflow's parent writes in place of a job's: its ends alone.
var workflowEvents = map[outbox.Type]outbox.Type{
	outbox.JobCompleted: outbox.WorkflowSucceeded,
	outbox.JobFailed:    outbox.WorkflowFailed,
	outbox.JobCancelled: outbox.WorkflowCancelled,
}

// Why a dispatch failed, the first word of its reason: the cluster refused the job's objects with
// an answer no retry changes (invalid, forbidden, a namespace or kind it does not have), or it
// kept failing in ways a retry might have mended until MaxDispatchAttempts.
const (
	ReasonRejectedByCluster = "rejected_by_cluster"
	ReasonDispatchFailed    = "dispatch_failed"
)

// Why a queued job failed or left the queue at its spot deadline: its price still held it then,
// and it asked to fail (ReasonSpotDeadlinePassed) or to run on demand (ReasonSpotDeadlineOnDemand,
// the reason of its dispatch in its status history).
const (
	ReasonSpotDeadlinePassed   = "spot_deadline_passed"
	ReasonSpotDeadlineOnDemand = "spot deadline passed: on demand"
)

// MaxDispatchAttempts bounds the applies of a job that the cluster keeps answering with errors a
// retry may mend; the last one fails the job.
const MaxDispatchAttempts = 5

// ErrMove is what Move answers for a move the job's life does not allow.
var ErrMove = errors.New("not a move a job can make")

// CanMove reports whether a job in status from may move to status to.
func CanMove(from, to Status) bool {
	_, ok := moves[from][to]
	return ok
}

// Change is one write to a job's record: the status it must be in (From) and the one it ends in
// (To, the same for a change of fields alone), and the fields the write sets besides. The store
// also clears what the statuses imply: the claim when a job leaves dispatching, the pending
// reason and queue position when it leaves the queue.
type Change struct {
	From, To Status
	Reason   string
	At       time.Time
	// Event is written in the same transaction as the change, when set.
	Event *outbox.Event
	// Claim, when set, must be the claim token on the job: only the claim's holder may record.
	Claim string

	// DispatchAttempts and DispatchError, when DispatchAttempts is set, count a failed apply.
	DispatchAttempts int
	DispatchError    string

	// The fields set besides the status; a zero value leaves the field as it is.
	NewClaim      *Claim // a claim taken (queued → dispatching) or adopted
	PendingReason string // why a queued job waits
	// PendingResource is the resource it lacks, with PendingReason; "" removes the last one.
	PendingResource string
	QueuePosition   int       // its place in the queue, from 1
	SpotGate        *SpotGate // the spot price last seen for its cap
	// Placement, LogTail and Exits keep what a finished job's pods were, to outlive them.
	Placement map[string]any
	LogTail   []string
	Exits     []Exit
	Cost      *Cost // the estimate made when it ends
	// ClusterJobs keep the job's batch Jobs' status when it ends, to outlive their TTL.
	ClusterJobs []ClusterJob
	// Region, when set, is the region a roaming job's claim chooses: the write sets it, and holds
	// only while the job has no region yet and lists this one among its Regions.
	Region       string
	RegionChoice *RegionChoice // why a roaming job was sent where it was, or waits
	// Attempt is the attempt the history entry belongs to, from the first retry on.
	Attempt int
	// Retried, when set, is a retry's next attempt (Retrying, NotReady).
	Retried *Retried
	// Shield, when set, shields a queued job from a tenant's jobs (Shielded).
	Shield *Shield
	// PodsReady, when set, records an attempt's pods all scheduled (AllScheduled).
	PodsReady *PodsReady
	// Settled, on a move to an end, leaves nothing of it to release: its array was cancelled
	// and counts it no more, and nothing waits on it.
	Settled bool
	// WaitingOnly, on a blocked job's move, holds the write only while the job waits on that one
	// job alone: the release of its last dependency queues it in one write.
	WaitingOnly string
	// DetailsDue, on a move to an end, marks the end's details still to be added (Job.DetailsDue);
	// Detailed is the change that adds them to an ended job (From and To its status), which holds
	// only while they are due, and clears the mark.
	DetailsDue, Detailed bool
	// Unplace, on a move back to the queue, clears the job's region and flavor, so that a job
	// allowing several regions is chosen a region afresh (Displaced).
	Unplace bool
	// FenceIn, with Unplace, is the region whose cluster may still run the attempt this move
	// ends: the store records it there in the same write, and the region admits nothing until
	// what the attempt left is deleted (dynamo.Fence).
	FenceIn string
}

// Moves reports whether the change moves the job to another status.
func (c Change) Moves() bool { return c.From != c.To }

// Check says whether the store may make the change: a move the job's life allows, or a change
// of fields alone.
func (c Change) Check() error {
	if _, ok := ParseStatus(string(c.From)); !ok {
		return fmt.Errorf("%w: %q is not a status", ErrMove, c.From)
	}
	if c.Moves() && !CanMove(c.From, c.To) {
		return fmt.Errorf("%w: a %s job cannot become %s", ErrMove, c.From, c.To)
	}
	if c.At.IsZero() {
		return fmt.Errorf("the change of a %s job to %s has no time", c.From, c.To)
	}
	return nil
}

// Move is job j moved to status to, for reason, at: the moved job, the change that records it and
// the event it writes (nil for a move that tells webhooks nothing: a claim, a return to the queue).
// A move the job's life does not allow is an error naming both statuses.
func Move(j Job, to Status, reason string, at time.Time) (Job, Change, error) {
	t, ok := moves[j.Status][to]
	if !ok {
		return j, Change{}, fmt.Errorf("job %s: %w: a %s job cannot become %s", j.ID, ErrMove, j.Status, to)
	}
	at = at.UTC()
	c := Change{From: j.Status, To: to, Reason: reason, At: at}
	if j.AttemptOf() > 1 {
		c.Attempt = j.AttemptOf()
	}
	moved := j
	moved.Status, moved.UpdatedAt = to, at
	moved.StatusHistory = append(append([]Transition(nil), j.StatusHistory...), Transition{Status: to, At: at, Reason: reason, Attempt: c.Attempt})
	if j.Status == StatusDispatching {
		moved.Claim = nil
	}
	if j.Status == StatusQueued || j.Status == StatusBlocked {
		moved.PendingReason, moved.QueuePosition = "", 0
	}
	if j.Status == StatusBlocked {
		moved.WaitingOn = nil
	}
	if j.Workflow != nil {
		t = workflowEvents[t]
	}
	if t != "" {
		ev := Event(t, moved, reason, at)
		c.Event = &ev
	}
	return moved, c, nil
}

// Adopt is a dispatching job whose claim ran out (its drainer died), taken over under claim: the
// change holds only while the dead claim is still the one on the job, so of two adopters one wins.
func Adopt(j Job, claim Claim, at time.Time) (Job, Change, error) {
	if j.Status != StatusDispatching || j.Claim == nil {
		return j, Change{}, fmt.Errorf("job %s: %w: only a claimed (dispatching) job can be adopted, not a %s one", j.ID, ErrMove, j.Status)
	}
	c := Change{From: StatusDispatching, To: StatusDispatching, At: at.UTC(), Claim: j.Claim.Token, NewClaim: &claim}
	adopted := j
	adopted.Claim = &claim
	return adopted, c, nil
}

// Park is claimed job j after an apply the cluster failed in a way a retry may mend (why): its
// claim parked until then, when the next drain takes it up again, and the attempt counted. Only
// the claim's holder may park it.
func Park(j Job, why string, until, at time.Time) (Job, Change, error) {
	if j.Status != StatusDispatching || j.Claim == nil {
		return j, Change{}, fmt.Errorf("job %s: %w: only a claimed (dispatching) job can wait to be applied again, not a %s one", j.ID, ErrMove, j.Status)
	}
	parked := Claim{Token: j.Claim.Token, Until: until.UTC(), Parked: true}
	c := Change{
		From: StatusDispatching, To: StatusDispatching, At: at.UTC(), Claim: j.Claim.Token, NewClaim: &parked,
		DispatchAttempts: j.DispatchAttempts + 1, DispatchError: why,
	}
	out := j
	out.Claim, out.DispatchAttempts, out.DispatchError = &parked, c.DispatchAttempts, why
	return out, c, nil
}

// Wait is what a queued job's record says of its wait, at: reason and position, and the spot
// price seen for its cap (each left as it is when zero). It holds only while the job is queued.
func Wait(reason string, position int, gate *SpotGate, at time.Time) Change {
	return Change{From: StatusQueued, To: StatusQueued, At: at.UTC(), PendingReason: reason, QueuePosition: position, SpotGate: gate}
}

// Event is the event of type t about job j, at: what webhooks are told of it.
func Event(t outbox.Type, j Job, reason string, at time.Time) outbox.Event {
	data := map[string]any{
		"job_id": j.ID, "namespace": j.Namespace, "region": j.Region,
		"status": string(j.Status), "priority": j.Priority, "labels": j.Labels,
	}
	if reason != "" {
		data["reason"] = reason
	}
	if len(j.Regions) > 0 {
		data["regions"] = j.Regions
	}
	return outbox.Event{ID: ids.New("evt_", at), Type: t, At: at.UTC(), Tenant: j.Tenant, Namespace: j.Namespace, Data: data}
}
