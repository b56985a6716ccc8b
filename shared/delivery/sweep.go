package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
)

// Backlog is what the sweep reads of the outbox and the deliveries; dynamo's OutboxStore and
// WebhookStore are the real ones.
type Backlog interface {
	HasUndelivered(ctx context.Context) (bool, error)
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
	Now    func() time.Time
}

// Sweep runs one sweep.
func (s *Sweeper) Sweep(ctx context.Context) error {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	var errs []error
	waiting, err := s.Outbox.HasUndelivered(ctx)
	if err == nil && waiting {
		err = s.Queue.RingDrain(ctx)
	}
	errs = append(errs, err)
	refs, err := s.Due.Due(ctx, now.Add(-sweepGrace), sweepLimit)
	if err == nil && len(refs) > 0 {
		err = s.Queue.Send(ctx, 0, refs...)
	}
	return errors.Join(append(errs, err)...)
}
