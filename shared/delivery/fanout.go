package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/outbox"
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
// webhook that wants it, and each webhook's deliveries are sent one after another, in order, while
// different webhooks are sent side by side. A delivery is stored once its attempt is made, as the
// attempt left it, and an event leaves the undelivered index once all its deliveries are stored
// (the recorder). A drain that finds the outbox empty, or the lease taken, does nothing: the
// holder looks at the outbox again after letting go, so what this drain was rung for is not left
// behind. An event that fails to fan out stays undelivered, and so do the events after it, for
// the next drain.
//
// The holder keeps the lease from pass to pass while events keep coming, and lets gatherGap pass
// before each pass after the first, so that events written one at a time (jobs ending one by one)
// go out a few to a pass rather than one each, every pass costing its reads and writes.
func (h *Handler) Drain(ctx context.Context) error {
	start := h.now()
	owner := ids.New("drain_", start)
	held := false
	letGo := func(err error) error {
		if held {
			held = false
			return errors.Join(err, h.Store.ReleaseDrain(ctx, owner))
		}
		return err
	}
	for seen := 0; ; {
		waiting, err := h.Outbox.HasUndelivered(ctx)
		switch {
		case err != nil:
			return letGo(err)
		case !waiting && !held:
			return nil
		case !waiting:
			// Let go, then look once more: a drain rung while this one held the lease found it
			// taken and left its events to this one.
			if err := letGo(nil); err != nil {
				return err
			}
			continue
		case seen >= drainBudget || h.now().Sub(start) >= sendWindow:
			return letGo(h.Queue.RingDrain(ctx))
		}
		if !held {
			now := h.now()
			took, err := h.Store.TakeDrain(ctx, owner, now, now.Add(drainLease))
			if err != nil || !took {
				return err
			}
			held = true
		}
		n, err := h.drainHeld(ctx, start, drainBudget-seen)
		seen += n
		if err != nil {
			return letGo(err)
		}
		if n < drainPage && !h.gather(ctx) {
			return letGo(ctx.Err())
		}
	}
}

// gatherGap is how long a drain holding the lease waits after a pass that emptied the outbox
// before it looks again: an event written meanwhile waits that much longer (well under the
// second a watch's ring already gathers), and the next pass carries every event of the gap.
const gatherGap = 200 * time.Millisecond

// gather waits gatherGap, answering false if ctx ends first.
func (h *Handler) gather(ctx context.Context) bool {
	t := time.NewTimer(gatherGap)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// drainHeld is one pass over the outbox under the lease, reading at most budget events: it
// answers how many it sent or stored. While a page's lines are sent, the next page is read and
// planned; its lines start once the page before has ended, so each webhook's stay in order.
func (h *Handler) drainHeld(ctx context.Context, start time.Time, budget int) (int, error) {
	hooks := map[string][]deliveryplan.Webhook{} // per tenant, read once a pass
	rec := h.newRecorder(ctx)
	p := h.readPage(ctx, "", min(drainPage, budget), hooks)
	seen := 0
	var err error
	for {
		if err = p.err; err != nil {
			break
		}
		seen += p.events
		rec.expect(p.planned)
		byID := webhooksByID(hooks) // before the next page's plan reads more of them
		var ahead chan page
		if p.next != "" && seen < budget && h.now().Sub(start) < sendWindow {
			ahead = make(chan page, 1)
			go func() { ahead <- h.readPage(ctx, p.next, min(drainPage, budget-seen), hooks) }()
		}
		err = errors.Join(p.planErr, h.sendLines(ctx, p.deliveries(), byID, rec, start.Add(sendWindow)))
		if ahead == nil {
			break
		}
		next := <-ahead // read even when this page failed: it writes to hooks
		if err != nil || h.now().Sub(start) >= sendWindow {
			break // its events stay in the outbox, for the next drain
		}
		p = next
	}
	return seen, errors.Join(err, rec.close())
}

// page is one page of the outbox, read and planned.
type page struct {
	events  int    // how many events were read
	next    string // the cursor after them, "" at the end
	planned []dynamo.EventDeliveries
	planErr error // why planning stopped short: the events from there on wait for the next drain
	err     error // why the page could not be read
}

func (p page) deliveries() []deliveryplan.Delivery {
	var ds []deliveryplan.Delivery
	for _, e := range p.planned {
		ds = append(ds, e.Deliveries...)
	}
	return ds
}

// readPage reads up to limit undelivered events after cursor and plans their deliveries.
func (h *Handler) readPage(ctx context.Context, cursor string, limit int, hooks map[string][]deliveryplan.Webhook) page {
	evs, next, err := h.Outbox.Undelivered(ctx, limit, cursor)
	if err != nil {
		return page{err: err}
	}
	p := page{events: len(evs), next: next}
	p.planned, p.planErr = h.plan(ctx, evs, hooks, h.now())
	return p
}

// webhooksByID indexes the webhooks of hooks by id.
func webhooksByID(hooks map[string][]deliveryplan.Webhook) map[string]deliveryplan.Webhook {
	byID := map[string]deliveryplan.Webhook{}
	for _, ws := range hooks {
		for _, w := range ws {
			byID[w.ID] = w
		}
	}
	return byID
}

// plan makes the deliveries of a page of events, in the order the events happened, leaving out
// those stored already (by a drain that stored them and died before the event's mark). It stops
// at the first event it cannot fan out, so none after it is sent before it.
func (h *Handler) plan(ctx context.Context, evs []outbox.Event, hooks map[string][]deliveryplan.Webhook, now time.Time) ([]dynamo.EventDeliveries, error) {
	deliveryplan.Order(evs)
	var planned []dynamo.EventDeliveries
	var all []deliveryplan.Delivery
	var stop error
	for _, ev := range evs {
		e, err := h.deliveriesOf(ctx, ev, hooks, now)
		if err != nil {
			stop = fmt.Errorf("event %s: %w", ev.ID, err)
			break
		}
		planned = append(planned, e)
		all = append(all, e.Deliveries...)
	}
	if len(all) == 0 {
		return planned, stop
	}
	stored, err := h.Store.Stored(ctx, all)
	if err != nil {
		return nil, errors.Join(err, stop)
	}
	for i, e := range planned {
		planned[i].Deliveries = slices.DeleteFunc(e.Deliveries, func(d deliveryplan.Delivery) bool { return stored[d.ID] })
	}
	return planned, stop
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
