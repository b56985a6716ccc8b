package jobs

import "time"

// Decision is one thing Tidegate decided about a job, and what it decided from, kept beside the
// job (the newest MaxDecisions shown) so its owner can see why it ran where and when it did, or
// why not. It names nothing of another tenant: a job evicted for another tenant's says so by
// its own tenant's borrowing, never by the other tenant or job.
type Decision struct {
	At   time.Time    `json:"at" dynamodbav:"at"`
	Kind DecisionKind `json:"kind" dynamodbav:"kind"`
	// Reason is what was decided, in the words of the field it set: a pending reason, an
	// eviction's reason, a retry's cause.
	Reason  string `json:"reason,omitempty" dynamodbav:"reason,omitempty"`
	Attempt int    `json:"attempt,omitempty" dynamodbav:"attempt,omitempty"`
	Region  string `json:"region,omitempty" dynamodbav:"region,omitempty"`
	Flavor  string `json:"flavor,omitempty" dynamodbav:"flavor,omitempty"`
	// Resource names the resource a waiting job lacks.
	Resource string `json:"resource,omitempty" dynamodbav:"resource,omitempty"`
	// Quota is the job's tenant's standing on the flavor per resource, when it was decided:
	// what it held and its nominal quota.
	Quota map[string]QuotaStanding `json:"quota,omitempty" dynamodbav:"quota,omitempty"`
	// Price is the spot price observed against the job's cap.
	Price *SpotGate `json:"price,omitempty" dynamodbav:"price,omitempty"`
	// Evicted is how many running jobs were evicted to make room for this one.
	Evicted int `json:"evicted,omitempty" dynamodbav:"evicted,omitempty"`
	// Rule says which part of the retry policy decided: "rules[N]" or "on".
	Rule string `json:"rule,omitempty" dynamodbav:"rule,omitempty"`
}

// QuotaStanding is a tenant's use of one resource of a flavor and its nominal quota there, as
// quantities ("6", "48Gi").
type QuotaStanding struct {
	Held    string `json:"held" dynamodbav:"held"`
	Nominal string `json:"nominal" dynamodbav:"nominal"`
}

// DecisionKind is what a Decision decided.
type DecisionKind string

const (
	// DecisionAdmitted: admitted on a flavor of a region, and dispatched.
	DecisionAdmitted DecisionKind = "admitted"
	// DecisionWaiting: its reason to wait changed (Reason is its pending_reason).
	DecisionWaiting DecisionKind = "waiting"
	// DecisionRoomReclaimed: running jobs on room their tenants borrowed were evicted for it.
	DecisionRoomReclaimed DecisionKind = "room_reclaimed"
	// DecisionPreempted: it was evicted to make room (Reason: reclaimed, lower_priority).
	DecisionPreempted DecisionKind = "preempted"
	// DecisionRegion: a roaming job was sent to a region (Reason: why).
	DecisionRegion DecisionKind = "region_chosen"
	// DecisionRetry: an attempt's end was retried or not (Reason: its cause; Rule: what decided).
	DecisionRetry DecisionKind = "retry"
)

// MaxDecisions is how many of a job's newest decisions are shown; each is kept for
// DecisionsKept.
const (
	MaxDecisions  = 50
	DecisionsKept = 30 * 24 * time.Hour
)

// JobDecision is a decision about the job with id JobID, as a store keeps it.
type JobDecision struct {
	JobID string
	Decision
}
