package httpapi

import (
	"math"
	"slices"
	"strings"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// flavorStats is one flavor of a region in the queue's stats: what it has, what the active jobs
// hold of it (their demand, on the flavor each was admitted on: the drain's own ledger), and the
// tenants' shares of it.
type flavorStats struct {
	Name       string            `json:"name"`
	NodeLabels map[string]string `json:"node_labels"`
	Capacity   map[string]string `json:"capacity"`
	InUse      map[string]string `json:"in_use"`
	Tenants    []flavorTenant    `json:"tenants"`
}

// flavorTenant is one tenant's share of a flavor, per resource: what its active jobs hold, its
// nominal quota, how far it is above that (borrowed), and how much of its unused nominal others
// may borrow now (lent).
type flavorTenant struct {
	Tenant   string            `json:"tenant"`
	InUse    map[string]string `json:"in_use"`
	Nominal  map[string]string `json:"nominal"`
	Borrowed map[string]string `json:"borrowed"`
	Lent     map[string]string `json:"lent"`
}

// flavorsOf is region's flavors with the active jobs' hold on them, and the shares of tenants:
// the caller's own, or every tenant's (all) for an operator. def is the default quota.
func flavorsOf(fr flavors.Region, region string, active []jobs.Job, own tenancy.Tenant, all []tenancy.Tenant, def tenancy.Quota) []flavorStats {
	use := map[string][]admission.Vec{}
	var total []admission.Vec
	for _, j := range active {
		use[j.Tenant] = fr.Use(use[j.Tenant], j)
		total = fr.Use(total, j)
	}
	tenants := []tenancy.Tenant{own}
	if all != nil {
		tenants = nil
		named := map[string]bool{}
		for _, t := range all {
			_, set := t.Quotas[region]
			if _, active := use[t.Name]; active || set {
				tenants, named[t.Name] = append(tenants, t), true
			}
		}
		for name := range use {
			if !named[name] {
				tenants = append(tenants, tenancy.Tenant{Name: name}) // no record now: the default
			}
		}
		slices.SortFunc(tenants, func(a, b tenancy.Tenant) int { return strings.Compare(a.Name, b.Name) })
	}
	out := make([]flavorStats, len(fr.Flavors))
	for f, fl := range fr.Flavors {
		labels := fr.Labels[f]
		if labels == nil {
			labels = map[string]string{}
		}
		out[f] = flavorStats{Name: fl.Name, NodeLabels: labels, Capacity: quantities(fr, fl.Capacity), InUse: quantities(fr, at(total, f)),
			Tenants: make([]flavorTenant, 0, len(tenants))}
		for _, t := range tenants {
			u := at(use[t.Name], f)
			var q admission.FlavorQuota
			if aq := fr.Quota(t.QuotaIn(region, def)); f < len(aq) {
				q = aq[f]
			}
			borrowed, lent := make(admission.Vec, len(fr.Resources)), make(admission.Vec, len(fr.Resources))
			for i := range fr.Resources {
				nominal, used := vecAt(q.Nominal, i), vecAt(u, i)
				borrowed[i] = max(used-nominal, 0)
				lent[i] = min(max(nominal-used, 0), limitAt(q.LendingLimit, i))
			}
			out[f].Tenants = append(out[f].Tenants, flavorTenant{Tenant: t.Name, InUse: quantities(fr, u), Nominal: quantities(fr, q.Nominal),
				Borrowed: quantities(fr, borrowed), Lent: quantities(fr, lent)})
		}
	}
	return out
}

// quantities is v as Kubernetes writes each resource of fr, every resource listed.
func quantities(fr flavors.Region, v admission.Vec) map[string]string {
	out := make(map[string]string, len(fr.Resources))
	for i, name := range fr.Resources {
		out[name] = fr.Quantity(i, vecAt(v, i))
	}
	return out
}

func at(vs []admission.Vec, f int) admission.Vec {
	if f < len(vs) {
		return vs[f]
	}
	return nil
}

func vecAt(v admission.Vec, i int) int64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// limitAt is a lending limit's i-th amount: all (unlimited) where none is set.
func limitAt(v admission.Vec, i int) int64 {
	if v == nil {
		return math.MaxInt64
	}
	return vecAt(v, i)
}
