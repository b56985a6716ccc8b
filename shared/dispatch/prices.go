package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// keptPrices remembers, by region and instance type, the last point this process wrote of a
// spot price history, so that a drain writes a point only when its slot or its price is new:
// at most one write per instance type and step while the price holds.
type keptPrices struct {
	mu   sync.Mutex
	last map[string]keptPoint
	// asked is, by region and instance type, the step in which a full region's drain last read
	// the price (keepWaitingPrices), known or not.
	asked map[string]time.Time
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

// keepWaitingPrices keeps the spot price histories of a full region: a drain of a region with no
// free slot reads no queued job, so it observes no price for the gate, and the console's chart of
// the types waiting there would go flat for as long as the region stays full. types are those the
// census found waiting (its own queues' and the roaming jobs' that allow the region), so nothing
// here reads the queue; each is read at most once a step (PriceStep, five minutes by default) by
// this process, whether the price was known or not (and not at all when a drain with room kept a point in this
// step), and kept as keepPrices keeps it.
func (h *Handler) keepWaitingPrices(ctx context.Context, region string, types []string) {
	now := h.now()
	step := h.PriceStep
	if step <= 0 {
		step = jobs.DefaultPriceStep
	}
	this := now.Truncate(step)
	observed := map[string]spotgate.Observation{}
	for _, t := range types {
		key := region + "\x00" + t
		h.kept.mu.Lock()
		if h.kept.asked == nil {
			h.kept.asked = map[string]time.Time{}
		}
		last, kept := h.kept.last[key]
		done := h.kept.asked[key].Equal(this) || kept && last.slot == jobs.PriceSlot(now, step)
		h.kept.asked[key] = this
		h.kept.mu.Unlock()
		if !done {
			observed[t] = h.Prices.Observe(ctx, region, t, now)
		}
	}
	h.keepPrices(ctx, region, observed)
}
