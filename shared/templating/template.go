package templating

import (
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Template is a tenant's named job template: one manifest with {{ key }} placeholders and the
// parameters' defaults.
type Template struct {
	Name        string         `json:"name" dynamodbav:"name"`
	Tenant      string         `json:"-" dynamodbav:"tenant"`
	Description string         `json:"description,omitempty" dynamodbav:"description,omitempty"`
	Manifest    map[string]any `json:"manifest" dynamodbav:"-"`
	Parameters  map[string]any `json:"parameters" dynamodbav:"-"`
	// Retry is the retry policy of the template's jobs where a job names none.
	Retry     *jobs.Retry `json:"retry,omitempty" dynamodbav:"retry,omitempty"`
	CreatedAt time.Time   `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt time.Time   `json:"updated_at" dynamodbav:"updated_at"`
}
