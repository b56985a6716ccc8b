package httpapi

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// tenantStats is one tenant's use of a region beside its share, in the older form of a quota:
// its active jobs and the GPUs they all request, and how many of them are long-running. The
// shares in resources, per flavor, are flavorStats'.
type tenantStats struct {
	Tenant      string        `json:"tenant"`
	Use         tenancy.Quota `json:"use"`
	Share       tenancy.Quota `json:"share"`
	LongRunning int           `json:"long_running"`
}

// longRunning is how long-running jobs share a region (config.LongRunningSettings).
type longRunning struct {
	HoldsSlot bool `json:"holds_slot"`
	// PerTenant is how many slot-free long-running jobs a tenant may have active in a region.
	PerTenant int `json:"per_tenant_limit"`
}

// longRunningStats is a region's long-running jobs, listed apart from its batch jobs: the
// caller's by status, and how they share the region.
type longRunningStats struct {
	Counts map[string]int `json:"counts"`
	longRunning
}

// regionStats is one region of the queue's stats.
type regionStats struct {
	Region        string         `json:"region"`
	Counts        map[string]int `json:"counts"`
	Gated         int            `json:"gated"`
	CapacityLimit int            `json:"capacity_limit"`
	CapacityInUse int            `json:"capacity_in_use"`
	// CountedAt is when the region's census counted the queued jobs in Counts, LongRunning,
	// Gated and SpotPrices' caps; nil where none was kept or the region's queues are empty now.
	CountedAt *time.Time `json:"counted_at"`
	// LongRunning are the caller's long-running jobs (Deployments, StatefulSets), which Counts
	// leaves out.
	LongRunning longRunningStats `json:"long_running"`
	Tenants     []tenantStats    `json:"tenants"`
	// Flavors are the region's flavors: each one's capacity and use per resource, and the
	// tenants' shares of it (the caller's, or every tenant's for an operator).
	Flavors    []flavorStats `json:"flavors"`
	SpotPrices []spotPrices  `json:"spot_prices"`
	// Roaming are the caller's tenant's jobs that may run here among other regions and wait for
	// one: in no region's Counts, and in the Roaming of every region they allow.
	Roaming roamingStats `json:"roaming"`
	// Reach is whether the reconcile beat reaches the region's cluster (dynamo.RegionHealth, its
	// last error for the operator alone,
	// with how long it has gone unreached); nil where no beat has recorded it yet.
	Reach *regionReach `json:"reach"`
}

// regionReach is a region's health as the beat recorded it, how long it has gone unreached, and
// what follows for admissions there (State).
type regionReach struct {
	dynamo.RegionHealth
	UnreachableSeconds float64 `json:"unreachable_seconds"`
	// State is "admitting", or why the region admits nothing: "cordoned", "draining",
	// "unreachable", "lost" (unreached for TIDEGATE_REGION_LOST_AFTER) or "clearing" (back after
	// it was lost, deleting what fenced attempts left).
	State string `json:"state"`
}

// reachOf is region health h as the queue stats show it at now, to tenant: the last error and
// who cordoned the region are the operator's alone (the error names the cluster's endpoint).
func reachOf(h dynamo.RegionHealth, tenant tenancy.Tenant, now time.Time, lostAfter time.Duration) *regionReach {
	if !tenant.Operator {
		h.LastError, h.CordonedBy = "", ""
	}
	state := "admitting"
	switch h.Closed() {
	case admission.ReasonRegionCordoned:
		state = "cordoned"
	case admission.ReasonRegionDraining:
		state = "draining"
	case admission.ReasonRegionUnreachable:
		state = "unreachable"
		if h.Lost(now, lostAfter) {
			state = "lost"
		}
	case admission.ReasonRegionClearing:
		state = "clearing"
	}
	return &regionReach{RegionHealth: h, UnreachableSeconds: h.Unreachable(now).Seconds(), State: state}
}

// queueStats is GET /api/v1/queue/stats: per region, the caller's tenant's live batch jobs by
// status and, apart, its long-running ones, how many are held by their spot cap, the region's job
// slots in use, and tenants' use of the region beside their shares: the caller's own tenant's, or,
// for an operator (tenancy.Tenant.Operator), every tenant's that has jobs active there or a share
// set for it. No one else, a tenant's admin included, sees another tenant's figures.
//
// The queued jobs are the drains' censuses' (queueCensus), counted by tenant at most about a
// minute before (CountedAt): the stats read no queued job, so what they cost is the same whatever
// any tenant queues. The active jobs are read, as many as the regions' capacity lets run.
func (a *api) queueStats(w http.ResponseWriter, r *http.Request) error {
	tenant := principalOf(r.Context()).Tenant
	var all []tenancy.Tenant // every tenant, read once for the operator; nil for anyone else
	if tenant.Operator {
		var err error
		if all, err = a.principals.Tenants(r.Context()); err != nil {
			return err
		}
	}
	census, err := a.readCensus(r.Context())
	if err != nil {
		return err
	}
	roam, total := census.roamingOf(tenant.Name)
	health, err := a.jobs.Health(r.Context(), a.regions)
	if err != nil {
		return err
	}
	var out []regionStats
	for _, region := range a.regions {
		st, err := a.regionStats(r.Context(), region, tenant, all, census)
		if err != nil {
			return err
		}
		st.Roaming = roam[region]
		if h, ok := health[region]; ok {
			st.Reach = reachOf(h, tenant, a.now(), a.lostAfter)
		}
		out = append(out, st)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"regions": out, "roaming": total, "held": tenant.Held})
}

// regionStats is region's part of the queue's stats for tenant (all, every tenant, for the
// operator; nil for anyone else): its queued jobs from census, its active ones as they are now.
func (a *api) regionStats(ctx context.Context, region string, tenant tenancy.Tenant, all []tenancy.Tenant, census queueCensus) (regionStats, error) {
	active, err := a.jobs.Active(ctx, region)
	if err != nil {
		return regionStats{}, err
	}
	queued, countedAt := census.queuedIn(region, tenant.Name)
	st := regionStats{Region: region, Counts: map[string]int{}, LongRunning: longRunningStats{Counts: map[string]int{}, longRunning: a.longRun},
		CountedAt: countedAt, Gated: queued.Gated, Flavors: []flavorStats{}}
	if queued.Batch > 0 {
		st.Counts[string(jobs.StatusQueued)] = queued.Batch
	}
	if queued.LongRunning > 0 {
		st.LongRunning.Counts[string(jobs.StatusQueued)] = queued.LongRunning
	}
	if st.SpotPrices, err = a.spotPrices(ctx, region, queued.Caps); err != nil {
		return regionStats{}, err
	}
	if a.flavors != nil {
		fr := a.flavors(region)
		for _, j := range active {
			st.CapacityInUse += fr.Pods(fr.Need(j))
		}
		st.CapacityLimit = fr.Room(fr.Free(nil), 0)
		st.Flavors = flavorsOf(fr, region, active, tenant, all, a.quota)
	}
	if all != nil {
		st.Tenants = everyTenantsUse(region, active, all, a.quota)
	} else {
		st.Tenants = []tenantStats{ownUse(region, active, tenant, a.quota)}
	}
	for _, j := range active {
		if j.Tenant != tenant.Name {
			continue
		}
		if j.LongRunning() {
			st.LongRunning.Counts[string(j.Status)]++
		} else {
			st.Counts[string(j.Status)]++
		}
		if j.SpotGated() {
			st.Gated++
		}
	}
	return st, nil
}

// roamingStats is how many of a tenant's jobs wait for a region among several, as a region's
// drains last counted them (CountedAt; at most a minute before that region's last drain).
type roamingStats struct {
	Jobs      int        `json:"jobs"`
	CountedAt *time.Time `json:"counted_at"`
}

// spotPrices is one instance type's spot price history in a region beside the caps of the
// caller's jobs that wait there with one.
type spotPrices struct {
	InstanceType string            `json:"instance_type"`
	Points       []jobs.PricePoint `json:"points"`
	Caps         []jobs.PriceCap   `json:"caps"`
}

// spotPrices answers, for each instance type that the caller's tenant's queued jobs in region
// cap (caps, as the region's census counted them), the prices the drains observed there (oldest
// first) and those jobs' caps. Another tenant's jobs are left out whatever the caller's role:
// their caps, and which types they wait for, are theirs.
func (a *api) spotPrices(ctx context.Context, region string, caps map[string][]jobs.PriceCap) ([]spotPrices, error) {
	types := slices.Sorted(maps.Keys(caps))
	out := make([]spotPrices, 0, len(types))
	if len(types) == 0 {
		return out, nil
	}
	histories, err := a.jobs.SpotPriceHistories(ctx, region, types, a.now())
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		points := histories[t]
		if points == nil {
			points = []jobs.PricePoint{}
		}
		out = append(out, spotPrices{InstanceType: t, Points: points, Caps: caps[t]})
	}
	return out, nil
}

// ownUse is tenant t's use of region, counted from the region's active jobs, beside its share
// (def where its record sets none).
func ownUse(region string, active []jobs.Job, t tenancy.Tenant, def tenancy.Quota) tenantStats {
	return tenantStats{Tenant: t.Name, Use: quotaOf(admission.Use(active, true)[t.Name]), Share: jobsAndGPUs(t.QuotaIn(region, def)),
		LongRunning: longRunningOf(active)[t.Name]}
}

// longRunningOf counts the long-running jobs among active, by tenant.
func longRunningOf(active []jobs.Job) map[string]int {
	out := map[string]int{}
	for _, j := range active {
		if j.LongRunning() {
			out[j.Tenant]++
		}
	}
	return out
}

// everyTenantsUse is, by tenant name, the use of region of each tenant that has jobs active there
// or a share set for it, beside its share. A job of a tenant no longer listed counts with the
// default share, as a drain counts it.
func everyTenantsUse(region string, active []jobs.Job, all []tenancy.Tenant, def tenancy.Quota) []tenantStats {
	use, long := admission.Use(active, true), longRunningOf(active)
	named := make(map[string]tenancy.Tenant, len(all))
	for _, t := range all {
		named[t.Name] = t
		if _, set := t.Quotas[region]; set {
			use[t.Name] = use[t.Name] // listed, even when idle
		}
	}
	out := make([]tenantStats, 0, len(use))
	for name, u := range use {
		out = append(out, tenantStats{Tenant: name, Use: quotaOf(u), Share: jobsAndGPUs(named[name].QuotaIn(region, def)), LongRunning: long[name]})
	}
	slices.SortFunc(out, func(x, y tenantStats) int { return strings.Compare(x.Tenant, y.Tenant) })
	return out
}

// quotaOf is an amount of a region in jobs and GPUs, as a quota of the older form spells it.
func quotaOf(a admission.Amount) tenancy.Quota { return tenancy.Quota{Jobs: a.Jobs, GPUs: a.GPUs} }

// jobsAndGPUs is q in the older form alone, as share has always shown it; a quota in resources
// shows under flavors.
func jobsAndGPUs(q tenancy.Quota) tenancy.Quota { return tenancy.Quota{Jobs: q.Jobs, GPUs: q.GPUs} }
