// Package reconcile is the beat: it follows dispatched jobs, runs the host plan and sweeps for
// anything a lost message or a crashed worker left behind.
package reconcile

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
)

// Queues tells which regions have queued jobs; dynamo.JobStore is the real one.
type Queues interface {
	HasQueued(ctx context.Context, region string) (bool, error)
}

// Ringer wakes dispatch for a region; wake.Ringer is the real one.
type Ringer interface {
	Ring(ctx context.Context, region string) error
}

// Handler is the reconcile function's schedule handler.
type Handler struct {
	Regions []string
	Queues  Queues
	Ringer  Ringer
	Log     *slog.Logger
}

// HandleBeat runs one beat. EventBridge may deliver a beat twice; a beat is safe to repeat.
func (h *Handler) HandleBeat(ctx context.Context, ev events.EventBridgeEvent) error {
	h.Log.DebugContext(ctx, "beat", "event_id", ev.ID, "time", ev.Time)
	return h.sweep(ctx)
}

// sweep rings dispatch for every region with queued jobs, so a job whose submission's ring was
// lost waits one beat at most. Ringing a region with nothing to admit costs one empty drain.
func (h *Handler) sweep(ctx context.Context) error {
	var errs []error
	for _, r := range h.Regions {
		queued, err := h.Queues.HasQueued(ctx, r)
		if err == nil && queued {
			err = h.Ringer.Ring(ctx, r)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
