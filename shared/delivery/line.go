package delivery

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// lineWorkers bounds how many webhooks a drain sends to at once. Each line holds one connection;
// 32 keep a drain's slow endpoints (15 s each at worst) from holding up the others, well below
// what a 256 MB function handles.
const lineWorkers = 32

// sendLines makes the first attempts of a drain's new deliveries to the webhooks of byID, stored
// through rec: each webhook's line one attempt after another, in order, and the lines side by
// side. Attempts start until deadline; what is left then goes back to the queue.
func (h *Handler) sendLines(ctx context.Context, ds []deliveryplan.Delivery, byID map[string]deliveryplan.Webhook, rec *recorder, deadline time.Time) error {
	if len(ds) == 0 {
		return nil
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, lineWorkers)
	)
	for _, line := range deliveryplan.Lines(ds) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := h.sendLine(ctx, byID[line[0].WebhookID], line, rec, deadline); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sendLine sends w's line of new deliveries in order. A plain attempt's delivery goes to rec, to
// be stored with others while the line goes on; any other is stored, and its retry queued, before
// the next is made. After an attempt the endpoint failed, the rest of the line waits for that
// attempt's retry (or ends, if the webhook was disabled) instead of being sent to an endpoint
// that is down.
func (h *Handler) sendLine(ctx context.Context, w deliveryplan.Webhook, line []deliveryplan.Delivery, rec *recorder, deadline time.Time) error {
	for i, d := range line {
		now := h.now()
		if now.After(deadline) || ctx.Err() != nil {
			return h.release(ctx, line[i:], rec)
		}
		v := h.judged(ctx, d, w, h.send(ctx, w, d, now), now)
		if plain(w, v) {
			rec.add(v.Delivery)
		} else if err := rec.store(ctx, []deliveryplan.Delivery{v.Delivery}); err != nil {
			return errors.Join(err, h.release(ctx, line[i+1:], rec))
		} else if err := h.carryOver(ctx, w, v, now); err != nil {
			return errors.Join(err, h.release(ctx, line[i+1:], rec))
		}
		if v.Healthy {
			w.FailingSince = nil
		}
		rest := line[i+1:]
		if len(rest) == 0 {
			return nil
		}
		if _, send := v.Behind(rest[0], now); send {
			continue
		}
		kept := make([]deliveryplan.Delivery, len(rest))
		for j, r := range rest {
			kept[j], _ = v.Behind(r, now)
		}
		return h.release(ctx, kept, rec)
	}
	return nil
}

// release stores deliveries a drain will not send, each as it is to stay, and queues those still
// pending for when they are due (the sweep queues any this misses).
func (h *Handler) release(ctx context.Context, ds []deliveryplan.Delivery, rec *recorder) error {
	err := rec.store(ctx, ds)
	var refs []dynamo.DeliveryRef
	var due time.Time
	for _, d := range ds {
		if d.Status == deliveryplan.StatusPending && d.NextAttemptAt != nil {
			refs = append(refs, dynamo.DeliveryRef{WebhookID: d.WebhookID, DeliveryID: d.ID})
			due = *d.NextAttemptAt
		}
	}
	if wait := due.Sub(h.now()); len(refs) > 0 && wait <= MaxQueueDelay {
		if err := h.Queue.Send(ctx, wait, refs...); err != nil {
			h.Log.WarnContext(ctx, "deliveries not queued; the sweep will", "deliveries", len(refs), "err", err)
		}
	}
	return err
}
