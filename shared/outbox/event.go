// Package outbox provides the events Tidegate tells webhooks about. Every event is written in the
// same transaction as the state change it reports, so none is lost and none is invented.
package outbox

import (
	"time"

	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/jobs"
)

// Type is an event type from API.md's catalogue.
type Type string

// The catalogue.
const (
	JobQueued     Type = "job.queued"
	JobDispatched Type = "job.dispatched"
	JobStarted    Type = "job.started"
	JobCompleted  Type = "job.completed"
	JobFailed     Type = "job.failed"
	JobCancelled  Type = "job.cancelled"
	AppLive       Type = "app.live"
	AppFailed     Type = "app.failed"
	WebhookTest   Type = "webhook.test"
)

// Types lists the catalogue, in API.md's order.
var Types = []Type{JobQueued, JobDispatched, JobStarted, JobCompleted, JobFailed, JobCancelled, AppLive, AppFailed, WebhookTest}

// Event is one outbox entry. Its ID is what receivers see as webhook-id, stable across retries.
type Event struct {
	ID        string         `json:"id" dynamodbav:"id"`
	Type      Type           `json:"type" dynamodbav:"type"`
	At        time.Time      `json:"timestamp" dynamodbav:"at"`
	Tenant    string         `json:"-" dynamodbav:"tenant"`
	Namespace string         `json:"-" dynamodbav:"namespace,omitempty"`
	Data      map[string]any `json:"data" dynamodbav:"data"`
}

// ForJob makes the event of type t about job j, at now.
func ForJob(t Type, j jobs.Job, reason string, now time.Time) Event {
	data := map[string]any{
		"job_id": j.ID, "namespace": j.Namespace, "region": j.Region,
		"status": string(j.Status), "priority": j.Priority, "labels": j.Labels,
	}
	if reason != "" {
		data["reason"] = reason
	}
	return Event{ID: ids.New("evt_", now), Type: t, At: now.UTC(), Tenant: j.Tenant, Namespace: j.Namespace, Data: data}
}
