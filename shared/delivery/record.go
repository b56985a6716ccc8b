package delivery

import (
	"context"
	"errors"
	"sync"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/records"
)

// Bounds of a drain's recorder. Two writers keep one transaction in flight while the next fills.
// At most recordBacklog sent attempts wait to be logged: were the worker to die, those would be
// sent again once their claims ran out (with the same webhook-id), so the backlog is kept to
// about one transaction's worth.
const (
	recordWriters = 2
	recordBacklog = dynamo.MaxTransactItems
)

// recorder logs a drain's plain attempts, those that need nothing else done (no retry to queue, no
// change to the endpoint's health), in transactions of up to a hundred, while the lines go on
// sending. Each is written conditional on the drain's claim, as Record does; a batch that fails is
// written one by one.
type recorder struct {
	h      *Handler
	token  string
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []deliveryplan.Delivery
	closed bool
	errs   []error
	wg     sync.WaitGroup
}

func (h *Handler) newRecorder(ctx context.Context, token string) *recorder {
	r := &recorder{h: h, token: token}
	r.cond = sync.NewCond(&r.mu)
	for range recordWriters {
		r.wg.Go(func() {
			for batch := r.next(); batch != nil; batch = r.next() {
				r.write(ctx, batch)
			}
		})
	}
	return r
}

// plain reports whether v's attempt needs nothing but its log written.
func plain(w deliveryplan.Webhook, v deliveryplan.Verdict) bool {
	return v.Delivery.Status != deliveryplan.StatusPending && !v.Failing && v.Disable == "" && !(v.Healthy && w.FailingSince != nil)
}

// add queues d's log, waiting while the backlog is full.
func (r *recorder) add(d deliveryplan.Delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) >= recordBacklog {
		r.cond.Wait()
	}
	r.queue = append(r.queue, d)
	r.cond.Broadcast()
}

// close waits until every queued log is written, and answers what could not be.
func (r *recorder) close() error {
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	r.wg.Wait()
	return errors.Join(r.errs...)
}

// oneTransaction is how many of ds, from the first, one transaction logs: at least one.
func oneTransaction(ds []deliveryplan.Delivery) int {
	n, size := 0, 0
	for n < len(ds) && n < dynamo.MaxTransactItems && (n == 0 || size+dynamo.DeliveryBytes(ds[n]) <= dynamo.MaxTransactBytes) {
		size += dynamo.DeliveryBytes(ds[n])
		n++
	}
	return n
}

// next takes the next transaction's worth off the queue; nil once closed and empty.
func (r *recorder) next() []deliveryplan.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) == 0 && !r.closed {
		r.cond.Wait()
	}
	n := oneTransaction(r.queue)
	if n == 0 {
		return nil
	}
	batch := r.queue[:n:n]
	r.queue = r.queue[n:]
	r.cond.Broadcast()
	return batch
}

func (r *recorder) write(ctx context.Context, batch []deliveryplan.Delivery) {
	if err := r.h.recordBatch(ctx, batch, r.token); err != nil {
		r.mu.Lock()
		r.errs = append(r.errs, err)
		r.mu.Unlock()
	}
}

// recordBatch logs deliveries claimed by token in one transaction (at most MaxTransactItems, of
// MaxTransactBytes), or one by one if that fails. A claim that is no longer token's is logged as
// a warning: its attempt is another worker's now.
func (h *Handler) recordBatch(ctx context.Context, ds []deliveryplan.Delivery, token string) error {
	if len(ds) > 1 && h.Store.RecordAll(ctx, ds, token) == nil {
		return nil
	}
	var errs []error
	for _, d := range ds {
		err := h.Store.Record(ctx, d, token)
		if errors.Is(err, records.ErrStale) {
			h.Log.WarnContext(ctx, "attempt outlived its claim; not logged", "delivery_id", d.ID)
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
