// Package reconcile is the beat: it follows dispatched jobs, runs the host plan and sweeps for
// anything a lost message or a crashed worker left behind.
package reconcile

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
)

// Handler is the reconcile function's schedule handler.
type Handler struct {
	Log *slog.Logger
}

// HandleBeat runs one beat. EventBridge may deliver a beat twice; a beat is safe to repeat.
func (h *Handler) HandleBeat(ctx context.Context, ev events.EventBridgeEvent) error {
	h.Log.InfoContext(ctx, "beat", "event_id", ev.ID, "time", ev.Time)
	return nil
}
