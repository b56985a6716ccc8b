package admission

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// Admission in resources is held to today's admission of the same queue under quotas (≤ 1.5×)
// and to linearity (t(200k)/t(100k) ≤ 2.3): 100,000 and 200,000 queued jobs of 50 tenants, four
// resources and three flavors. Each benchmark measures its floor in the same run, round by round,
// and reports the ratio of the fastest rounds (fastestRatio).

// benchNeeds is a need a job of q: half of them a pod of 0.5–4 CPUs, the rest a few pods, a GPU
// or more for those benchQueue gives GPUs, one in ten naming a flavor.
func benchNeeds(q []Candidate) []Need {
	r := rand.New(rand.NewPCG(uint64(len(q)), 7))
	flavors := []string{"spot", "on-demand", "a100"}
	needs := make([]Need, len(q))
	for i := range q {
		pods := int64(1 + r.IntN(4))
		needs[i] = Need{Demand: Vec{pods * int64(500*(1+r.IntN(8))), pods << 30, q[i].GPUs, pods}}
		if r.IntN(10) == 0 {
			needs[i].Flavor = flavors[r.IntN(len(flavors))]
		}
	}
	return needs
}

// benchFlavorCapacity is three flavors of a busy region, each tenant a nominal share of each, half
// of them named, with what is active spread over them.
func benchFlavorCapacity() FlavorCapacity {
	c := FlavorCapacity{Resources: testResources, Flavors: []Flavor{
		{Name: "spot", Capacity: Vec{800_000, 3200 << 30, 0, 2000}},
		{Name: "on-demand", Capacity: Vec{400_000, 1600 << 30, 0, 1000}},
		{Name: "a100", Capacity: Vec{384_000, 4608 << 30, 2000, 500}},
	}}
	c.Quotas, c.InUse = map[string]Quota{}, map[string][]Vec{}
	share := Quota{
		{Nominal: Vec{16_000, 64 << 30, 0, 40}},
		{Nominal: Vec{8_000, 32 << 30, 0, 20}, LendingLimit: Vec{4_000, 16 << 30, 0, 10}},
		{Nominal: Vec{7_680, 92 << 30, 40, 10}, BorrowingLimit: Vec{7_680, 92 << 30, 40, 10}},
	}
	c.DefaultQuota = share
	for i, name := range benchTenantNames {
		if i%2 == 0 {
			c.Quotas[name] = share
		}
		c.InUse[name] = []Vec{{8_000, 32 << 30, 0, 20}, {2_000, 8 << 30, 0, 4}, {4_000, 40 << 30, 14, 4}}
	}
	return c
}

func BenchmarkFlavors100k(b *testing.B) {
	q := benchQuotaQueue(100_000)
	needs, c, floor := benchNeeds(q), benchFlavorCapacity(), benchQuotaCapacity()
	ratio := fastestRatio(b, func() { DecideFlavors(q, needs, c, benchPrices) }, func() { Decide(q, floor, benchPrices) })
	b.ReportMetric(ratio, "x-decide")
}

func BenchmarkFlavors200k(b *testing.B) {
	large, small, c := benchQuotaQueue(200_000), benchQuotaQueue(100_000), benchFlavorCapacity()
	ln, sn := benchNeeds(large), benchNeeds(small)
	ratio := fastestRatio(b, func() { DecideFlavors(large, ln, c, benchPrices) }, func() { DecideFlavors(small, sn, c, benchPrices) })
	b.ReportMetric(ratio, "t200k/t100k")
}

// BenchmarkFlavorsSameWork100k holds DecideFlavors to Decide on Decide's own work: one flavor of
// the region's job slots and GPUs, each job one pod and its GPUs, the same quotas. What
// BenchmarkFlavors100k costs beyond this ratio is the work of more flavors and resources.
func BenchmarkFlavorsSameWork100k(b *testing.B) {
	q := benchQuotaQueue(100_000)
	floor := benchQuotaCapacity()
	needs := make([]Need, len(q))
	for i := range q {
		needs[i] = Need{Demand: Vec{1, q[i].GPUs}}
	}
	c := FlavorCapacity{Resources: []string{"pods", "nvidia.com/gpu"}, InUse: map[string][]Vec{}, Quotas: map[string]Quota{},
		Flavors: []Flavor{{Name: "default", Capacity: Vec{int64(floor.MaxActive), floor.MaxGPUs}}}}
	for name, a := range floor.Shares {
		c.Quotas[name] = Quota{{Nominal: Vec{int64(a.Jobs), a.GPUs}}}
	}
	c.DefaultQuota = Quota{{Nominal: Vec{int64(floor.DefaultShare.Jobs), floor.DefaultShare.GPUs}}}
	for name, a := range floor.InUse {
		c.InUse[name] = []Vec{{int64(a.Jobs), a.GPUs}}
	}
	ratio := fastestRatio(b, func() { DecideFlavors(q, needs, c, benchPrices) }, func() { Decide(q, floor, benchPrices) })
	b.ReportMetric(ratio, "x-decide")
}

// BenchmarkReclaim100k holds DecideFlavors with reclaim to the same decision without it (≤ 1.3×):
// benchQuotaQueue's 100,000 jobs in a region of three flavors filled by 10,000 running jobs, one
// pod each: half the 50 tenants run 100, within their nominal quotas, the others 300, a third of
// them borrowed; the budget is a minute's evictions. The floor is the same decision, the same use,
// with no running jobs listed.
func BenchmarkReclaim100k(b *testing.B) {
	q := benchQuotaQueue(100_000)
	needs, c := benchNeeds(q), benchReclaimCapacity()
	floor := c
	floor.Reclaim = Reclaim{}
	if d := DecideFlavors(q, needs, c, benchPrices); len(d.Evict) != c.Reclaim.Budget {
		b.Fatalf("the reclaim benchmark's decision evicts %d, not its budget's %d: it would not measure reclaim", len(d.Evict), c.Reclaim.Budget)
	}
	ratio := fastestRatio(b, func() { DecideFlavors(q, needs, c, benchPrices) }, func() { DecideFlavors(q, needs, floor, benchPrices) })
	b.ReportMetric(ratio, "x-no-reclaim")
}

// benchReclaimCapacity is BenchmarkReclaim100k's region.
func benchReclaimCapacity() FlavorCapacity {
	const perFlavor = 3334 // pods: the 10,000 running fill the region
	c := FlavorCapacity{Resources: testResources, Quotas: map[string]Quota{}, InUse: map[string][]Vec{},
		Reclaim: Reclaim{Budget: 10, Now: t0.Add(2 * time.Hour)}}
	for _, name := range []string{"spot", "on-demand", "a100"} {
		fl := Flavor{Name: name, Capacity: Vec{10_000_000, 10_000 << 30, 0, perFlavor}}
		if name == "a100" {
			fl.Capacity[2] = perFlavor
		}
		c.Flavors = append(c.Flavors, fl)
	}
	var share Quota
	for _, fl := range c.Flavors {
		share = append(share, FlavorQuota{Nominal: Vec{fl.Capacity[0] / 50, fl.Capacity[1] / 50, fl.Capacity[2] / 50, perFlavor / 50}})
	}
	c.DefaultQuota = share
	r := rand.New(rand.NewPCG(10_000, 31))
	for i, name := range benchTenantNames {
		use := []Vec{make(Vec, 4), make(Vec, 4), make(Vec, 4)}
		jobs := 100 + 200*(i%2)
		for n := range jobs {
			f := n % 3
			d := Vec{500, 1 << 30, 0, 1}
			if f == 2 {
				d[2] = 1
			}
			for k := range d {
				use[f][k] += d[k]
			}
			c.Reclaim.Running = append(c.Reclaim.Running, Running{ID: fmt.Sprintf("%s-run-%03d", name, n), Tenant: name,
				Flavor: c.Flavors[f].Name, Demand: d, Priority: r.IntN(101), StartedAt: t0.Add(time.Duration(r.IntN(3600)) * time.Second)})
		}
		c.InUse[name] = use
	}
	return c
}
