package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
)

// Bounds of one drain. A page of 100 events is one Query; 1,000 events take a few seconds at
// DynamoDB's latency, well inside the function's 60 s. A longer outbox rings another drain.
const (
	drainPage   = 100
	drainBudget = 1000
	// drainLease outlasts the function's 60 s timeout, as a claim does: a live drain never loses
	// it, and a dead one's runs out for the next.
	drainLease = 90 * time.Second
	// sendWindow is how long after a drain begins it may start a first attempt. An attempt takes
	// at most egress.RequestTimeout (15 s), so the last ends by 45 s and the drain, with its
	// writes, within the function's 60 s. What is left then goes to the queue.
	sendWindow = 30 * time.Second
)

// Drain fans out the undelivered events and makes their first attempts, one drain at a time (a
// lease), page by page in the order the events happened: each event becomes one delivery per
// webhook that wants it, written already claimed in the same transaction that takes the event out
// of the undelivered index; then each webhook's new deliveries are sent one after another, in
// order, while different webhooks are sent side by side. A drain that finds the outbox empty, or
// the lease taken, does nothing: the holder looks at the outbox again after letting go, so what
// this drain was rung for is not left behind. An event that fails to fan out stays undelivered,
// and so do the events after it, for the next drain.
func (h *Handler) Drain(ctx context.Context) error {
	start := h.now()
	owner := ids.New("drain_", start)
	for seen := 0; ; {
		waiting, err := h.Outbox.HasUndelivered(ctx)
		if err != nil || !waiting {
			return err
		}
		if seen >= drainBudget || h.now().Sub(start) >= sendWindow {
			return h.Queue.RingDrain(ctx)
		}
		now := h.now()
		took, err := h.Store.TakeDrain(ctx, owner, now, now.Add(drainLease))
		if err != nil || !took {
			return err
		}
		n, err := h.drainHeld(ctx, start, drainBudget-seen)
		seen += n
		if err = errors.Join(err, h.Store.ReleaseDrain(ctx, owner)); err != nil {
			return err
		}
	}
}

// drainHeld is one pass over the outbox under the lease, reading at most budget events: it
// answers how many it read.
func (h *Handler) drainHeld(ctx context.Context, start time.Time, budget int) (int, error) {
	hooks := map[string][]deliveryplan.Webhook{} // per tenant, read once a pass
	token := ids.New("claim_", h.now())
	rec := h.newRecorder(ctx, token)
	cursor, seen := "", 0
	var err error
	for seen < budget && h.now().Sub(start) < sendWindow {
		var evs []outbox.Event
		var next string
		if evs, next, err = h.Outbox.Undelivered(ctx, min(drainPage, budget-seen), cursor); err != nil {
			break
		}
		seen += len(evs)
		ds, fanErr := h.fanOut(ctx, evs, hooks, token, h.now())
		sendErr := h.sendLines(ctx, ds, hooks, rec, start.Add(sendWindow))
		if err = errors.Join(fanErr, sendErr); err != nil {
			break
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	return seen, errors.Join(err, rec.close())
}

// fanOut makes the deliveries of a page of events, claimed by token, and marks the events fanned
// out; it answers, in the order the events happened, the deliveries this call made. It stops at
// the first event it cannot fan out, so none after it is sent before it.
func (h *Handler) fanOut(ctx context.Context, evs []outbox.Event, hooks map[string][]deliveryplan.Webhook, token string, now time.Time) ([]deliveryplan.Delivery, error) {
	deliveryplan.Order(evs)
	var batch []dynamo.EventDeliveries
	var stop error
	for _, ev := range evs {
		e, err := h.deliveriesOf(ctx, ev, hooks, now)
		if err != nil {
			stop = fmt.Errorf("event %s: %w", ev.ID, err)
			break
		}
		batch = append(batch, e)
	}
	var made []deliveryplan.Delivery
	until := now.Add(claimLease)
	for _, chunk := range transactions(batch) {
		err := errTooBig
		if fits(chunk) {
			err = h.Store.FanOut(ctx, chunk, token, now, until)
		}
		if err == nil {
			for _, e := range chunk {
				made = append(made, e.Deliveries...)
			}
			continue
		}
		if !errors.Is(err, records.ErrStale) && !errors.Is(err, errTooBig) {
			return made, errors.Join(err, stop)
		}
		// Another fan-out had some of these (a drain that outlived its lease), or one event has
		// more deliveries than a transaction holds: event by event, delivery by delivery.
		for _, e := range chunk {
			ds, err := h.fanOutOne(ctx, e, token, now, until)
			made = append(made, ds...)
			if err != nil {
				return made, errors.Join(fmt.Errorf("event %s: %w", e.EventID, err), stop)
			}
		}
	}
	return made, stop
}

// errTooBig marks an event whose deliveries do not fit one transaction.
var errTooBig = errors.New("more deliveries than a transaction holds")

// transactions splits batch, in order, into runs of whole events that each fit one transaction;
// an event too big for one is a run of its own.
func transactions(batch []dynamo.EventDeliveries) [][]dynamo.EventDeliveries {
	var out [][]dynamo.EventDeliveries
	for len(batch) > 0 {
		n := 1
		for n < len(batch) && fits(batch[:n+1]) {
			n++
		}
		out, batch = append(out, batch[:n]), batch[n:]
	}
	return out
}

// fits reports whether events fit one transaction's items and bytes.
func fits(events []dynamo.EventDeliveries) bool {
	items, size := 0, 0
	for _, e := range events {
		items, size = items+e.Items(), size+e.Bytes()
	}
	return items <= dynamo.MaxTransactItems && size <= dynamo.MaxTransactBytes
}

// fanOutOne writes one event's deliveries one at a time, each unless it exists, then marks the
// event fanned out; it answers the deliveries it made.
func (h *Handler) fanOutOne(ctx context.Context, e dynamo.EventDeliveries, token string, now, until time.Time) ([]deliveryplan.Delivery, error) {
	var made []deliveryplan.Delivery
	for _, d := range e.Deliveries {
		ok, err := h.Store.CreateClaimed(ctx, d, token, until)
		if err != nil {
			return made, err
		}
		if ok {
			made = append(made, d)
		}
	}
	return made, h.Outbox.MarkFannedOut(ctx, e.EventID, now)
}

// deliveriesOf is ev's delivery to each webhook that wants it, made at now.
func (h *Handler) deliveriesOf(ctx context.Context, ev outbox.Event, hooks map[string][]deliveryplan.Webhook, now time.Time) (dynamo.EventDeliveries, error) {
	e := dynamo.EventDeliveries{EventID: ev.ID}
	ws, err := h.candidates(ctx, ev, hooks)
	if err != nil {
		return e, err
	}
	subs := deliveryplan.Subscribers(ws, ev)
	if len(subs) == 0 {
		return e, nil
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return e, fmt.Errorf("encoding the payload: %w", err)
	}
	for _, w := range subs {
		e.Deliveries = append(e.Deliveries, deliveryplan.NewDelivery(w, ev, payload, now))
	}
	return e, nil
}

// candidates are the webhooks ev might go to: its tenant's, or for an event of an org (a hosted
// app's) those of every tenant of the org with webhooks. hooks caches each tenant's list.
func (h *Handler) candidates(ctx context.Context, ev outbox.Event, hooks map[string][]deliveryplan.Webhook) ([]deliveryplan.Webhook, error) {
	tenants := []string{ev.Tenant}
	if ev.Tenant == "" {
		org := deliveryplan.OrgOf(ev)
		if org == "" {
			return nil, nil
		}
		var err error
		if tenants, err = h.Store.OrgTenants(ctx, org); err != nil {
			return nil, err
		}
	}
	var out []deliveryplan.Webhook
	for _, t := range tenants {
		ws, ok := hooks[t]
		if !ok {
			var err error
			if ws, _, err = h.Store.Webhooks(ctx, t, 0, ""); err != nil {
				return nil, err
			}
			hooks[t] = ws
		}
		out = append(out, ws...)
	}
	return out, nil
}
