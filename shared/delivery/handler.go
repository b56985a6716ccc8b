// Package delivery sends outbox events to the webhooks subscribed to them.
package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
)

// Ring is the body of a webhook queue message: "deliver this outbox event".
type Ring struct {
	EventID string `json:"event_id"`
}

// Handler is the webhook function's SQS handler.
type Handler struct {
	Log *slog.Logger
}

// HandleSQS delivers the events named by the batch; failures are retried by SQS.
func (h *Handler) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, rec := range ev.Records {
		if err := h.deliver(ctx, rec); err != nil {
			h.Log.ErrorContext(ctx, "delivery record failed", "message_id", rec.MessageId, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	return resp, nil
}

func (h *Handler) deliver(ctx context.Context, rec events.SQSMessage) error {
	var r Ring
	if err := json.Unmarshal([]byte(rec.Body), &r); err != nil {
		return fmt.Errorf("reading webhook message: %w", err)
	}
	if r.EventID == "" {
		return fmt.Errorf("webhook message names no event_id")
	}
	h.Log.InfoContext(ctx, "delivery woken", "event_id", r.EventID)
	return nil
}
