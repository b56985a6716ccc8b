package delivery

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// Bounds of a drain's recorder. Two writers keep one transaction in flight while the next fills.
// At most recordBacklog attempted deliveries wait to be stored: were the worker to die, the next
// drain would send those again (with the same webhook-id), so the backlog is kept to about one
// transaction's worth.
const (
	recordWriters = 2
	recordBacklog = dynamo.MaxTransactItems
)

// recorder stores what a drain's first attempts leave, in transactions of up to a hundred items
// while the lines go on sending: each delivery as its attempt left it (none is stored before it is
// sent), and each event's mark, which takes it out of the outbox's undelivered index, once every
// delivery the drain made of it is stored. An event one of whose deliveries could not be stored
// keeps its place in the index: the next drain finds the ones that were (Store.Stored) and sends
// only the rest.
type recorder struct {
	h      *Handler
	mu     sync.Mutex
	cond   *sync.Cond
	queue  []entry
	left   map[string]int  // by event: its deliveries not stored yet
	broken map[string]bool // events one of whose deliveries could not be stored
	closed bool
	errs   []error
	wg     sync.WaitGroup
}

// entry is one item of a recorder's transactions: a delivery to store, or an event to mark.
type entry struct {
	d     deliveryplan.Delivery
	event string // set for an event's mark
}

func (e entry) bytes() int {
	if e.event != "" {
		return dynamo.EventMarkBytes
	}
	return dynamo.DeliveryBytes(e.d)
}

func (h *Handler) newRecorder(ctx context.Context) *recorder {
	r := &recorder{h: h, left: map[string]int{}, broken: map[string]bool{}}
	r.cond = sync.NewCond(&r.mu)
	for range recordWriters {
		r.wg.Go(func() {
			for batch := r.next(); batch != nil; batch = r.next() {
				if err := r.write(ctx, batch); err != nil {
					r.mu.Lock()
					r.errs = append(r.errs, err)
					r.mu.Unlock()
				}
			}
		})
	}
	return r
}

// plain reports whether v's attempt needs nothing but storing (no retry to queue, no change to
// the endpoint's health).
func plain(w deliveryplan.Webhook, v deliveryplan.Verdict) bool {
	return v.Delivery.Status != deliveryplan.StatusPending && !v.Failing && v.Disable == "" && !(v.Healthy && w.FailingSince != nil)
}

// expect tells r the deliveries the drain makes of each event: an event with none is marked
// straight away, the others once all of theirs are stored.
func (r *recorder) expect(events []dynamo.EventDeliveries) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range events {
		if len(e.Deliveries) == 0 {
			r.queue = append(r.queue, entry{event: e.EventID})
		} else {
			r.left[e.EventID] += len(e.Deliveries)
		}
	}
	r.cond.Broadcast()
}

// add queues attempted delivery d to be stored, waiting while the backlog is full.
func (r *recorder) add(d deliveryplan.Delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) >= recordBacklog {
		r.cond.Wait()
	}
	r.queue = append(r.queue, entry{d: d})
	r.cond.Broadcast()
}

// store stores ds now, before the caller goes on (a retry to queue, a line held back), and
// answers what could not be stored.
func (r *recorder) store(ctx context.Context, ds []deliveryplan.Delivery) error {
	es := make([]entry, len(ds))
	for i, d := range ds {
		es[i] = entry{d: d}
	}
	var errs []error
	for len(es) > 0 {
		n := oneTransaction(es)
		errs = append(errs, r.write(ctx, es[:n]))
		es = es[n:]
	}
	return errors.Join(errs...)
}

// close waits until every queued item is written, and answers what could not be.
func (r *recorder) close() error {
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	r.wg.Wait()
	return errors.Join(r.errs...)
}

// oneTransaction is how many of es, from the first, one transaction writes: at least one.
func oneTransaction(es []entry) int {
	n, size := 0, 0
	for n < len(es) && n < dynamo.MaxTransactItems && (n == 0 || size+es[n].bytes() <= dynamo.MaxTransactBytes) {
		size += es[n].bytes()
		n++
	}
	return n
}

// next takes the next transaction's worth off the queue; nil once closed and empty.
func (r *recorder) next() []entry {
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

// write stores batch in one transaction, or item by item if that fails; then it queues the mark
// of each event whose deliveries are now all stored.
func (r *recorder) write(ctx context.Context, batch []entry) error {
	var ds []deliveryplan.Delivery
	var events []string
	for _, e := range batch {
		if e.event != "" {
			events = append(events, e.event)
		} else {
			ds = append(ds, e.d)
		}
	}
	now := r.h.now()
	done := r.completes(ds, dynamo.MaxTransactItems-len(batch))
	if err := r.h.Store.RecordSent(ctx, ds, append(events, done...), now); err == nil {
		r.stored(ds, nil, done)
		return nil
	}
	var errs []error
	var failed []deliveryplan.Delivery
	for _, d := range ds {
		made, err := r.h.Store.CreateDelivery(ctx, d)
		switch {
		case err != nil:
			errs = append(errs, err)
			failed = append(failed, d)
		case !made:
			// Another fan-out stored it first: a drain that outlived its lease, which the lease's
			// length rules out while the function's timeout is shorter.
			r.h.Log.WarnContext(ctx, "a delivery this drain sent was stored by another", "delivery_id", d.ID)
		}
	}
	for _, id := range events {
		errs = append(errs, r.h.Outbox.MarkFannedOut(ctx, id, now))
	}
	r.stored(ds, failed, nil)
	return errors.Join(errs...)
}

// completes is the events, at most room of them, whose deliveries not yet stored are all in ds:
// their marks go in ds's own transaction, which stores all or nothing, rather than in one after.
// With one webhook an event has one delivery, and this halves a drain's writes.
func (r *recorder) completes(ds []deliveryplan.Delivery, room int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	here := map[string]int{}
	for _, d := range ds {
		here[d.EventID]++
	}
	var out []string
	for _, d := range ds {
		id := d.EventID
		if len(out) < room && here[id] > 0 && here[id] == r.left[id] && !r.broken[id] {
			out = append(out, id)
		}
		here[id] = 0 // each event once
	}
	return out
}

// stored counts ds as written, but for failed, whose events keep their place in the outbox's
// index, and queues the marks of the events now complete but for those marked already (marked).
func (r *recorder) stored(ds, failed []deliveryplan.Delivery, marked []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range failed {
		r.broken[d.EventID] = true
	}
	for _, d := range ds {
		r.left[d.EventID]--
		if r.left[d.EventID] == 0 {
			delete(r.left, d.EventID)
			if !r.broken[d.EventID] && !slices.Contains(marked, d.EventID) {
				// Past the backlog's bound: a writer must never wait for itself.
				r.queue = append(r.queue, entry{event: d.EventID})
			}
		}
	}
	r.cond.Broadcast()
}
