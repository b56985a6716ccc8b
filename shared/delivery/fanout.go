package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/outbox"
)

// Bounds of one drain. A page of 100 events is one Query; 1,000 events take a few seconds at
// DynamoDB's latency, well inside the function's 60 s. A longer outbox rings another drain.
const (
	drainPage   = 100
	drainBudget = 1000
)

// Drain fans out the undelivered events, oldest first: each event becomes one delivery per webhook
// that wants it (created once, however many drains race), then leaves the undelivered index. The
// new deliveries are queued for their first attempt. An event that fails to fan out stays
// undelivered for the next drain.
func (h *Handler) Drain(ctx context.Context) error {
	hooks := map[string][]deliveryplan.Webhook{} // per tenant, read once a drain
	var created []dynamo.DeliveryRef
	var errs []error
	cursor, seen := "", 0
	for seen < drainBudget {
		evs, next, err := h.Outbox.Undelivered(ctx, drainPage, cursor)
		if err != nil {
			errs = append(errs, err)
			break
		}
		for _, ev := range evs {
			refs, err := h.fanOut(ctx, ev, hooks)
			created = append(created, refs...)
			if err != nil {
				errs = append(errs, fmt.Errorf("event %s: %w", ev.ID, err))
			}
		}
		seen += len(evs)
		if cursor = next; cursor == "" {
			break
		}
	}
	if err := h.Queue.Send(ctx, 0, created...); err != nil {
		// The deliveries exist and are due: the sweep queues them within a beat.
		h.Log.WarnContext(ctx, "first attempts not queued; the sweep will", "deliveries", len(created), "err", err)
	}
	if cursor != "" && seen >= drainBudget {
		errs = append(errs, h.Queue.RingDrain(ctx))
	}
	return errors.Join(errs...)
}

// fanOut makes ev's deliveries and marks it fanned out; it answers the deliveries this call made.
func (h *Handler) fanOut(ctx context.Context, ev outbox.Event, hooks map[string][]deliveryplan.Webhook) ([]dynamo.DeliveryRef, error) {
	ws, err := h.candidates(ctx, ev, hooks)
	if err != nil {
		return nil, err
	}
	var refs []dynamo.DeliveryRef
	if subs := deliveryplan.Subscribers(ws, ev); len(subs) > 0 {
		payload, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("encoding the payload: %w", err)
		}
		now := h.now()
		for _, w := range subs {
			d := deliveryplan.NewDelivery(w, ev, payload, now)
			made, err := h.Store.CreateDelivery(ctx, d)
			if err != nil {
				return refs, err
			}
			if made {
				refs = append(refs, dynamo.DeliveryRef{WebhookID: d.WebhookID, DeliveryID: d.ID})
			}
		}
	}
	return refs, h.Outbox.MarkFannedOut(ctx, ev.ID, h.now())
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
