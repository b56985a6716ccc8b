package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Workflow is a workflow as the API answers it: its status, its jobs with theirs, and its jobs
// counted by status.
type Workflow struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	Tenant        string        `json:"tenant"`
	Namespace     string        `json:"namespace"`
	Status        string        `json:"status"`
	StatusHistory []Transition  `json:"status_history"`
	CreatedAt     time.Time     `json:"created_at"`
	UpdatedAt     time.Time     `json:"updated_at"`
	Jobs          []WorkflowJob `json:"jobs"`
	Counts        ArrayStatus   `json:"counts"`
}

// WorkflowJob is one job of a workflow: its step's name, its id, the steps it comes after, its
// status now and its last reason.
type WorkflowJob struct {
	Name   string   `json:"name"`
	ID     string   `json:"id"`
	After  []string `json:"after"`
	Status string   `json:"status"`
	Reason string   `json:"reason,omitempty"`
}

// SubmitWorkflow submits a workflow: body is POST /api/v1/workflows' JSON (a name and its jobs).
func (c *Client) SubmitWorkflow(ctx context.Context, body json.RawMessage, idempotencyKey string) (Workflow, error) {
	rq := request{method: http.MethodPost, path: "/api/v1/workflows", body: body, contentType: "application/json", header: idempotencyHeader(idempotencyKey)}
	var out Workflow
	return out, c.do(ctx, rq, &out)
}

// Workflow reads one workflow.
func (c *Client) Workflow(ctx context.Context, id string) (Workflow, error) {
	var out Workflow
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/workflows/" + pathEscape(id)}, &out)
}

// CancelWorkflow cancels every job of a workflow not ended, and the workflow.
func (c *Client) CancelWorkflow(ctx context.Context, id string) (Workflow, error) {
	var out Workflow
	return out, c.do(ctx, request{method: http.MethodDelete, path: "/api/v1/workflows/" + pathEscape(id)}, &out)
}

// WorkflowSummary is one workflow of a listing: its status and how many jobs it has.
type WorkflowSummary struct {
	ID            string       `json:"id"`
	Name          string       `json:"name"`
	Namespace     string       `json:"namespace"`
	Status        string       `json:"status"`
	StatusHistory []Transition `json:"status_history"`
	CreatedAt     time.Time    `json:"created_at"`
	UpdatedAt     time.Time    `json:"updated_at"`
	Jobs          int          `json:"jobs"`
}

// Workflows reads one page of the caller's tenant's workflows, newest first; namespace, when
// set, narrows them to one namespace.
func (c *Client) Workflows(ctx context.Context, namespace string, o ListOptions) (Page[WorkflowSummary], error) {
	q := url.Values{}
	if namespace != "" {
		q.Set("namespace", namespace)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	var out Page[WorkflowSummary]
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/workflows", query: q}, &out)
}
