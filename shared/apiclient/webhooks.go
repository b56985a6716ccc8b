package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Webhook is a subscription: where events of the listed types are delivered.
type Webhook struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Namespace string    `json:"namespace,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Disabled  bool      `json:"disabled,omitempty"`
	// DisabledReason says why deliveries stopped, when they did.
	DisabledReason string `json:"disabled_reason,omitempty"`
	// Secret is the signing secret, answered only when it is made (create, rotate-secret).
	Secret string `json:"secret,omitempty"`

	raw json.RawMessage
}

type plainWebhook Webhook

// UnmarshalJSON keeps the API's JSON along with the fields.
func (w *Webhook) UnmarshalJSON(b []byte) error { return keep(b, (*plainWebhook)(w), &w.raw) }

// MarshalJSON gives back the API's JSON for a webhook that came from it.
func (w Webhook) MarshalJSON() ([]byte, error) { return give(w.raw, plainWebhook(w)) }

// WebhookRequest is what creating a webhook sends.
type WebhookRequest struct {
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Namespace string   `json:"namespace,omitempty"`
	// Secret is a whsec_… secret of the caller's choosing; the API makes one when empty.
	Secret string `json:"secret,omitempty"`
}

// Delivery is one event on its way to one webhook, with its attempts.
type Delivery struct {
	ID            string     `json:"id"`
	WebhookID     string     `json:"webhook_id"`
	EventID       string     `json:"event_id"`
	EventType     string     `json:"event_type"`
	Status        string     `json:"status"`
	AttemptCount  int        `json:"attempt_count"`
	Attempts      []Attempt  `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	FinalReason   string     `json:"final_reason,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`

	raw json.RawMessage
}

type plainDelivery Delivery

// UnmarshalJSON keeps the API's JSON along with the fields.
func (d *Delivery) UnmarshalJSON(b []byte) error { return keep(b, (*plainDelivery)(d), &d.raw) }

// MarshalJSON gives back the API's JSON.
func (d Delivery) MarshalJSON() ([]byte, error) { return give(d.raw, plainDelivery(d)) }

// Attempt is one try at delivering: when, the receiver's status code or the error, how long it took.
type Attempt struct {
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"`
	Error      string    `json:"error,omitempty"`
	LatencyMS  int64     `json:"latency_ms"`
}

func webhookPath(id string) string { return "/api/v1/webhooks/" + pathEscape(id) }

// CreateWebhook subscribes a URL to events; the answer carries the secret, shown only this once.
func (c *Client) CreateWebhook(ctx context.Context, wr WebhookRequest) (Webhook, error) {
	rq, err := jsonRequest(http.MethodPost, "/api/v1/webhooks", wr)
	if err != nil {
		return Webhook{}, err
	}
	var out Webhook
	return out, c.do(ctx, rq, &out)
}

// Webhooks lists one page of the caller's webhooks.
func (c *Client) Webhooks(ctx context.Context, o ListOptions) (Page[Webhook], error) {
	var out Page[Webhook]
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/webhooks", query: o.query(nil)}, &out)
}

// Webhook reads one webhook.
func (c *Client) Webhook(ctx context.Context, id string) (Webhook, error) {
	var out Webhook
	return out, c.do(ctx, request{method: http.MethodGet, path: webhookPath(id)}, &out)
}

// DeleteWebhook removes a webhook; nothing more is delivered to it.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: webhookPath(id)}, nil)
}

// TestWebhook sends a webhook.test event to the webhook now. The answer is the API's, as it is.
func (c *Client) TestWebhook(ctx context.Context, id string) (json.RawMessage, error) {
	var out json.RawMessage
	return out, c.do(ctx, request{method: http.MethodPost, path: webhookPath(id) + "/test"}, &out)
}

// RotateWebhookSecret makes a new signing secret; the old one signs too for a day.
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (Webhook, error) {
	var out Webhook
	return out, c.do(ctx, request{method: http.MethodPost, path: webhookPath(id) + "/rotate-secret"}, &out)
}

// Deliveries lists one page of a webhook's deliveries.
func (c *Client) Deliveries(ctx context.Context, id string, o ListOptions) (Page[Delivery], error) {
	var out Page[Delivery]
	return out, c.do(ctx, request{method: http.MethodGet, path: webhookPath(id) + "/deliveries", query: o.query(nil)}, &out)
}

// Redeliver sends a delivery's event again. The answer is the API's, as it is.
func (c *Client) Redeliver(ctx context.Context, id, deliveryID string) (json.RawMessage, error) {
	var out json.RawMessage
	path := webhookPath(id) + "/deliveries/" + pathEscape(deliveryID) + "/redeliver"
	return out, c.do(ctx, request{method: http.MethodPost, path: path}, &out)
}
