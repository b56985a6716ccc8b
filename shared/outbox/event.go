// Package outbox provides the events Tidegate tells webhooks about. Every event is written in the
// same transaction as the state change it reports, so none is lost and none is invented.
package outbox

import (
	"time"
)

// Type is an event type from API.md's catalogue.
type Type string

// The catalogue.
const (
	// JobBlocked: the job was submitted waiting for jobs it depends on; job.queued follows when
	// they have ended as it asked.
	JobBlocked    Type = "job.blocked"
	JobQueued     Type = "job.queued"
	JobDispatched Type = "job.dispatched"
	JobStarted    Type = "job.started"
	JobCompleted  Type = "job.completed"
	JobFailed     Type = "job.failed"
	JobCancelled  Type = "job.cancelled"
	// JobRetrying: the job's attempt ended in a way its retry policy retries; it is queued again.
	JobRetrying Type = "job.retrying"
	// JobPreempted: the job was evicted to make room for another job; it is queued again in its place.
	JobPreempted Type = "job.preempted"
	// WorkflowSucceeded, WorkflowFailed and WorkflowCancelled: a workflow's jobs have all ended.
	WorkflowSucceeded Type = "workflow.succeeded"
	WorkflowFailed    Type = "workflow.failed"
	WorkflowCancelled Type = "workflow.cancelled"
	AppLive           Type = "app.live"
	AppFailed         Type = "app.failed"
	WebhookTest       Type = "webhook.test"
)

// Types lists the catalogue, in API.md's order.
var Types = []Type{JobBlocked, JobQueued, JobDispatched, JobStarted, JobCompleted, JobFailed, JobCancelled, JobRetrying, JobPreempted, WorkflowSucceeded, WorkflowFailed, WorkflowCancelled, AppLive, AppFailed, WebhookTest}

// Event is one outbox entry. Its ID is what receivers see as webhook-id, stable across retries.
type Event struct {
	ID        string         `json:"id" dynamodbav:"id"`
	Type      Type           `json:"type" dynamodbav:"type"`
	At        time.Time      `json:"timestamp" dynamodbav:"at"`
	Tenant    string         `json:"-" dynamodbav:"tenant"`
	Namespace string         `json:"-" dynamodbav:"namespace,omitempty"`
	Data      map[string]any `json:"data" dynamodbav:"data"`
}
