package templating

import "time"

// Template is a tenant's named job template: one manifest with {{ key }} placeholders and the
// parameters' defaults.
type Template struct {
	Name        string         `json:"name" dynamodbav:"name"`
	Tenant      string         `json:"-" dynamodbav:"tenant"`
	Description string         `json:"description,omitempty" dynamodbav:"description,omitempty"`
	Manifest    map[string]any `json:"manifest" dynamodbav:"-"`
	Parameters  map[string]any `json:"parameters" dynamodbav:"-"`
	CreatedAt   time.Time      `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at" dynamodbav:"updated_at"`
}
