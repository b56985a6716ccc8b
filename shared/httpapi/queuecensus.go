package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
)

// queueCensus is what the API knows of the queues without reading them: every region's census,
// as its drains last kept it (dynamo.RegionCensus, at most about a minute old while the region has
// jobs queued), and which queues hold any job now, one item counted of each. The queue stats and
// the caps of tenants' queued jobs read it, so neither costs more as any tenant's queue grows.
type queueCensus struct {
	censuses map[string]dynamo.RegionCensus // by region; a region whose drains kept none is left out
	waiting  map[string]bool                // regions where a job waits now (queued or held), roaming ones aside
	roaming  bool                           // whether any job waits for a region among several now
}

// readCensus reads the censuses of the API's regions in one BatchGetItem, and whether each of
// their queues, and the roaming queue, holds any job.
func (a *api) readCensus(ctx context.Context) (queueCensus, error) {
	censuses, err := a.jobs.Censuses(ctx, a.regions)
	if err != nil {
		return queueCensus{}, err
	}
	waiting, roaming, err := a.jobs.Waiting(ctx, a.regions)
	if err != nil {
		return queueCensus{}, err
	}
	return queueCensus{censuses: censuses, waiting: waiting, roaming: roaming}, nil
}

// queuedIn is what region's census counted of tenant's jobs in the region's own queues and held
// there, and when it counted them; nothing, counted at no time, where no drain kept a census or
// none of them waits now: a drain takes no census of an empty queue (nothing rings it), so its last census
// would count for ever jobs that have left.
func (c queueCensus) queuedIn(region, tenant string) (dynamo.Queued, *time.Time) {
	rc, ok := c.censuses[region]
	if !ok || !c.waiting[region] {
		return dynamo.Queued{}, nil
	}
	at := rc.At
	return rc.Queued[tenant], &at
}

// roamingOf is tenant's roaming jobs that allow each region, as that region's census counted
// them, and all of them counted once, as the freshest census did; all 0, counted at no time,
// with the roaming queue empty now, whatever a census said before the last roaming job left.
func (c queueCensus) roamingOf(tenant string) (map[string]roamingStats, roamingStats) {
	out := map[string]roamingStats{}
	var total roamingStats
	if !c.roaming {
		return out, total
	}
	for region, rc := range c.censuses {
		at := rc.At
		out[region] = roamingStats{Jobs: rc.Roaming[tenant], CountedAt: &at}
		if total.CountedAt == nil || at.After(*total.CountedAt) {
			total = roamingStats{Jobs: rc.RoamingAll[tenant], CountedAt: &at}
		}
	}
	return out, total
}

// queuedOf is how many of tenant's jobs wait in the queues, as the censuses counted them: those in
// every region's own queues and held there, and its roaming jobs once. It is behind by what a census has not seen:
// the jobs submitted since a region's census began count once its next census does (a drain takes
// one at most a minute after the last while the region has queued jobs), and the jobs dispatched
// or cancelled since still count until then.
func (c queueCensus) queuedOf(tenant string) int {
	n := 0
	for region := range c.censuses {
		q, _ := c.queuedIn(region, tenant)
		n += q.Jobs()
	}
	_, roaming := c.roamingOf(tenant)
	return n + roaming.Jobs
}

// censusFresh is how long one API process reuses what it read of the censuses for the caps of
// queued jobs: a burst of submissions costs one BatchGetItem and a few one-item counts every five
// seconds, against figures that are up to a minute old anyway.
const censusFresh = 5 * time.Second

// censusCache keeps one read of the censuses for censusFresh. Its zero value is ready.
type censusCache struct {
	mu   sync.Mutex
	c    queueCensus
	read time.Time
}

// cachedCensus is the censuses as read at most censusFresh ago. One read at a time: the
// submissions that find the cache stale meanwhile wait for it rather than each reading.
func (a *api) cachedCensus(ctx context.Context) (queueCensus, error) {
	cc := &a.censuses
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if now := a.now(); !cc.read.IsZero() && now.Sub(cc.read) < censusFresh {
		return cc.c, nil
	}
	c, err := a.readCensus(ctx)
	if err != nil {
		return queueCensus{}, err
	}
	cc.c, cc.read = c, a.now()
	return c, nil
}
