package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Template is a tenant's job template: one manifest with {{ key }} placeholders and their defaults.
type Template struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Manifest    map[string]any `json:"manifest"`
	Parameters  map[string]any `json:"parameters"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
	// Warnings, on create and replace only, name what the template keeps but will not use.
	Warnings []string `json:"warnings,omitempty"`

	raw json.RawMessage
}

type plainTemplate Template

// UnmarshalJSON keeps the API's JSON along with the fields.
func (t *Template) UnmarshalJSON(b []byte) error { return keep(b, (*plainTemplate)(t), &t.raw) }

// MarshalJSON gives back the API's JSON for a template that came from it.
func (t Template) MarshalJSON() ([]byte, error) { return give(t.raw, plainTemplate(t)) }

// TemplateRequest is what creating or replacing a template sends.
type TemplateRequest struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Manifest    json.RawMessage `json:"manifest"`
	Parameters  map[string]any  `json:"parameters,omitempty"`
}

// CreateTemplate stores a new template; an existing name is a conflict.
func (c *Client) CreateTemplate(ctx context.Context, tr TemplateRequest) (Template, error) {
	rq, err := jsonRequest(http.MethodPost, "/api/v1/templates", tr)
	if err != nil {
		return Template{}, err
	}
	var out Template
	return out, c.do(ctx, rq, &out)
}

// Templates lists one page of the caller's templates, by name.
func (c *Client) Templates(ctx context.Context, o ListOptions) (Page[Template], error) {
	var out Page[Template]
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/templates", query: o.query(nil)}, &out)
}

// Template reads one template.
func (c *Client) Template(ctx context.Context, name string) (Template, error) {
	var out Template
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/templates/" + pathEscape(name)}, &out)
}

// DeleteTemplate deletes a template; jobs made from it are not touched.
func (c *Client) DeleteTemplate(ctx context.Context, name string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: "/api/v1/templates/" + pathEscape(name)}, nil)
}

// TemplateRun is what running a template sends: the job's object name, where it runs, and the
// parameters that fill the placeholders.
type TemplateRun struct {
	Name             string            `json:"name"`
	Namespace        string            `json:"namespace"`
	Region           string            `json:"region,omitempty"`
	Regions          []string          `json:"regions,omitempty"`
	Parameters       map[string]any    `json:"parameters,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	Priority         *int              `json:"priority,omitempty"`
	MaxSpotPrice     *float64          `json:"max_spot_price,omitempty"`
	SpotInstanceType string            `json:"spot_instance_type,omitempty"`
	SpotDeadline     string            `json:"spot_deadline,omitempty"`
	OnDeadline       string            `json:"on_deadline,omitempty"`
	DependsOn        []Dependency      `json:"depends_on,omitempty"`
	Array            *Array            `json:"array,omitempty"`
}

// RunTemplate submits a job made from a template.
func (c *Client) RunTemplate(ctx context.Context, template string, tr TemplateRun, idempotencyKey string) (Job, error) {
	rq, err := jsonRequest(http.MethodPost, "/api/v1/templates/"+pathEscape(template)+"/jobs", tr)
	if err != nil {
		return Job{}, err
	}
	rq.header = idempotencyHeader(idempotencyKey)
	var out jobAnswer
	return out.Job, c.do(ctx, rq, &out)
}
