package dispatch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// countingPrices counts the reads a drain makes of the real price reader.
type countingPrices struct {
	Prices
	reads atomic.Int64
}

func (c *countingPrices) Observe(ctx context.Context, region, instanceType string, now time.Time) spotgate.Observation {
	c.reads.Add(1)
	return c.Prices.Observe(ctx, region, instanceType, now)
}

// TestFullRegionKeepsPrices: a region whose one slot is taken reads none of its queue, yet its
// drains keep a point of the spot price history of the type a capped job waits for there (and of
// one a roaming job that allows the region waits for), from the census: one price read per type
// and five-minute step, however many drains run in it.
func TestFullRegionKeepsPrices(t *testing.T) {
	r := newRigIn(t, func(string) int { return 1 }, region, west)
	r.prices(t, map[string]float64{region: 0.50, west: 0.50})
	if err := r.book.Set(region, "p4d.24xlarge", 9.5, r.clock.now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	counted := &countingPrices{Prices: r.dispatch.Prices}
	r.dispatch.Prices = counted
	filler := r.submit(t, "filler", 50, nil)
	r.drainIn(t, region)
	if got := r.job(t, filler.ID); got.Status != jobs.StatusPending {
		t.Fatalf("filler = %s; want pending, holding the region's one slot", got.Status)
	}
	r.submit(t, "capped", 50, &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.60})
	if _, err := r.createRoaming("job-roamer", "roamer", 50, &jobs.Spot{InstanceType: "p4d.24xlarge", MaxPrice: 10}, region, west); err != nil {
		t.Fatal(err)
	}
	r.clock.skip(censusEvery + time.Second) // the next drain counts the queues again
	before := counted.reads.Load()
	for range 3 {
		r.drainIn(t, region)
	}
	if got := counted.reads.Load() - before; got != 2 {
		t.Errorf("three drains of the full region read %d prices; want 2, one per waiting type", got)
	}
	for _, typ := range []string{"g5.xlarge", "p4d.24xlarge"} {
		if n := r.points(t, typ); n != 1 {
			t.Errorf("%s's history in the full region has %d points after its drains; want 1", typ, n)
		}
	}
	r.clock.skip(jobs.DefaultPriceStep)
	r.drainIn(t, region)
	if n := r.points(t, "g5.xlarge"); n != 2 {
		t.Errorf("g5.xlarge's history has %d points a step later; want 2", n)
	}
	if got := r.job(t, "job-capped"); got.Status != jobs.StatusQueued {
		t.Errorf("capped job = %s; want still queued in the full region", got.Status)
	}
}

// points counts the points of instanceType's spot price history in the rig's region.
func (r rig) points(t *testing.T, instanceType string) int {
	t.Helper()
	h, err := r.store.SpotPriceHistories(context.Background(), region, []string{instanceType}, r.clock.now())
	if err != nil {
		t.Fatal(err)
	}
	return len(h[instanceType])
}
