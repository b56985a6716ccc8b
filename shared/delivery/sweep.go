package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/outbox"
)

// Backlog is what the sweep reads of the outbox: the events not yet fanned out, oldest first;
// dynamo.OutboxStore is the real one.
type Backlog interface {
	Undelivered(ctx context.Context, limit int, cursor string) ([]outbox.Event, string, error)
}

// DueLister lists deliveries that need a worker; dynamo.WebhookStore is the real one.
type DueLister interface {
	Due(ctx context.Context, before time.Time, limit int) ([]dynamo.DeliveryRef, error)
}

var (
	_ Backlog   = (*dynamo.OutboxStore)(nil)
	_ DueLister = (*dynamo.WebhookStore)(nil)
)

const (
	// sweepGrace is how late a delivery must be before the sweep queues it: a retry's own
	// delayed message normally claims it within a second or two of its time.
	sweepGrace = 30 * time.Second
	// sweepLimit bounds the deliveries one beat queues: 500 a minute is far above what is
	// overdue when the queue works, and the next beat takes the rest.
	sweepLimit = 500
)

// Sweeper is the webhook part of the reconcile beat: it rings a drain while any event waits to be
// fanned out (the beat's own events included), and queues every delivery that is due and has no
// message coming: its wait was longer than SQS holds, its message was lost, or its worker died.
type Sweeper struct {
	Outbox Backlog
	Due    DueLister
	Queue  Ringer
	// Metrics takes the oldest undelivered event's age (metrics.OldestUndeliveredAge), 0 with
	// none; nil records nothing.
	Metrics *metrics.Recorder
	Now     func() time.Time
}

// Sweep runs one sweep.
func (s *Sweeper) Sweep(ctx context.Context) error {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	var errs []error
	oldest, _, err := s.Outbox.Undelivered(ctx, 1, "")
	if err == nil {
		age := 0.0
		if len(oldest) > 0 {
			age = max(0, now.Sub(oldest[0].At).Seconds())
		}
		err = s.Metrics.Put(metrics.OldestUndeliveredAge, nil, age)
	}
	if err == nil && len(oldest) > 0 {
		err = s.Queue.RingDrain(ctx)
	}
	errs = append(errs, err)
	refs, err := s.Due.Due(ctx, now.Add(-sweepGrace), sweepLimit)
	if err == nil && len(refs) > 0 {
		err = s.Queue.Send(ctx, 0, refs...)
	}
	return errors.Join(append(errs, err)...)
}
