// Package delivery is the webhook function: it fans each outbox event out to the webhooks that
// want it as delivery records, then attempts each delivery, signed, through the SSRF-safe client,
// logging every attempt and scheduling the next; and it provides the sweep the reconcile beat runs
// so that a lost message or a dead worker loses nothing.
package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/outbox"
)

// Outbox is what fanning out reads and marks of the events; dynamo.OutboxStore is the real one.
type Outbox interface {
	Undelivered(ctx context.Context, limit int, cursor string) ([]outbox.Event, string, error)
	HasUndelivered(ctx context.Context) (bool, error)
	MarkFannedOut(ctx context.Context, id string, at time.Time) error
}

// Store is what the worker reads and writes of webhooks and deliveries; dynamo.WebhookStore is the
// real one.
type Store interface {
	Webhooks(ctx context.Context, tenant string, limit int, cursor string) ([]deliveryplan.Webhook, string, error)
	OrgTenants(ctx context.Context, org string) ([]string, error)
	Webhook(ctx context.Context, tenant, id string) (deliveryplan.Webhook, error)
	MarkFailing(ctx context.Context, id string, since time.Time) error
	MarkHealthy(ctx context.Context, id string) error
	Disable(ctx context.Context, id, reason string, at time.Time) error
	Stored(ctx context.Context, ds []deliveryplan.Delivery) (map[string]bool, error)
	RecordSent(ctx context.Context, ds []deliveryplan.Delivery, events []string, at time.Time) error
	CreateDelivery(ctx context.Context, d deliveryplan.Delivery) (bool, error)
	TakeDrain(ctx context.Context, owner string, now, until time.Time) (bool, error)
	ReleaseDrain(ctx context.Context, owner string) error
	Delivery(ctx context.Context, webhookID, id string) (deliveryplan.Delivery, error)
	Claim(ctx context.Context, d deliveryplan.Delivery, token string, now, due, until time.Time) (deliveryplan.Delivery, error)
	Record(ctx context.Context, d deliveryplan.Delivery, token string) error
	Replace(ctx context.Context, d deliveryplan.Delivery, prevAttempts int, now time.Time) error
}

// Ringer asks for attempts and drains; Queue is the real one.
type Ringer interface {
	RingDrain(ctx context.Context) error
	Send(ctx context.Context, delay time.Duration, refs ...dynamo.DeliveryRef) error
}

// Doer sends a request; egress.NewClient's client is the real one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

var (
	_ Outbox = (*dynamo.OutboxStore)(nil)
	_ Store  = (*dynamo.WebhookStore)(nil)
	_ Ringer = (*Queue)(nil)
)

// Handler is the webhook function's SQS handler.
type Handler struct {
	Outbox Outbox
	Store  Store
	Queue  Ringer
	Client Doer
	Log    *slog.Logger
	// Metrics counts attempts by outcome (metrics.WebhookAttempts); nil records none.
	Metrics *metrics.Recorder
	// Now is the clock and Jitter a source in [0, 1) for the retry schedule; nil means the real ones.
	Now    func() time.Time
	Jitter func() float64
}

// Outcomes of an attempt, as metrics.WebhookAttempts counts them.
const (
	outcomeDelivered = "delivered"
	outcomeFailed    = "failed"  // to be tried again
	outcomeGaveUp    = "gave_up" // the last: the delivery is final as failed
)

// judged judges an attempt's outcome and counts it.
func (h *Handler) judged(ctx context.Context, d deliveryplan.Delivery, w deliveryplan.Webhook, o deliveryplan.Outcome, now time.Time) deliveryplan.Verdict {
	v := deliveryplan.Judge(d, w, o, now, h.jitter())
	outcome := outcomeFailed
	switch v.Delivery.Status {
	case deliveryplan.StatusSucceeded:
		outcome = outcomeDelivered
	case deliveryplan.StatusFailed:
		outcome = outcomeGaveUp
	}
	if err := h.Metrics.Put(metrics.WebhookAttempts, []string{outcome}, 1); err != nil {
		h.Log.WarnContext(ctx, "recording an attempt's metric", "error", err)
	}
	return v
}

// HandleSQS drains the outbox once however many drain messages the batch holds (making the new
// deliveries' first attempts, in order), and beside it attempts every delivery the batch names.
// A message is reported failed only when the worker could not do its part (DynamoDB unreachable,
// say); a receiver's failure is logged on the delivery and retried on its schedule, not by SQS.
func (h *Handler) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	fail := func(id string) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	var drains []string
	attempts := map[dynamo.DeliveryRef][]string{}
	for _, rec := range ev.Records {
		m, err := parse(rec.Body)
		switch {
		case err != nil:
			h.Log.ErrorContext(ctx, "webhook message refused", "message_id", rec.MessageId, "err", err)
			fail(rec.MessageId)
		case m.Drain || m.EventID != "":
			drains = append(drains, rec.MessageId)
		default:
			ref := dynamo.DeliveryRef{WebhookID: m.WebhookID, DeliveryID: m.DeliveryID}
			attempts[ref] = append(attempts[ref], rec.MessageId)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	if len(drains) > 0 {
		wg.Go(func() {
			if err := h.Drain(ctx); err != nil {
				h.Log.ErrorContext(ctx, "fanning out the outbox", "err", err)
				mu.Lock()
				for _, id := range drains {
					fail(id)
				}
				mu.Unlock()
			}
		})
	}
	for ref, ids := range attempts {
		wg.Go(func() {
			if err := h.Attempt(ctx, ref); err != nil {
				h.Log.ErrorContext(ctx, "attempting a delivery", "webhook_id", ref.WebhookID, "delivery_id", ref.DeliveryID, "err", err)
				mu.Lock()
				for _, id := range ids {
					fail(id)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return resp, nil
}

func parse(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return m, fmt.Errorf("reading webhook message: %w", err)
	}
	if !m.Drain && m.EventID == "" && (m.WebhookID == "" || m.DeliveryID == "") {
		return m, fmt.Errorf("webhook message names neither a drain nor a delivery (webhook_id and delivery_id)")
	}
	return m, nil
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) jitter() float64 {
	if h.Jitter != nil {
		return h.Jitter()
	}
	return rand.Float64()
}
