package dispatch

import (
	"context"
	"sync"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/jobs"
)

// A drain's decisions (jobs.Decision) are gathered as it makes them and written once when it
// ends, a call per 25: an admission and the flavor and quota it was made on, a wait reason that
// changed and what it lacks, an eviction and the borrowing it took back, a region chosen. They
// are a trail for the job's owner, not the record: a drain that stops before writing them loses
// them, and the job is as its record says.

// trail is a drain's decisions so far; its zero value is ready, and safe for the claimers.
type trail struct {
	mu sync.Mutex
	ds []jobs.JobDecision
}

func (t *trail) add(id string, d jobs.Decision) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ds = append(t.ds, jobs.JobDecision{JobID: id, Decision: d})
}

// keep writes t's decisions; a failure is logged, never the drain's.
func (h *Handler) keep(ctx context.Context, t *trail) {
	t.mu.Lock()
	ds := t.ds
	t.ds = nil
	t.mu.Unlock()
	if len(ds) == 0 {
		return
	}
	if err := h.Store.KeepDecisions(context.WithoutCancel(ctx), ds); err != nil {
		h.Log.WarnContext(ctx, "decisions not kept; the jobs' records are as they were", "decisions", len(ds), "err", err)
	}
}

// standing is tenant's standing on flavor of snap's region, per resource: what its active jobs
// hold there (with more, a job's demand just admitted) and its nominal quota. Nil where the region
// is not shared by quotas or has no such flavor.
func standing(snap snapshot, tenant, flavor string, more admission.Vec) map[string]jobs.QuotaStanding {
	c, fr := snap.capacity, snap.region
	f := fr.Index(flavor)
	if f < 0 || c.Quotas == nil && c.DefaultQuota == nil {
		return nil
	}
	q, named := c.Quotas[tenant]
	if !named {
		q = c.DefaultQuota
	}
	var held, nominal admission.Vec
	if use := c.InUse[tenant]; f < len(use) {
		held = use[f]
	}
	if f < len(q) {
		nominal = q[f].Nominal
	}
	out := map[string]jobs.QuotaStanding{}
	for r, name := range fr.Resources {
		h, n := held.At(r)+more.At(r), nominal.At(r)
		if h == 0 && n == 0 {
			continue
		}
		out[name] = jobs.QuotaStanding{Held: fr.Quantity(r, h), Nominal: fr.Quantity(r, n)}
	}
	return out
}

// admitted notes, in tr, each job a drain claimed: where, on what flavor, on what standing of its
// tenant's quota, and for a roaming job the region chosen and why.
func admitted(snap snapshot, tr *trail) func(jobs.Job, admission.Placed, *jobs.RegionChoice) {
	return func(j jobs.Job, p admission.Placed, choice *jobs.RegionChoice) {
		d := jobs.Decision{At: j.UpdatedAt, Kind: jobs.DecisionAdmitted, Attempt: j.AttemptOf(), Region: j.Region, Flavor: p.Flavor,
			Quota: standing(snap, j.Tenant, p.Flavor, snap.region.Need(j).Demand)}
		if choice != nil {
			tr.add(j.ID, jobs.Decision{At: j.UpdatedAt, Kind: jobs.DecisionRegion, Region: choice.Region, Reason: choice.Reason})
		}
		tr.add(j.ID, d)
	}
}
