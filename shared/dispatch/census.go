package dispatch

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
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

// census is region's queue length, oldest waiting job and the instance types its capped jobs wait
// for, from a census at most censusEvery old: its queues (batch and long-running), its held jobs
// and those backing off counted whole, and the roaming queue read whole for the roaming jobs that
// allow the region (whose types it adds). What it counted by tenant, of all of them, it keeps as
// the region's dynamo.RegionCensus, which the queue stats show and the API holds each tenant's
// queued jobs to its cap by. A census that fails is logged and the last one kept, or none: only
// gauges, the stats, the caps, other regions' view of this queue's length and a full region's
// spot price history read it.
func (h *Handler) census(ctx context.Context, region string) dynamo.Census {
	now := h.now()
	c := &h.censuses
	c.mu.Lock()
	e, ok := c.seen[region]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < censusEvery {
		return e.c
	}
	sum := dynamo.Census{Tenants: map[string]dynamo.Queued{}}
	for _, q := range dynamo.WaitingQueues(region) {
		got, err := h.Store.Census(ctx, q)
		if err != nil {
			h.Log.WarnContext(ctx, "counting the queue", "region", region, "err", err)
			return e.c
		}
		if q == dynamo.LongHeldQueue(region) {
			sum.LongHeld = slices.Sorted(maps.Keys(got.Tenants))
		}
		addCensus(&sum, got)
	}
	if err := h.keepCensus(ctx, region, now, &sum); err != nil {
		h.Log.WarnContext(ctx, "keeping the census", "region", region, "err", err)
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

// took notes that a drain of region took n jobs off its queue, so the drains that reuse its census
// until the next count do not report them still waiting: a queue a drain emptied reads empty, not
// as long as it was for up to censusEvery. Jobs submitted meanwhile wait for that count.
func (h *Handler) took(region string, n int) {
	if n == 0 {
		return
	}
	h.censuses.edit(region, func(c *dynamo.Census) {
		c.Jobs = max(c.Jobs-n, 0)
		if c.Jobs == 0 {
			c.Oldest = time.Time{}
		}
	})
}

// noteHeld adds to region's last census the instance types of the capped jobs this drain judged
// and the tenants it just held at their long-running limit, so the drains that reuse it until the
// next count read those held jobs (and keep those types' price history) rather than wait for that
// count.
func (h *Handler) noteHeld(region string, types, tenants []string) {
	if len(types) == 0 && len(tenants) == 0 {
		return
	}
	h.censuses.edit(region, func(c *dynamo.Census) {
		c.Types = addTypes(c.Types, types...)
		c.LongHeld = addTypes(c.LongHeld, tenants...)
	})
}

// edit changes region's census in place, if this process keeps one.
func (c *censusCache) edit(region string, change func(*dynamo.Census)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.seen[region]; ok {
		change(&e.c)
		c.seen[region] = e
	}
}

// longHeldTenants are the tenants of queued whose jobs wait at their long-running limit.
func longHeldTenants(queued []jobs.Job, waits []admission.FlavorWait) []string {
	tenantOf := make(map[string]string, len(queued))
	for _, j := range queued {
		tenantOf[j.ID] = j.Tenant
	}
	var out []string
	for _, w := range waits {
		if t, ok := tenantOf[w.ID]; ok && w.Reason == admission.ReasonSlotlessLimit && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// addCensus counts got, one queue's census, into sum, the region's.
func addCensus(sum *dynamo.Census, got dynamo.Census) {
	sum.Jobs += got.Jobs
	if !got.Oldest.IsZero() && (sum.Oldest.IsZero() || got.Oldest.Before(sum.Oldest)) {
		sum.Oldest = got.Oldest
	}
	sum.Types = addTypes(sum.Types, got.Types...)
	for t, q := range got.Tenants {
		sum.Tenants[t] = sum.Tenants[t].Add(q)
	}
}

// keepCensus reads the roaming queue whole, adds the types its jobs that allow region wait for to
// sum, and keeps their count by tenant beside sum's (the region's own queues', held and backing
// off) as region's census taken at, when its reads began: a job submitted since may be in it or
// wait for the next.
func (h *Handler) keepCensus(ctx context.Context, region string, at time.Time, sum *dynamo.Census) error {
	all, err := h.Store.Roaming(ctx)
	if err != nil {
		return err
	}
	rc := tallyRoaming(region, all)
	rc.At, rc.Queued = at, sum.Tenants
	for _, j := range all {
		if j.Spot != nil && slices.Contains(j.Regions, region) {
			sum.Types = addTypes(sum.Types, j.Spot.InstanceType)
		}
	}
	return h.Store.PutCensus(ctx, rc)
}

// tallyRoaming counts the roaming jobs of all by tenant: those that allow region, and all of them.
func tallyRoaming(region string, all []jobs.Job) dynamo.RegionCensus {
	rc := dynamo.RegionCensus{Region: region, Roaming: map[string]int{}, RoamingAll: map[string]int{}}
	for _, j := range all {
		if !j.Roaming() {
			continue
		}
		rc.RoamingAll[j.Tenant]++
		if slices.Contains(j.Regions, region) {
			rc.Roaming[j.Tenant]++
		}
	}
	return rc
}

// addTypes adds each of ts not in types yet, keeping types' order (instance types, or tenants).
func addTypes(types []string, ts ...string) []string {
	for _, t := range ts {
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	return types
}
