package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// tenantStats is one tenant's use of a region beside its share: its active jobs and their GPUs.
type tenantStats struct {
	Tenant string        `json:"tenant"`
	Use    tenancy.Quota `json:"use"`
	Share  tenancy.Quota `json:"share"`
}

// queueStats is GET /api/v1/queue/stats: per region, the caller's live jobs by status, how many
// are held by their spot cap, the region's capacity in use, and tenants' use of the region beside
// their shares: the caller's own tenant's, or, for an admin, every tenant's that has jobs active
// there or a share set for it. No other role sees another tenant's figures.
func (a *api) queueStats(w http.ResponseWriter, r *http.Request) error {
	tenant := principalOf(r.Context()).Tenant
	type regionStats struct {
		Region        string         `json:"region"`
		Counts        map[string]int `json:"counts"`
		Gated         int            `json:"gated"`
		CapacityLimit int            `json:"capacity_limit"`
		CapacityInUse int            `json:"capacity_in_use"`
		Tenants       []tenantStats  `json:"tenants"`
	}
	var all []tenancy.Tenant // every tenant, read once for an admin; nil for anyone else
	if tenant.Role == tenancy.RoleAdmin {
		var err error
		if all, err = a.principals.Tenants(r.Context()); err != nil {
			return err
		}
	}
	var out []regionStats
	for _, region := range a.regions {
		queued, err := a.jobs.Queued(r.Context(), region)
		if err != nil {
			return err
		}
		active, err := a.jobs.Active(r.Context(), region)
		if err != nil {
			return err
		}
		st := regionStats{Region: region, Counts: map[string]int{}, CapacityInUse: len(active)}
		if all != nil {
			st.Tenants = everyTenantsUse(region, active, all, a.quota)
		} else {
			st.Tenants = []tenantStats{ownUse(region, active, tenant, a.quota)}
		}
		if a.capacity != nil {
			st.CapacityLimit = a.capacity(region)
		}
		for _, j := range append(queued, active...) {
			if !tenant.Allows(j.Namespace) {
				continue
			}
			st.Counts[string(j.Status)]++
			if j.PendingReason == "spot_price_above_cap" || j.PendingReason == "spot_price_unknown" {
				st.Gated++
			}
		}
		out = append(out, st)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"regions": out})
}

// ownUse is tenant t's use of region, counted from the region's active jobs, beside its share
// (def where its record sets none).
func ownUse(region string, active []jobs.Job, t tenancy.Tenant, def tenancy.Quota) tenantStats {
	return tenantStats{Tenant: t.Name, Use: tenancy.Quota(admission.Use(active)[t.Name]), Share: t.QuotaIn(region, def)}
}

// everyTenantsUse is, by tenant name, the use of region of each tenant that has jobs active there
// or a share set for it, beside its share. A job of a tenant no longer listed counts with the
// default share, as a drain counts it.
func everyTenantsUse(region string, active []jobs.Job, all []tenancy.Tenant, def tenancy.Quota) []tenantStats {
	use := admission.Use(active)
	named := make(map[string]tenancy.Tenant, len(all))
	for _, t := range all {
		named[t.Name] = t
		if _, set := t.Quotas[region]; set {
			use[t.Name] = use[t.Name] // listed, even when idle
		}
	}
	out := make([]tenantStats, 0, len(use))
	for name, u := range use {
		out = append(out, tenantStats{Tenant: name, Use: tenancy.Quota(u), Share: named[name].QuotaIn(region, def)})
	}
	slices.SortFunc(out, func(x, y tenantStats) int { return strings.Compare(x.Tenant, y.Tenant) })
	return out
}
