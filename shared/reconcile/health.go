package reconcile

import (
	"context"
	"time"

	"github.com/tidegate/tidegate/shared/metrics"
)

// reach records whether the beat's calls reached region's cluster (why is nil when they did).
// What fails to be recorded is logged: the beat goes on.
func (h *Handler) reach(ctx context.Context, region string, why error) {
	if h.Health == nil {
		return
	}
	now := h.now()
	h.mu.Lock()
	last, quiet := h.reached[region]
	quiet = quiet && why == nil && now.Sub(last) < reachQuiet
	if quiet {
		h.lastReach[region] = true
	}
	h.mu.Unlock()
	if quiet {
		return // reached, and recorded so by this process within reachQuiet: no call at all
	}
	var err error
	if why == nil {
		err = h.Health.Reached(ctx, region, now)
	} else {
		err = h.Health.Missed(ctx, region, now, why)
	}
	if err != nil {
		h.Log.WarnContext(ctx, "recording a region's reachability", "region", region, "err", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reached == nil {
		h.reached, h.lastReach = map[string]time.Time{}, map[string]bool{}
	}
	h.lastReach[region] = why == nil
	if why == nil && err == nil {
		h.reached[region] = now
	} else {
		delete(h.reached, region)
	}
}

// reachQuiet is how long a process that recorded a region reached makes no call to record it
// again while it stays reached: the store writes a success at most once a minute anyway
// (dynamo.JobStore.Reached), and this spares the call.
const reachQuiet = time.Minute

// reachedNow says whether this process's last call to region's cluster reached it.
func (h *Handler) reachedNow(region string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastReach[region]
}

// publishReach publishes how long each region has gone unreached (0 for one reached), as the
// regions' health records have it after this beat, and acts on what they say (regions).
func (h *Handler) publishReach(ctx context.Context) error {
	if h.Health == nil {
		return nil
	}
	health, err := h.Health.Health(ctx, h.Regions)
	if err != nil {
		h.Log.WarnContext(ctx, "reading the regions' reachability", "err", err)
		return nil
	}
	err = h.regions(ctx, health)
	if h.Metrics == nil {
		return err
	}
	for _, region := range h.Regions {
		if err := h.Metrics.Put(metrics.RegionUnreachable, []string{region}, health[region].Unreachable(h.now()).Seconds()); err != nil {
			h.Log.WarnContext(ctx, "recording a region's reachability", "error", err)
		}
	}
	return err
}
