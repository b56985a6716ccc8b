package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Secret is one of the org's secrets as a listing shows it: its name, never its value.
type Secret struct {
	Name      string     `json:"name"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`

	raw json.RawMessage
}

type plainSecret Secret

// UnmarshalJSON reads a listed secret, written either as its bare name or as an object.
func (s *Secret) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		*s = Secret{Name: name, raw: append(json.RawMessage(nil), b...)}
		return nil
	}
	return keep(b, (*plainSecret)(s), &s.raw)
}

// MarshalJSON gives back the API's JSON.
func (s Secret) MarshalJSON() ([]byte, error) { return give(s.raw, plainSecret(s)) }

func secretPath(name string) string { return "/api/v1/secrets/" + pathEscape(name) }

// SetSecret writes a secret's value; the org's apps restart to read it.
func (c *Client) SetSecret(ctx context.Context, name, value string) error {
	rq, err := jsonRequest(http.MethodPut, secretPath(name), map[string]string{"value": value})
	if err != nil {
		return err
	}
	return c.do(ctx, rq, nil)
}

// Secrets lists one page of the org's secret names.
func (c *Client) Secrets(ctx context.Context, o ListOptions) (Page[Secret], error) {
	var out Page[Secret]
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/secrets", query: o.query(nil)}, &out)
}

// DeleteSecret removes a secret; the org's apps restart without it.
func (c *Client) DeleteSecret(ctx context.Context, name string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: secretPath(name)}, nil)
}
