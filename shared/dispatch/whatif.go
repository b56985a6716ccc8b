package dispatch

import (
	"context"
	"fmt"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// WhatIf is what a drain of region would decide now for job j, which is not stored: the whole
// admission, as Drain runs it (the region's gate, its active jobs and queues read as far as a
// drain reads them, the tenants' quotas, holds and long-running limits, the spot price, the
// roaming choice), with j judged among the queued jobs in its place. It writes nothing: no claim,
// no wait, no eviction, no census. The queue's census is left out, so jobs held apart by a price
// that allows them now are not read; a drain reads them, and they may stand ahead of j.
func (h *Handler) WhatIf(ctx context.Context, region string, j jobs.Job) (jobs.WhatIf, error) {
	out := jobs.WhatIf{Region: region}
	if _, ok := h.Regions[region]; !ok {
		return out, fmt.Errorf("what if in %q: %w", region, errUnknownRegion)
	}
	active, err := h.Store.Active(ctx, region)
	if err != nil {
		return out, err
	}
	p, err := h.readQueues(ctx, region, h.flavorsOf(region), active, dynamo.Census{}, j)
	if err != nil {
		return out, err
	}
	if j.Spot != nil {
		g := gateOf(j.Spot, p.observed[j.Spot.InstanceType], h.now())
		out.Spot = &g
	}
	out.Quota = standings(p.snap, j.Tenant)
	if c, ok := p.rm.choices[j.ID]; ok {
		out.Choice = &c
	}
	return judgedFor(out, p, j), nil
}

// errUnknownRegion: the region is not one this deployment runs jobs in.
var errUnknownRegion = fmt.Errorf("no such region")

// judgedFor fills out with what plan p decided for job j.
func judgedFor(out jobs.WhatIf, p plan, j jobs.Job) jobs.WhatIf {
	for _, a := range p.decision.Admit {
		if a.ID == j.ID {
			out.Admitted, out.Flavor = true, a.Flavor
			return out
		}
	}
	for i, w := range p.decision.Waiting {
		if w.ID == j.ID {
			out.Reason, out.Resource, out.Position = string(w.Reason), w.Resource, i+1
			return out
		}
	}
	for _, w := range p.backoff {
		if w.ID == j.ID {
			out.Reason = string(w.Reason)
			return out
		}
	}
	for _, f := range p.failing {
		if f.ID == j.ID {
			out.Reason = jobs.ReasonSpotDeadlinePassed
			return out
		}
	}
	switch {
	case out.Choice != nil && out.Choice.Region != "" && out.Choice.Region != out.Region:
		out.Reason = jobs.WhatIfElsewhere // its drain there admits it, or says why not
	case out.Choice != nil:
		out.Reason = out.Choice.Reason
	default:
		// Judged by no drain now: the queue ahead of it is deeper than a drain reads at once.
		out.Reason = string(admission.ReasonQueuedBehindHigherPriority)
	}
	return out
}

// standings are tenant's standing on each flavor of the snapshot's region, per resource, where a
// quota applies.
func standings(snap snapshot, tenant string) map[string]map[string]jobs.QuotaStanding {
	var out map[string]map[string]jobs.QuotaStanding
	for _, f := range snap.region.Flavors {
		if s := standing(snap, tenant, f.Name, nil); len(s) > 0 {
			if out == nil {
				out = map[string]map[string]jobs.QuotaStanding{}
			}
			out[f.Name] = s
		}
	}
	return out
}
