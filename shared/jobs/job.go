// Package jobs provides the job record: what was submitted, where it runs and what became of it.
package jobs

import "time"

// Status is where a job is in its life. See API.md for the transitions.
type Status string

// The statuses, in the order a job normally passes through them.
const (
	StatusQueued      Status = "queued"
	StatusDispatching Status = "dispatching"
	StatusPending     Status = "pending"
	StatusRunning     Status = "running"
	StatusSucceeded   Status = "succeeded"
	StatusFailed      Status = "failed"
	StatusCancelled   Status = "cancelled"
)

// Job is one submission and its fate.
type Job struct {
	ID            string            `json:"id" dynamodbav:"id"`
	Tenant        string            `json:"tenant" dynamodbav:"tenant"`
	Namespace     string            `json:"namespace" dynamodbav:"namespace"`
	Region        string            `json:"region" dynamodbav:"region"`
	Priority      int               `json:"priority" dynamodbav:"priority"`
	Labels        map[string]string `json:"labels" dynamodbav:"labels,omitempty"`
	Status        Status            `json:"status" dynamodbav:"status"`
	StatusHistory []Transition      `json:"status_history" dynamodbav:"status_history"`
	CreatedAt     time.Time         `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at" dynamodbav:"updated_at"`
}

// Transition is one entry of a job's status history.
type Transition struct {
	Status Status    `json:"status" dynamodbav:"status"`
	At     time.Time `json:"at" dynamodbav:"at"`
	Reason string    `json:"reason,omitempty" dynamodbav:"reason,omitempty"`
}
