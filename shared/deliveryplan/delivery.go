package deliveryplan

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/outbox"
)

// Status is where a delivery is.
type Status string

// A delivery is pending until an attempt succeeds or it is final.
const (
	StatusPending   Status = "pending"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
)

// Delivery is one event on its way to one webhook: the log of its attempts and what comes next.
// Its ID is what the receiver sees as webhook-id, the same on every attempt.
type Delivery struct {
	ID           string      `json:"id" dynamodbav:"id"`
	WebhookID    string      `json:"webhook_id" dynamodbav:"webhook_id"`
	Tenant       string      `json:"-" dynamodbav:"tenant"`
	EventID      string      `json:"event_id" dynamodbav:"event_id"`
	EventType    outbox.Type `json:"event_type" dynamodbav:"event_type"`
	Status       Status      `json:"status" dynamodbav:"status"`
	AttemptCount int         `json:"attempt_count" dynamodbav:"attempt_count"`
	Attempts     []Attempt   `json:"attempts" dynamodbav:"attempts"`
	// NextAttemptAt is when a pending delivery is tried next; null once it is final.
	NextAttemptAt *time.Time `json:"next_attempt_at" dynamodbav:"next_attempt_at,omitempty"`
	// FinalReason says why a failed delivery stopped.
	FinalReason string    `json:"final_reason,omitempty" dynamodbav:"final_reason,omitempty"`
	CreatedAt   time.Time `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt   time.Time `json:"updated_at" dynamodbav:"updated_at"`
	// Since is when the current run of attempts began: creation, or the last redelivery.
	Since time.Time `json:"-" dynamodbav:"since"`
	// Payload is the signed body, the same bytes on every attempt.
	Payload []byte `json:"-" dynamodbav:"payload"`
}

// Attempt is one try at sending a delivery.
type Attempt struct {
	Attempt    int       `json:"attempt" dynamodbav:"attempt"`
	At         time.Time `json:"at" dynamodbav:"at"`
	StatusCode int       `json:"status_code,omitempty" dynamodbav:"status_code,omitempty"`
	Error      string    `json:"error,omitempty" dynamodbav:"error,omitempty"`
	LatencyMS  int64     `json:"latency_ms" dynamodbav:"latency_ms"`
}

// idText is ids' alphabet: lowercase base32, so a delivery id is as safe in a URL as an event's.
var idText = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// DeliveryID is the stable id of eventID's delivery to webhookID: msg_, the event id's time-sorted
// body, then ten characters of the webhook id's digest, so one event's deliveries differ and a
// webhook's deliveries sort by event time.
func DeliveryID(eventID, webhookID string) string {
	_, body, ok := strings.Cut(eventID, "_")
	if !ok {
		body = eventID
	}
	sum := sha256.Sum256([]byte(webhookID))
	return "msg_" + body + "_" + idText.EncodeToString(sum[:])[:10]
}

// NewDelivery is ev's delivery to w with the signed body payload, due at once.
func NewDelivery(w Webhook, ev outbox.Event, payload []byte, now time.Time) Delivery {
	now = now.UTC()
	return Delivery{
		ID: DeliveryID(ev.ID, w.ID), WebhookID: w.ID, Tenant: w.Tenant, EventID: ev.ID, EventType: ev.Type,
		Status: StatusPending, Attempts: []Attempt{}, NextAttemptAt: &now,
		CreatedAt: now, UpdatedAt: now, Since: now, Payload: payload,
	}
}

// Due reports whether d should be attempted at now. slack lets a delayed message that arrives a
// moment early still count.
func (d Delivery) Due(now time.Time, slack time.Duration) bool {
	return d.Status == StatusPending && d.NextAttemptAt != nil && !d.NextAttemptAt.After(now.Add(slack))
}

// Redeliver answers d made pending again and due at now, for another run of attempts; the log of
// earlier attempts stays.
func (d Delivery) Redeliver(now time.Time) Delivery {
	now = now.UTC()
	d.Status, d.FinalReason, d.NextAttemptAt, d.Since, d.UpdatedAt = StatusPending, "", &now, now, now
	return d
}
