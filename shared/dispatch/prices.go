package dispatch

import (
	"context"
	"sync"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// keptPrices remembers, by region and instance type, the last point this process wrote of a
// spot price history, so that a drain writes a point only when its slot or its price is new:
// at most one write per instance type and step while the price holds.
type keptPrices struct {
	mu   sync.Mutex
	last map[string]keptPoint
}

type keptPoint struct {
	slot  int
	price float64
}

// keepPrices adds what this drain observed of region's spot prices to their histories. The
// prices were read for the gate anyway; a history is for people to look at, so failing to keep
// it is logged and never holds up the drain.
func (h *Handler) keepPrices(ctx context.Context, region string, observed map[string]spotgate.Observation) {
	now := h.now()
	for t, o := range observed {
		if !o.Known {
			continue
		}
		key, p := region+"\x00"+t, keptPoint{slot: jobs.PriceSlot(now, h.PriceStep), price: o.Price}
		h.kept.mu.Lock()
		same := h.kept.last[key] == p
		h.kept.mu.Unlock()
		if same {
			continue
		}
		if err := h.Store.KeepSpotPrice(ctx, region, t, h.PriceStep, jobs.PricePoint{At: now, Price: o.Price}); err != nil {
			h.Log.WarnContext(ctx, "keeping the spot price history", "region", region, "instance_type", t, "error", err)
			continue
		}
		h.kept.mu.Lock()
		if h.kept.last == nil {
			h.kept.last = map[string]keptPoint{}
		}
		h.kept.last[key] = p
		h.kept.mu.Unlock()
	}
}
