package jobs

import (
	"slices"
	"time"
)

// PriceSlots is how many points a spot price history keeps per region and instance type: a day
// at DefaultPriceStep. A step is whole seconds, at least one.
const PriceSlots = 288

// DefaultPriceStep is how far apart a spot price history's points are: at most one point per
// step, the last price a drain observed in it.
const DefaultPriceStep = 5 * time.Minute

// PricePoint is one point of a spot price history: the lowest price across a region's zones
// that a drain observed at At.
type PricePoint struct {
	At    time.Time `json:"at" dynamodbav:"at"`
	Price float64   `json:"price" dynamodbav:"price"`
}

// PriceSlot is the slot of a history kept at step in which a point observed at t goes: the slots
// are a ring of PriceSlots, so a point overwrites the one a whole ring earlier and the history
// stays bounded without ever being read before it is written.
func PriceSlot(t time.Time, step time.Duration) int {
	if step <= 0 {
		step = DefaultPriceStep
	}
	step = max(step, time.Second)
	return int((t.Unix() / int64(step/time.Second)) % PriceSlots)
}

// PriceHistory is the points of a ring kept at step that are still in it as of now (no older
// than a whole ring), oldest first. A slot not written for a ring holds a point from an earlier
// turn, which is left out.
func PriceHistory(slots map[int]PricePoint, step time.Duration, now time.Time) []PricePoint {
	if step <= 0 {
		step = DefaultPriceStep
	}
	since := now.Add(-PriceSlots * step)
	out := make([]PricePoint, 0, len(slots))
	for _, p := range slots {
		if p.At.After(since) && !p.At.After(now) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b PricePoint) int { return a.At.Compare(b.At) })
	return out
}

// PriceCap is how many waiting jobs hold one spot price cap. A region's census keeps them, by
// tenant and instance type, for the queue's stats.
type PriceCap struct {
	MaxPrice float64 `json:"max_price" dynamodbav:"max_price"`
	Jobs     int     `json:"jobs" dynamodbav:"jobs"`
}

// SpotGated reports whether the job waits for its spot price: above its cap, or not known
// (admission's spot_price_above_cap and spot_price_unknown).
func (j Job) SpotGated() bool {
	return j.PendingReason == "spot_price_above_cap" || j.PendingReason == "spot_price_unknown"
}

// SpotTypes are the instance types the queued jobs among js cap, sorted.
func SpotTypes(js []Job) []string {
	var out []string
	for _, j := range js {
		if j.Status == StatusQueued && j.Spot != nil && !slices.Contains(out, j.Spot.InstanceType) {
			out = append(out, j.Spot.InstanceType)
		}
	}
	slices.Sort(out)
	return out
}
