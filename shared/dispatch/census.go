package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
)

// censusCache keeps each region's last census per process. Its zero value is ready.
type censusCache struct {
	mu   sync.Mutex
	seen map[string]censusEntry
}

type censusEntry struct {
	c  dynamo.Census
	at time.Time
}

// census is region's queue length and oldest waiting job, from a census at most censusEvery old:
// both its queues (batch and long-running) counted whole. A census that fails is logged and the
// last one kept, or none: only gauges and other regions' view of this queue's length read it.
func (h *Handler) census(ctx context.Context, region string) dynamo.Census {
	now := h.now()
	c := &h.censuses
	c.mu.Lock()
	e, ok := c.seen[region]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < censusEvery {
		return e.c
	}
	var sum dynamo.Census
	for _, q := range []dynamo.Queue{dynamo.RegionQueue(region), dynamo.LongRunningQueue(region)} {
		got, err := h.Store.Census(ctx, q)
		if err != nil {
			h.Log.WarnContext(ctx, "counting the queue", "region", region, "err", err)
			return e.c
		}
		sum.Jobs += got.Jobs
		if !got.Oldest.IsZero() && (sum.Oldest.IsZero() || got.Oldest.Before(sum.Oldest)) {
			sum.Oldest = got.Oldest
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]censusEntry{}
	}
	// Fresh from its end: a census slower than censusEvery (a deep queue on a slow store) would
	// otherwise be taken again by every drain after it.
	c.seen[region] = censusEntry{c: sum, at: h.now()}
	return sum
}
