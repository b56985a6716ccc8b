package reconcile

import (
	"context"
	"time"
)

const (
	// leaseRenew is how often a beat extends its lease while it runs: its pass and its watch
	// together take most of a minute, longer than beatLease leaves after a slow start.
	leaseRenew = 10 * time.Second
	// leaseMargin is how long before its lease runs out a beat that cannot renew it stops acting.
	// It is at least leaseRenew, so the renewal that finds the margin reached comes before the
	// lease runs out and another beat may take it.
	leaseMargin = 15 * time.Second
	// handoverWait is how long a watching beat waits for the lease of the beat before it, which
	// watches until Watch after its own start, a few seconds before this one is due. EventBridge
	// starts a rate(1 minute) rule's invocations a second or two either side of the minute.
	handoverWait = 10 * time.Second
	// handoverPoll spaces the tries while waiting: each is one conditional write.
	handoverPoll = 250 * time.Millisecond
)

// acquire takes the beat's lease for owner. Watching, it tries again for up to handoverWait (and
// never longer than Watch): the lease is then most likely the previous beat's, about to be let go.
func (h *Handler) acquire(ctx context.Context, owner string) (bool, error) {
	giveUp := time.Now().Add(min(handoverWait, h.Watch))
	for {
		ok, err := h.Leases.Acquire(ctx, "reconcile", owner, h.now(), h.now().Add(beatLease))
		if err != nil || ok || !time.Now().Before(giveUp) {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(handoverPoll):
		}
	}
}

// keepLease renews owner's lease every leaseRenew until ctx ends, and calls lost, which must end
// ctx, once the lease is another beat's or may run out before it can be renewed. It answers a
// function that waits until it has stopped, so that no renewal follows the lease's release.
func (h *Handler) keepLease(ctx context.Context, owner string, lost context.CancelFunc) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		held := h.now().Add(beatLease)
		t := time.NewTicker(leaseRenew)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := h.now()
			ok, err := h.Leases.Acquire(ctx, "reconcile", owner, now, now.Add(beatLease))
			switch {
			case ok:
				held = now.Add(beatLease)
				continue
			case ctx.Err() != nil:
				return
			case err == nil:
				h.Log.WarnContext(ctx, "the beat's lease was taken by another beat; this one stops")
			case h.now().Before(held.Add(-leaseMargin)):
				h.Log.WarnContext(ctx, "renewing the beat's lease; trying again", "error", err)
				continue
			default:
				h.Log.ErrorContext(ctx, "the beat's lease could not be renewed before it runs out; this beat stops", "error", err)
			}
			lost()
			return
		}
	}()
	return func() { <-done }
}
