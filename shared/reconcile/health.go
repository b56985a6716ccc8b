package reconcile

import (
	"context"

	"github.com/tidegate/tidegate/shared/metrics"
)

// reach records whether the beat's calls reached region's cluster (why is nil when they did).
// What fails to be recorded is logged: the beat goes on.
func (h *Handler) reach(ctx context.Context, region string, why error) {
	if h.Health == nil {
		return
	}
	var err error
	if why == nil {
		err = h.Health.Reached(ctx, region, h.now())
	} else {
		err = h.Health.Missed(ctx, region, h.now(), why)
	}
	if err != nil {
		h.Log.WarnContext(ctx, "recording a region's reachability", "region", region, "err", err)
	}
}

// publishReach publishes how long each region has gone unreached (0 for one reached), as the
// regions' health records have it after this beat.
func (h *Handler) publishReach(ctx context.Context) {
	if h.Health == nil || h.Metrics == nil {
		return
	}
	health, err := h.Health.Health(ctx, h.Regions)
	if err != nil {
		h.Log.WarnContext(ctx, "reading the regions' reachability", "err", err)
		return
	}
	for _, region := range h.Regions {
		if err := h.Metrics.Put(metrics.RegionUnreachable, []string{region}, health[region].Unreachable(h.now()).Seconds()); err != nil {
			h.Log.WarnContext(ctx, "recording a region's reachability", "error", err)
		}
	}
}
