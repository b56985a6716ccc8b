// Package jobs provides the job record: what was submitted, where it runs and what became of it.
package jobs

import "time"

// Status is where a job is in its life. See API.md for the transitions.
type Status string

// The statuses, in the order a job normally passes through them.
const (
	// StatusBlocked: the job waits for jobs it depends on (depend.go) before it joins the queue.
	StatusBlocked     Status = "blocked"
	StatusQueued      Status = "queued"
	StatusDispatching Status = "dispatching"
	StatusPending     Status = "pending"
	StatusRunning     Status = "running"
	StatusSucceeded   Status = "succeeded"
	StatusFailed      Status = "failed"
	StatusCancelled   Status = "cancelled"
)

// ParseStatus reads a status name.
func ParseStatus(s string) (Status, bool) {
	switch st := Status(s); st {
	case StatusBlocked, StatusQueued, StatusDispatching, StatusPending, StatusRunning, StatusSucceeded, StatusFailed, StatusCancelled:
		return st, true
	}
	return "", false
}

// StatusCompleted is the seed API's name for a job that succeeded: filters (a listing's status,
// a bulk delete's) take it as succeeded; records never hold it.
const StatusCompleted = "completed"

// ParseStatusFilter reads a status as filters take it: a status name, or "completed" for
// succeeded.
func ParseStatusFilter(s string) (Status, bool) {
	if s == StatusCompleted {
		return StatusSucceeded, true
	}
	return ParseStatus(s)
}

// Priority bounds from API.md: 0–100, 50 when not given.
const (
	MinPriority     = 0
	MaxPriority     = 100
	DefaultPriority = 50
)

// Job is one submission and its fate. Manifests are kept apart from the rest of the record
// (compressed), so listings stay small.
type Job struct {
	ID string `json:"id" dynamodbav:"id"`
	// Name is its workload's own name (NameOf its manifests), to find it by.
	Name      string `json:"name" dynamodbav:"name,omitempty"`
	Tenant    string `json:"tenant" dynamodbav:"tenant"`
	Namespace string `json:"namespace" dynamodbav:"namespace"`
	Region    string `json:"region" dynamodbav:"region"`
	// Regions, when set, are the regions the job may run in; a drain chooses one (Region, "" until
	// then) and says why in RegionChoice.
	Regions       []string          `json:"regions,omitempty" dynamodbav:"regions,omitempty"`
	RegionChoice  *RegionChoice     `json:"region_choice,omitempty" dynamodbav:"region_choice,omitempty"`
	Priority      int               `json:"priority" dynamodbav:"priority"`
	Labels        map[string]string `json:"labels" dynamodbav:"labels"`
	Status        Status            `json:"status" dynamodbav:"status"`
	StatusHistory []Transition      `json:"status_history" dynamodbav:"status_history"`
	Spot          *Spot             `json:"spot,omitempty" dynamodbav:"spot,omitempty"`
	Template      string            `json:"template,omitempty" dynamodbav:"template,omitempty"`
	RetryOf       string            `json:"retry_of,omitempty" dynamodbav:"retry_of,omitempty"`
	CreatedAt     time.Time         `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at" dynamodbav:"updated_at"`
	// GPUs is what the job's pods request in all, for the region's GPU budget.
	GPUs int64 `json:"gpus" dynamodbav:"gpus"`
	// Demand is what the job's pods that can run at once request in all, per resource name
	// (cpu, memory, ephemeral-storage, nvidia.com/gpu and other extended resources, pods), as
	// Kubernetes quantities ("20", "6400Mi"): worked out once at submission by the admission
	// policy (shared/demand), each pod counted as the kube-scheduler counts it. Absent for a
	// job that runs no pods, and on records stored before it was.
	Demand map[string]string `json:"demand,omitempty" dynamodbav:"demand,omitempty"`
	// NodeSelector is the node labels the job's pods select, the same for every pod (the policy
	// refuses pods of one job that disagree): which of a region's flavors it may run on.
	NodeSelector map[string]string `json:"node_selector,omitempty" dynamodbav:"node_selector,omitempty"`
	// Flavor is the flavor of its region the job was admitted on, whose node labels its pods
	// select; set by its claim, kept once it ends.
	Flavor string `json:"flavor,omitempty" dynamodbav:"flavor,omitempty"`
	// PendingResource names the resource a queued job waiting for room or quota lacks (with
	// PendingReason flavor_full, tenant_quota_exhausted or larger_than_every_flavor).
	PendingResource string `json:"pending_resource,omitempty" dynamodbav:"pending_resource,omitempty"`
	// Kind says whether the job runs to an end or until cancelled (KindOf its manifests, at
	// submit): a long-running job holds no job slot of its region unless configured to.
	Kind Kind `json:"kind,omitempty" dynamodbav:"kind,omitempty"`
	// Podless marks a job whose manifests run no pods (ConfigMaps, Services): it is done once applied.
	Podless bool `json:"podless,omitempty" dynamodbav:"podless,omitempty"`
	// PendingReason says why a queued job waits: capacity, spot_price_above_cap,
	// spot_price_unknown, queued_behind_higher_priority or name_in_use_by_finishing_job; empty
	// once dispatched.
	PendingReason string `json:"pending_reason,omitempty" dynamodbav:"pending_reason,omitempty"`
	// QueuePosition is a queued job's place in its queue, from 1, counted when the API reads the
	// job (drains no longer write it; a record from before may keep an old one, which the API
	// replaces).
	QueuePosition int `json:"queue_position,omitempty" dynamodbav:"queue_position,omitempty"`
	// SpotGate is the last spot price observed for a capped job.
	SpotGate *SpotGate `json:"spot_gate,omitempty" dynamodbav:"spot_gate,omitempty"`
	// Placement is where the job's pods ran, kept when it ends so it outlives the pods.
	Placement map[string]any `json:"placement,omitempty" dynamodbav:"placement,omitempty"`
	// LogTail is the end of the job's logs, kept when it ends.
	LogTail []string `json:"log_tail,omitempty" dynamodbav:"log_tail,omitempty"`
	// Exits are the containers of the job's pods that ended in error (a non-zero exit code, or
	// killed), kept when it ends.
	Exits []Exit `json:"exits,omitempty" dynamodbav:"exits,omitempty"`
	// Cost is the estimate of what the nodes the job's pods ran on cost while they ran there,
	// made once when it ends (shared/costing).
	Cost *Cost `json:"cost,omitempty" dynamodbav:"cost,omitempty"`
	// ClusterJobs are the job's batch Jobs as the cluster last showed them, kept when it ends so
	// they outlive the Jobs' TTL; while it is active the API shows them live instead.
	ClusterJobs []ClusterJob `json:"cluster_jobs,omitempty" dynamodbav:"cluster_jobs,omitempty"`
	// DetailsDue marks an end recorded before its details (placement, last lines, exits, cost,
	// Jobs' status): the end is written first, so that its room counts at once, and the details
	// are read and added after; the beat that finds it set adds them. Internal.
	DetailsDue bool `json:"-" dynamodbav:"details_due,omitempty"`
	// Retry is the job's retry policy; nil retries nothing (retry.go).
	Retry *Retry `json:"retry,omitempty" dynamodbav:"retry,omitempty"`
	// Attempt is which attempt of the job this is, from 1 (stored from the first retry on);
	// SpotRetries counts the retries after spot interruptions that did not use up an attempt.
	Attempt     int `json:"attempt" dynamodbav:"attempt,omitempty"`
	SpotRetries int `json:"spot_retries,omitempty" dynamodbav:"spot_retries,omitempty"`
	// Preemptions counts the times its region evicted the job to make room for another
	// (preempt.go), apart from its attempts; Shield, while it waits or runs after jobs were
	// evicted for it, keeps their tenant from evicting it in turn. Internal.
	Preemptions int `json:"preemptions,omitempty" dynamodbav:"preemptions,omitempty"`
	// MaxPreemptions, when set, is how often the job may be evicted: the eviction after that
	// fails it preempted_too_often.
	MaxPreemptions *int    `json:"max_preemptions,omitempty" dynamodbav:"max_preemptions,omitempty"`
	Shield         *Shield `json:"-" dynamodbav:"shield,omitempty"`
	// OnRegionLost is what the job does when its region is lost while it runs there
	// (displace.go): "" waits for the region, OnRegionLostRequeue runs again elsewhere.
	OnRegionLost string `json:"on_region_lost,omitempty" dynamodbav:"on_region_lost,omitempty"`
	// DispatchedAt is when it was first applied (its first move to pending), kept apart from
	// the history so the queue index holds it: reclaim evicts the most recently started first,
	// and a job evicted and run again keeps its first start. Internal.
	DispatchedAt *time.Time `json:"-" dynamodbav:"dispatched_at,omitempty"`
	// MemoryFactor, above 1, is what its retry rules raised the memory of its containers by after
	// attempts OOMKilled (RetryRule.MemoryFactor, multiplied, at most MaxMemoryFactor): each
	// attempt's containers request and are limited to that much more, and its demand counts so.
	MemoryFactor float64 `json:"memory_factor,omitempty" dynamodbav:"memory_factor,omitempty"`
	// MemoryFactorMax, when above 0, bounds MemoryFactor: how many times its hungriest pod's
	// memory fits the admission policy's cap on a pod's memory, worked out at submission.
	MemoryFactorMax float64 `json:"-" dynamodbav:"memory_factor_max,omitempty"`
	// CheckpointURI is the S3 prefix of the job's own where every attempt may keep and find its
	// checkpoints (CheckpointURI), its pods' TIDEGATE_CHECKPOINT_URI; "" where the deployment names
	// no checkpoint bucket.
	CheckpointURI string `json:"checkpoint_uri,omitempty" dynamodbav:"checkpoint_uri,omitempty"`
	// ReadyTimeout is how long after dispatch the job's pods may take to be all scheduled (a Go
	// duration, as submitted; "" is DefaultReadyTimeout); ReadyTimeouts counts the attempts that
	// took longer, which queue it again without using up its retry policy's attempts (gang.go);
	// PodsReady is the attempt whose pods were all scheduled, and when.
	ReadyTimeout  string     `json:"ready_timeout,omitempty" dynamodbav:"ready_timeout,omitempty"`
	ReadyTimeouts int        `json:"ready_timeouts,omitempty" dynamodbav:"ready_timeouts,omitempty"`
	PodsReady     *PodsReady `json:"pods_ready,omitempty" dynamodbav:"pods_ready,omitempty"`
	// NotBefore is when a retried job's backoff ends: dispatch leaves it queued until then.
	NotBefore *time.Time `json:"not_before,omitempty" dynamodbav:"not_before,omitempty"`
	// Attempts are the job's earlier attempts, the newest MaxKeptAttempts of them.
	Attempts []AttemptRecord `json:"attempts,omitempty" dynamodbav:"attempts,omitempty"`
	// DispatchAttempts counts the applies the cluster answered with an error that a retry may
	// mend (throttling, a server error, a timeout); DispatchError is the last one's message.
	DispatchAttempts int    `json:"dispatch_attempts,omitempty" dynamodbav:"dispatch_attempts,omitempty"`
	DispatchError    string `json:"dispatch_error,omitempty" dynamodbav:"dispatch_error,omitempty"`
	// DependsOn are the jobs it waits for, as submitted (depend.go); WaitingOn the ones whose
	// condition is not met yet, while it is blocked. HasDependents says other jobs wait for this
	// one: its end releases them. Internal.
	DependsOn     []Dependency `json:"depends_on,omitempty" dynamodbav:"depends_on,omitempty"`
	WaitingOn     []string     `json:"waiting_on,omitempty" dynamodbav:"waiting_on,stringset,omitempty"`
	HasDependents bool         `json:"-" dynamodbav:"-"`
	// Array, on an array job's parent, is its shape (array.go); ArrayStatus, on the API's answer
	// for one parent, its children counted by status. Parent and ArrayIndex are a child's.
	Array       *Array       `json:"array,omitempty" dynamodbav:"array,omitempty"`
	ArrayStatus *ArrayStatus `json:"array_status,omitempty" dynamodbav:"-"`
	Parent      string       `json:"parent,omitempty" dynamodbav:"parent,omitempty"`
	ArrayIndex  *int         `json:"array_index,omitempty" dynamodbav:"array_index,omitempty"`
	// Workflow, on a workflow's parent, is its graph (workflow.go); Step, on a job of a
	// workflow (its Parent), is its name there.
	Workflow *Workflow `json:"workflow,omitempty" dynamodbav:"workflow,omitempty"`
	Step     string    `json:"step,omitempty" dynamodbav:"step,omitempty"`
	// Claim is the dispatcher's hold on a job it is applying; internal.
	Claim *Claim `json:"-" dynamodbav:"claim,omitempty"`
	// Manifests are the objects the job applies, as submitted after template substitution.
	Manifests []map[string]any `json:"manifests,omitempty" dynamodbav:"-"`
}

// ClusterJob is one batch/v1 Job of a job (a CronJob's runs among them): what its spec asked
// (nil where the spec leaves it to the API server's default) and what its status said.
type ClusterJob struct {
	Name           string                `json:"name" dynamodbav:"name"`
	Parallelism    *int32                `json:"parallelism" dynamodbav:"parallelism"`
	Completions    *int32                `json:"completions" dynamodbav:"completions"`
	BackoffLimit   *int32                `json:"backoff_limit" dynamodbav:"backoff_limit"`
	Active         int32                 `json:"active" dynamodbav:"active"`
	Succeeded      int32                 `json:"succeeded" dynamodbav:"succeeded"`
	Failed         int32                 `json:"failed" dynamodbav:"failed"`
	StartTime      *time.Time            `json:"start_time" dynamodbav:"start_time"`
	CompletionTime *time.Time            `json:"completion_time" dynamodbav:"completion_time"`
	Conditions     []ClusterJobCondition `json:"conditions" dynamodbav:"conditions"`
}

// ClusterJobCondition is one of a batch Job's status conditions (Complete, Failed, SuccessCriteriaMet, …).
type ClusterJobCondition struct {
	Type               string     `json:"type" dynamodbav:"type"`
	Status             string     `json:"status" dynamodbav:"status"`
	Reason             string     `json:"reason" dynamodbav:"reason"`
	Message            string     `json:"message" dynamodbav:"message"`
	LastTransitionTime *time.Time `json:"last_transition_time" dynamodbav:"last_transition_time"`
}

// Spot is a job's price cap: it is held until its instance type's spot price in its region is at
// or below MaxPrice.
type Spot struct {
	InstanceType string  `json:"instance_type" dynamodbav:"instance_type"`
	MaxPrice     float64 `json:"max_price" dynamodbav:"max_price"`
	// Deadline, when set, is when the job stops waiting for its price: a drain at or after it
	// that finds the gate still holding the job runs it on on-demand capacity or fails it, as
	// OnDeadline says. A job whose price is within its cap then runs on spot as usual.
	Deadline   *time.Time `json:"deadline,omitempty" dynamodbav:"deadline,omitempty"`
	OnDeadline OnDeadline `json:"on_deadline,omitempty" dynamodbav:"on_deadline,omitempty"`
}

// OnDeadline is what becomes of a job its price still holds at its spot deadline.
type OnDeadline string

const (
	// OnDeadlineOnDemand dispatches it without the gate, its pods sent to on-demand capacity.
	OnDeadlineOnDemand OnDeadline = "on_demand"
	// OnDeadlineFail fails it with ReasonSpotDeadlinePassed. It is the default: a cap is a
	// promise about cost, and a deadline given without saying what then must not break it.
	OnDeadlineFail OnDeadline = "fail"
)

// ParseOnDeadline reads an on_deadline value; "" is the default, OnDeadlineFail.
func ParseOnDeadline(s string) (OnDeadline, bool) {
	switch v := OnDeadline(s); v {
	case "":
		return OnDeadlineFail, true
	case OnDeadlineOnDemand, OnDeadlineFail:
		return v, true
	}
	return "", false
}

// SpotGate is API.md's spot_gate: the cap, and the price last seen for it.
type SpotGate struct {
	InstanceType  string    `json:"instance_type" dynamodbav:"instance_type"`
	MaxPrice      float64   `json:"max_price" dynamodbav:"max_price"`
	ObservedPrice *float64  `json:"observed_price" dynamodbav:"observed_price"`
	CheckedAt     time.Time `json:"checked_at" dynamodbav:"checked_at"`
}

// Claim is a dispatcher's exclusive hold on a job while it applies it. A claim whose Until has
// passed belongs to a dispatcher that died; the next one adopts the job.
type Claim struct {
	Token string    `dynamodbav:"token"`
	Until time.Time `dynamodbav:"until"`
	// Parked marks a claim no dispatcher is working under: the job waits out a backoff after a
	// failed apply, and the next drain past Until takes it up again. A cancel may take it at once.
	Parked bool `dynamodbav:"parked,omitempty"`
	// Flavor is the flavor of its region the claimant applies the job on (admission's choice),
	// kept as the job's own Flavor with the claim so that a drain adopting a dead claim applies
	// it where the first one meant to.
	Flavor string `dynamodbav:"flavor,omitempty"`
}

// Held reports whether a dispatcher is applying the job under the claim at now: the claim is
// neither parked nor run out.
func (c *Claim) Held(now time.Time) bool {
	return c != nil && !c.Parked && !c.Until.Before(now)
}

// Exit is one container that ended in error: which pod and container, its exit code and the
// runtime's reason (Error, OOMKilled, …).
type Exit struct {
	Pod       string `json:"pod" dynamodbav:"pod"`
	Container string `json:"container" dynamodbav:"container"`
	ExitCode  int32  `json:"exit_code" dynamodbav:"exit_code"`
	Reason    string `json:"reason,omitempty" dynamodbav:"reason,omitempty"`
}

// Cost is API.md's cost of a finished job: what each node its pods ran on cost, at the node's
// whole price per hour, for the time this job's pods were on it, and their Total in Currency
// (USD). Complete is false when some node's price or type was not known; Reasons say which, and
// such a node counts nothing toward Total.
type Cost struct {
	Currency string     `json:"currency" dynamodbav:"currency"`
	Total    float64    `json:"total" dynamodbav:"total"`
	Nodes    []NodeCost `json:"nodes" dynamodbav:"nodes"`
	Complete bool       `json:"complete" dynamodbav:"complete"`
	Reasons  []string   `json:"reasons,omitempty" dynamodbav:"reasons,omitempty"`
}

// NodeCost is one node of a Cost: what it was, how long the job's pods ran on it, the price per
// hour used (nil when not known) and where it came from (spot_price_history or on_demand_table),
// and the cost.
type NodeCost struct {
	Name         string   `json:"name" dynamodbav:"name"`
	InstanceType string   `json:"instance_type" dynamodbav:"instance_type"`
	CapacityType string   `json:"capacity_type" dynamodbav:"capacity_type"`
	Zone         string   `json:"zone" dynamodbav:"zone"`
	Seconds      float64  `json:"node_seconds" dynamodbav:"node_seconds"`
	PricePerHour *float64 `json:"price_per_hour" dynamodbav:"price_per_hour"`
	PriceSource  string   `json:"price_source,omitempty" dynamodbav:"price_source,omitempty"`
	Cost         float64  `json:"cost" dynamodbav:"cost"`
}

// Terminal reports whether a job in status s is done for good.
func (s Status) Terminal() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled
}

// Active reports whether a job in status s holds a share of its region's capacity.
func (s Status) Active() bool {
	return s == StatusDispatching || s == StatusPending || s == StatusRunning
}

// Transition is one entry of a job's status history.
type Transition struct {
	Status Status    `json:"status" dynamodbav:"status"`
	At     time.Time `json:"at" dynamodbav:"at"`
	Reason string    `json:"reason,omitempty" dynamodbav:"reason,omitempty"`
	// Attempt is the attempt the entry belongs to, from the first retry on (empty for the first).
	Attempt int `json:"attempt,omitempty" dynamodbav:"attempt,omitempty"`
}

// New makes a queued job created at now.
func New(id, tenant, namespace, region string, priority int, labels map[string]string, manifests []map[string]any, now time.Time) Job {
	now = now.UTC()
	if labels == nil {
		labels = map[string]string{}
	}
	return Job{
		ID: id, Name: NameOf(manifests), Kind: KindOf(manifests), Tenant: tenant, Attempt: 1, Namespace: namespace, Region: region, Priority: priority, Labels: labels,
		Status:        StatusQueued,
		StatusHistory: []Transition{{Status: StatusQueued, At: now}},
		CreatedAt:     now, UpdatedAt: now, Manifests: manifests,
	}
}

// NameOf is what a job is called: the name of its first workload object (a Job, CronJob,
// Deployment, StatefulSet, DaemonSet, ReplicaSet or Pod, in that order of preference), else of its
// first object; "" when no object has a name.
func NameOf(manifests []map[string]any) string {
	name := func(m map[string]any) string {
		meta, _ := m["metadata"].(map[string]any)
		n, _ := meta["name"].(string)
		return n
	}
	for _, w := range workloadKinds {
		for _, m := range manifests {
			if m["kind"] == w.kind && name(m) != "" {
				return name(m)
			}
		}
	}
	for _, m := range manifests {
		if n := name(m); n != "" {
			return n
		}
	}
	return ""
}

// MatchesLabels reports whether the job carries every label in sel.
func (j Job) MatchesLabels(sel map[string]string) bool {
	for k, v := range sel {
		if j.Labels[k] != v {
			return false
		}
	}
	return true
}

// Filter narrows a listing. Namespaces is required: a tenant lists only its own.
type Filter struct {
	Namespaces []string
	// Parent, when set, lists the children of that array job instead, in index order.
	Parent string
	// Workflows lists the namespaces' workflows instead of their jobs.
	Workflows bool
	Region    string
	Status    Status
	Labels    map[string]string
	// Name is a job's name (Job.Name) exactly, or, ending in "*", the start of one.
	Name       string
	ByPriority bool // highest priority first, then newest; else newest first
	ByName     bool // by name, then newest first among equal names
	// Ascending is oldest first, lowest priority (then oldest) first, or names a to z (then
	// newest); else the reverse of each.
	Ascending bool
}

// Page is one page of a listing; Next is empty on the last page.
type Page struct {
	Jobs []Job
	Next string
}
