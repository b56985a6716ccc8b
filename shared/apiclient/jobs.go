package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Job is API.md's job record.
type Job struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Workloads and ClusterJobs come with one job (Client.Job), not in listings.
	Workloads     []Workload        `json:"workloads,omitempty"`
	ClusterJobs   []map[string]any  `json:"cluster_jobs,omitempty"`
	Tenant        string            `json:"tenant"`
	Namespace     string            `json:"namespace"`
	Region        string            `json:"region"`
	Regions       []string          `json:"regions,omitempty"`
	RegionChoice  map[string]any    `json:"region_choice,omitempty"`
	Priority      int               `json:"priority"`
	Labels        map[string]string `json:"labels"`
	Status        string            `json:"status"`
	StatusHistory []Transition      `json:"status_history"`
	Spot          *Spot             `json:"spot,omitempty"`
	Template      string            `json:"template,omitempty"`
	RetryOf       string            `json:"retry_of,omitempty"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
	GPUs          int64             `json:"gpus"`
	PendingReason string            `json:"pending_reason,omitempty"`
	// DependsOn are the jobs it waits for; WaitingOn, while it is blocked, those not ended yet.
	DependsOn []Dependency `json:"depends_on,omitempty"`
	WaitingOn []string     `json:"waiting_on,omitempty"`
	// Array and ArrayStatus are an array's (ArrayStatus with one job); Parent and ArrayIndex a child's.
	Array       *Array       `json:"array,omitempty"`
	ArrayStatus *ArrayStatus `json:"array_status,omitempty"`
	Parent      string       `json:"parent,omitempty"`
	ArrayIndex  *int         `json:"array_index,omitempty"`
	// PendingResource is the resource a job waiting for room or quota lacks first.
	PendingResource string `json:"pending_resource,omitempty"`
	// Demand is what its pods that run at once request, per resource; NodeSelector the node
	// labels they select; Flavor the flavor of its region it was admitted on.
	Demand        map[string]string `json:"demand,omitempty"`
	NodeSelector  map[string]string `json:"node_selector,omitempty"`
	Flavor        string            `json:"flavor,omitempty"`
	QueuePosition int               `json:"queue_position,omitempty"`
	SpotGate      *SpotGate         `json:"spot_gate,omitempty"`
	Placement     map[string]any    `json:"placement,omitempty"`
	LogTail       []string          `json:"log_tail,omitempty"`
	Exits         []Exit            `json:"exits,omitempty"`
	// DispatchAttempts and DispatchError: applies the cluster failed in a way a retry may mend.
	DispatchAttempts int              `json:"dispatch_attempts,omitempty"`
	DispatchError    string           `json:"dispatch_error,omitempty"`
	Manifests        []map[string]any `json:"manifests,omitempty"`
	// Kind is "batch" or "long_running"; Serving and ServingError are a long-running job's
	// Deployments and StatefulSets now, with one job (Client.Job) while it is active.
	Kind         string    `json:"kind,omitempty"`
	Serving      []Serving `json:"serving,omitempty"`
	ServingError string    `json:"serving_error,omitempty"`
	// Attempt counts from 1; Attempts are the earlier ones kept, NotBefore a retry's backoff end.
	Attempt   int          `json:"attempt,omitempty"`
	Attempts  []JobAttempt `json:"attempts,omitempty"`
	NotBefore *time.Time   `json:"not_before,omitempty"`

	raw json.RawMessage
}

// Serving is one Deployment or StatefulSet of a long-running job, as the cluster has it.
type Serving struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Replicas  int32  `json:"replicas"`
	Ready     int32  `json:"ready_replicas"`
	Available bool   `json:"available"`
}

// JobAttempt is an earlier attempt of a retried job: how and when it ended.
type JobAttempt struct {
	Attempt int       `json:"attempt"`
	Reason  string    `json:"reason"`
	EndedAt time.Time `json:"ended_at"`
}

// Exit is a container of a finished job's pods that ended in error.
type Exit struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
	ExitCode  int32  `json:"exit_code"`
	Reason    string `json:"reason,omitempty"`
}

type plainJob Job

// UnmarshalJSON keeps the API's JSON along with the fields.
func (j *Job) UnmarshalJSON(b []byte) error { return keep(b, (*plainJob)(j), &j.raw) }

// MarshalJSON gives back the API's JSON for a job that came from it.
func (j Job) MarshalJSON() ([]byte, error) { return give(j.raw, plainJob(j)) }

// Terminal reports whether the job is done for good.
func (j Job) Terminal() bool {
	return j.Status == "succeeded" || j.Status == "failed" || j.Status == "cancelled"
}

// Transition is one entry of a job's status history.
type Transition struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason,omitempty"`
}

// Spot is a job's price cap.
type Spot struct {
	InstanceType string  `json:"instance_type"`
	MaxPrice     float64 `json:"max_price"`
	// Deadline, when set, is when the job stops waiting for its price; OnDeadline says what it
	// then does: on_demand or fail.
	Deadline   *time.Time `json:"deadline,omitempty"`
	OnDeadline string     `json:"on_deadline,omitempty"`
}

// SpotGate is the cap and the spot price last seen for it.
type SpotGate struct {
	InstanceType  string    `json:"instance_type"`
	MaxPrice      float64   `json:"max_price"`
	ObservedPrice *float64  `json:"observed_price"`
	CheckedAt     time.Time `json:"checked_at"`
}

// JobRequest is POST /api/v1/jobs: one manifest and the job's settings.
type JobRequest struct {
	Manifest         json.RawMessage   `json:"manifest"`
	Region           string            `json:"region,omitempty"`
	Regions          []string          `json:"regions,omitempty"`
	Namespace        string            `json:"namespace,omitempty"`
	Priority         *int              `json:"priority,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	MaxSpotPrice     *float64          `json:"max_spot_price,omitempty"`
	SpotInstanceType string            `json:"spot_instance_type,omitempty"`
	SpotDeadline     string            `json:"spot_deadline,omitempty"`
	OnDeadline       string            `json:"on_deadline,omitempty"`
	DependsOn        []Dependency      `json:"depends_on,omitempty"`
	Array            *Array            `json:"array,omitempty"`
	OnRegionLost     string            `json:"on_region_lost,omitempty"`
}

// Array makes a job an array of Size children, at most Parallelism (0: all) queued or running
// at once.
type Array struct {
	Size        int `json:"size"`
	Parallelism int `json:"parallelism,omitempty"`
}

// ArrayStatus is an array's children counted by status.
type ArrayStatus struct {
	Blocked   int `json:"blocked"`
	Active    int `json:"active"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

// Dependency is a job another waits for, and the end it waits for: succeeded (the API's default
// when On is empty), failed or ended.
type Dependency struct {
	Job  string `json:"job"`
	On   string `json:"on,omitempty"`
	Mode string `json:"mode,omitempty"` // n_to_n: child i of an array waits for child i of another
}

// jobAnswer is the routes' {job} answer.
type jobAnswer struct {
	Job Job `json:"job"`
}

// SubmitJob submits one manifest with its settings. A non-empty idempotencyKey makes a retry of
// the same request answer the same job.
func (c *Client) SubmitJob(ctx context.Context, jr JobRequest, idempotencyKey string) (Job, error) {
	rq, err := jsonRequest(http.MethodPost, "/api/v1/jobs", jr)
	if err != nil {
		return Job{}, err
	}
	rq.header = idempotencyHeader(idempotencyKey)
	var out jobAnswer
	return out.Job, c.do(ctx, rq, &out)
}

// ManifestsRequest is POST /api/v1/manifests with YAML documents as the body.
type ManifestsRequest struct {
	YAML      []byte
	Namespace string
	Region    string
	Regions   []string // instead of Region: the regions it may run in
}

// DryRun is what a dry run decides: valid, the violations, and the manifests as they would be stored.
type DryRun struct {
	Valid      bool             `json:"valid"`
	Violations []Violation      `json:"violations"`
	Manifests  []map[string]any `json:"manifests"`

	raw json.RawMessage
}

type plainDryRun DryRun

// UnmarshalJSON keeps the API's JSON along with the fields.
func (d *DryRun) UnmarshalJSON(b []byte) error { return keep(b, (*plainDryRun)(d), &d.raw) }

// MarshalJSON gives back the API's JSON.
func (d DryRun) MarshalJSON() ([]byte, error) { return give(d.raw, plainDryRun(d)) }

func (mr ManifestsRequest) request(dryRun bool) request {
	q := url.Values{}
	if mr.Namespace != "" {
		q.Set("namespace", mr.Namespace)
	}
	if mr.Region != "" {
		q.Set("region", mr.Region)
	}
	if len(mr.Regions) > 0 {
		q.Set("regions", strings.Join(mr.Regions, ","))
	}
	if dryRun {
		q.Set("dry_run", "true")
	}
	return request{method: http.MethodPost, path: "/api/v1/manifests", query: q, body: mr.YAML, contentType: "application/yaml"}
}

// SubmitManifests submits one or more YAML documents as one job.
func (c *Client) SubmitManifests(ctx context.Context, mr ManifestsRequest, idempotencyKey string) (Job, error) {
	rq := mr.request(false)
	rq.header = idempotencyHeader(idempotencyKey)
	var out jobAnswer
	return out.Job, c.do(ctx, rq, &out)
}

// DryRunManifests asks what submitting the documents would decide; nothing is stored.
func (c *Client) DryRunManifests(ctx context.Context, mr ManifestsRequest) (DryRun, error) {
	var out DryRun
	return out, c.do(ctx, mr.request(true), &out)
}

func idempotencyHeader(key string) http.Header {
	if key == "" {
		return nil
	}
	return http.Header{"Idempotency-Key": {key}}
}

// JobFilter narrows a listing; empty fields do not filter.
type JobFilter struct {
	Region, Namespace, Status string
	// LabelSelector is k=v,k2=v2.
	LabelSelector string
	// Name is a job's name, or its start followed by *.
	Name string
	// Parent lists an array's children instead.
	Parent string
	// Sort is created_at:desc (the default), created_at:asc, priority:desc, priority:asc,
	// name:asc or name:desc.
	Sort string
}

// Workload is one object of a job's manifests that runs pods, as GET /api/v1/jobs/{id} shows it.
type Workload struct {
	Kind           string                         `json:"kind"`
	Name           string                         `json:"name"`
	Parallelism    *int64                         `json:"parallelism,omitempty"`
	Completions    *int64                         `json:"completions,omitempty"`
	BackoffLimit   *int64                         `json:"backoff_limit,omitempty"`
	Containers     []struct{ Name, Image string } `json:"containers"`
	InitContainers []struct{ Name, Image string } `json:"init_containers"`
}

func (f JobFilter) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"region": f.Region, "namespace": f.Namespace, "status": f.Status, "label_selector": f.LabelSelector, "name": f.Name, "sort": f.Sort, "parent": f.Parent} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// Jobs lists one page of the caller's jobs.
func (c *Client) Jobs(ctx context.Context, f JobFilter, o ListOptions) (Page[Job], error) {
	var out Page[Job]
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/jobs", query: o.query(f.query())}, &out)
}

// Job reads one job, with its manifests, history, pending reason and placement.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var out Job
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/jobs/" + pathEscape(id)}, &out)
}

// PurgeJob deletes a job for good: cancels it if it is unfinished, deletes its objects from its
// cluster, then its record.
func (c *Client) PurgeJob(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: "/api/v1/jobs/" + pathEscape(id), query: url.Values{"purge": {"true"}}}, nil)
}

// CancelJob cancels a job: a queued one at once, a dispatched one after deleting it from its
// cluster. Of a finished job it deletes what is left in the cluster and answers it unchanged.
func (c *Client) CancelJob(ctx context.Context, id string) (Job, error) {
	var out jobAnswer
	return out.Job, c.do(ctx, request{method: http.MethodDelete, path: "/api/v1/jobs/" + pathEscape(id)}, &out)
}

// RetryJob submits a new job from another's manifests and settings.
func (c *Client) RetryJob(ctx context.Context, id, idempotencyKey string) (Job, error) {
	var out jobAnswer
	rq := request{method: http.MethodPost, path: "/api/v1/jobs/" + pathEscape(id) + "/retry", header: idempotencyHeader(idempotencyKey)}
	return out.Job, c.do(ctx, rq, &out)
}

// BulkDeleteRequest chooses the jobs a bulk delete deletes: unfinished ones (cancelled) unless
// Status names a finished status (completed is succeeded); Purge deletes their records too.
type BulkDeleteRequest struct {
	Namespace     string `json:"namespace,omitempty"`
	Region        string `json:"region,omitempty"`
	Status        string `json:"status,omitempty"`
	OlderThanDays *int   `json:"older_than_days,omitempty"`
	LabelSelector string `json:"label_selector,omitempty"`
	DryRun        bool   `json:"dry_run,omitempty"`
	Purge         bool   `json:"purge,omitempty"`
}

// BulkDeleteResult says what a bulk delete matched and cancelled.
type BulkDeleteResult struct {
	Matched int            `json:"matched"`
	Deleted int            `json:"deleted"`
	Jobs    []Job          `json:"jobs"`
	DryRun  bool           `json:"dry_run"`
	Failed  []FieldProblem `json:"failed,omitempty"`
	// More says more jobs may match than this call handled: run it again.
	More bool `json:"more"`

	raw json.RawMessage
}

type plainBulk BulkDeleteResult

// UnmarshalJSON keeps the API's JSON along with the fields.
func (b *BulkDeleteResult) UnmarshalJSON(data []byte) error {
	return keep(data, (*plainBulk)(b), &b.raw)
}

// MarshalJSON gives back the API's JSON.
func (b BulkDeleteResult) MarshalJSON() ([]byte, error) { return give(b.raw, plainBulk(b)) }

// BulkDelete deletes every job that matches, or with DryRun only says which.
func (c *Client) BulkDelete(ctx context.Context, br BulkDeleteRequest) (BulkDeleteResult, error) {
	rq, err := jsonRequest(http.MethodPost, "/api/v1/jobs/bulk-delete", br)
	if err != nil {
		return BulkDeleteResult{}, err
	}
	var out BulkDeleteResult
	return out, c.do(ctx, rq, &out)
}

// WhatIf is what each region's admission would decide for a job now, had it been submitted.
type WhatIf struct {
	Job      Job            `json:"job"`
	Admitted bool           `json:"admitted"`
	Region   string         `json:"region,omitempty"`
	Regions  []RegionWhatIf `json:"regions"`
	Blocked  bool           `json:"blocked,omitempty"`
}

// RegionWhatIf is one region's decision in a WhatIf.
type RegionWhatIf struct {
	Region   string                                  `json:"region"`
	Admitted bool                                    `json:"admitted"`
	Flavor   string                                  `json:"flavor,omitempty"`
	Reason   string                                  `json:"reason,omitempty"`
	Resource string                                  `json:"resource,omitempty"`
	Position int                                     `json:"position,omitempty"`
	Quota    map[string]map[string]map[string]string `json:"quota,omitempty"`
	Spot     map[string]any                          `json:"spot,omitempty"`
	Choice   map[string]any                          `json:"region_choice,omitempty"`
}

// WhatIfJob asks what POST /api/v1/jobs with jr would decide in each of its regions now; nothing
// is stored.
func (c *Client) WhatIfJob(ctx context.Context, jr JobRequest) (WhatIf, error) {
	rq, err := jsonRequest(http.MethodPost, "/api/v1/jobs", jr)
	if err != nil {
		return WhatIf{}, err
	}
	rq.query = url.Values{"what_if": {"true"}}
	var out struct {
		WhatIf WhatIf `json:"what_if"`
	}
	return out.WhatIf, c.do(ctx, rq, &out)
}
