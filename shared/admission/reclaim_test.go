package admission

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/jobs"
)

// gpuRegion is one flavor of 8 GPUs, tenants A and B a nominal 4 each, and running their running
// jobs, each counted in InUse.
func gpuRegion(running ...Running) FlavorCapacity {
	c := FlavorCapacity{Resources: []string{"nvidia.com/gpu", "pods"},
		Flavors: []Flavor{{Name: "gpu", Capacity: Vec{8, 110}}},
		Quotas:  map[string]Quota{"A": {{Nominal: Vec{4, 50}}}, "B": {{Nominal: Vec{4, 50}}}},
		InUse:   map[string][]Vec{}}
	for _, j := range running {
		u := c.InUse[j.Tenant]
		if u == nil {
			u = []Vec{{0, 0}}
		}
		u[0] = Vec{u[0][0] + j.Demand[0], u[0][1] + j.Demand[1]}
		c.InUse[j.Tenant] = u
	}
	c.Reclaim = Reclaim{Running: running, Budget: 10, Now: t0.Add(time.Hour)}
	return c
}

// gpuJob is a running job of tenant on the gpu flavor holding gpus in one pod, started at minute.
func gpuJob(id, tenant string, gpus int64, minute int) Running {
	return Running{ID: id, Tenant: tenant, Flavor: "gpu", Demand: Vec{gpus, 1}, Priority: jobs.DefaultPriority,
		StartedAt: t0.Add(time.Duration(minute) * time.Minute)}
}

// gpuWaiting are queued jobs of tenant, each asking gpus in one pod, created after every running job.
func gpuWaiting(tenant string, gpus int64, prio int, ids ...string) ([]Candidate, []Need) {
	var cands []Candidate
	var needs []Need
	for i, id := range ids {
		cands = append(cands, Candidate{ID: id, Tenant: tenant, Priority: prio, CreatedAt: t0.Add(time.Duration(30+i) * time.Minute)})
		needs = append(needs, Need{Demand: Vec{gpus, 1}})
	}
	return cands, needs
}

// aBorrowing is A running four jobs of 2 GPUs, started a minute apart: 8 of 8, 4 of them borrowed.
func aBorrowing() []Running {
	return []Running{gpuJob("a1", "A", 2, 1), gpuJob("a2", "A", 2, 2), gpuJob("a3", "A", 2, 3), gpuJob("a4", "A", 2, 4)}
}

// TestReclaimTakesBorrowedRoomBack is the case: A holds all 8 GPUs, 4 of them borrowed; B,
// within its nominal 4, submits two jobs of 2. A's two most recent jobs are evicted for them, and
// B's jobs wait. Once the evictions are recorded, B's jobs are admitted and A's evicted ones,
// queued again in their place, wait.
func TestReclaimTakesBorrowedRoomBack(t *testing.T) {
	cands, needs := gpuWaiting("B", 2, jobs.DefaultPriority, "b1", "b2")
	d := DecideFlavors(cands, needs, gpuRegion(aBorrowing()...), nil)
	want := FlavorDecision{Admit: []Placed{},
		Waiting: []FlavorWait{{Wait: Wait{ID: "b1", Reason: ReasonPreempting, Position: 1}}, {Wait: Wait{ID: "b2", Reason: ReasonPreempting, Position: 2}}},
		Evict:   []Eviction{{ID: "a4", For: "b1", Reason: EvictReclaimed, Flavor: "gpu"}, {ID: "a3", For: "b2", Reason: EvictReclaimed, Flavor: "gpu"}}}
	if diff := cmp.Diff(want, d, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("first decision (-want +got):\n%s", diff)
	}

	requeued, rneeds := []Candidate{{ID: "a3", Tenant: "A", Priority: jobs.DefaultPriority, CreatedAt: t0.Add(-3 * time.Hour)},
		{ID: "a4", Tenant: "A", Priority: jobs.DefaultPriority, CreatedAt: t0.Add(-2 * time.Hour)}}, []Need{{Demand: Vec{2, 1}}, {Demand: Vec{2, 1}}}
	d = DecideFlavors(append(requeued, cands...), append(rneeds, needs...), gpuRegion(aBorrowing()[:2]...), nil)
	if diff := cmp.Diff([]Placed{{"b1", "gpu"}, {"b2", "gpu"}}, d.Admit); diff != "" || len(d.Evict) != 0 {
		t.Errorf("once they stopped: admitted (-want +got):\n%s\nevicted %v; want none", diff, d.Evict)
	}
	for _, w := range d.Waiting {
		if w.Reason != ReasonFlavorFull && w.Reason != ReasonTenantQuotaExhausted {
			t.Errorf("A's evicted job %s waits with %s; want it waiting for room", w.ID, w.Reason)
		}
	}
}

// TestReclaimLeavesRoomWithinNominal: tenants at equal standing, each within its nominal, or a
// waiting tenant over its own: nothing is evicted.
func TestReclaimLeavesRoomWithinNominal(t *testing.T) {
	even := []Running{gpuJob("a1", "A", 2, 1), gpuJob("a2", "A", 2, 2), gpuJob("b1", "B", 2, 3), gpuJob("b2", "B", 2, 4)}
	cands, needs := gpuWaiting("B", 2, jobs.MaxPriority, "b3")
	if d := DecideFlavors(cands, needs, gpuRegion(even...), nil); len(d.Evict) != 0 || d.Waiting[0].Reason == ReasonPreempting {
		t.Errorf("A and B at their nominal, B asking more: %+v; want nothing evicted", d)
	}
	cands, needs = gpuWaiting("A", 2, jobs.MaxPriority, "a3")
	if d := DecideFlavors(cands, needs, gpuRegion(even...), nil); len(d.Evict) != 0 {
		t.Errorf("A asking past its nominal: evicted %v; want none", d.Evict)
	}
	// A holds 6 (2 borrowed), B 2 and wants 2 more: A's most recent job is evicted, and only it,
	// since the next would take A under its nominal.
	c := gpuRegion(gpuJob("a1", "A", 2, 1), gpuJob("a2", "A", 2, 2), gpuJob("a3", "A", 2, 3), gpuJob("b1", "B", 2, 4))
	cands, needs = gpuWaiting("B", 2, jobs.DefaultPriority, "b2")
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 1 || d.Evict[0].ID != "a3" {
		t.Errorf("B within its nominal wanting 2 of A's borrowed 2: evicted %v; want a3 alone", d.Evict)
	}
	// A at its nominal, C borrowing 2 of B's: C's job is evicted, never A's, though A's share of
	// its nominal is the larger.
	c = gpuRegion(gpuJob("a1", "A", 2, 1), gpuJob("a2", "A", 2, 2), gpuJob("b1", "B", 2, 3), gpuJob("c1", "C", 2, 4))
	c.Quotas["C"] = Quota{{Nominal: Vec{0, 0}}}
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 1 || d.Evict[0].ID != "c1" {
		t.Errorf("A at its nominal, C borrowing: evicted %v; want c1", d.Evict)
	}
	// Nominal quotas past the region's room: A and C at theirs fill it, and B within its own waits
	// for room, evicting nobody.
	c = gpuRegion(gpuJob("a1", "A", 4, 1), gpuJob("c1", "C", 4, 2))
	c.Quotas["C"] = Quota{{Nominal: Vec{4, 50}}}
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 0 || d.Waiting[0].Reason != ReasonFlavorFull {
		t.Errorf("nominals past the room: %+v; want nothing evicted and b2 waiting for room", d)
	}
}

// TestReclaimLimits: the shield, the budget and an unknown price each keep a job from evicting.
func TestReclaimLimits(t *testing.T) {
	cands, needs := gpuWaiting("B", 2, jobs.DefaultPriority, "b1", "b2")
	shielded := aBorrowing()
	for i := range shielded {
		shielded[i].Shield, shielded[i].ShieldUntil = "B", t0.Add(2*time.Hour)
	}
	if d := DecideFlavors(cands, needs, gpuRegion(shielded...), nil); len(d.Evict) != 0 {
		t.Errorf("A's jobs shielded from B: evicted %v; want none", d.Evict)
	}
	expired := aBorrowing()
	for i := range expired {
		expired[i].Shield, expired[i].ShieldUntil = "B", t0.Add(time.Hour)
	}
	if d := DecideFlavors(cands, needs, gpuRegion(expired...), nil); len(d.Evict) != 2 {
		t.Errorf("A's jobs shielded until now: evicted %v; want two", d.Evict)
	}
	c := gpuRegion(aBorrowing()...)
	c.Reclaim.Budget = 1
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 1 || d.Evict[0].For != "b1" || d.Waiting[1].Reason == ReasonPreempting {
		t.Errorf("budget 1: %+v; want one evicted, for b1, and b2 waiting for room", d)
	}
	c.Reclaim.Budget = 0
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 0 {
		t.Errorf("budget 0: evicted %v; want none", d.Evict)
	}
	held, hneeds := gpuWaiting("B", 2, jobs.DefaultPriority, "capped")
	held[0].Spot = &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 1}
	if d := DecideFlavors(held, hneeds, gpuRegion(aBorrowing()...), nil); len(d.Evict) != 0 {
		t.Errorf("a job held by its price: evicted %v; want none", d.Evict)
	}
}

// TestReclaimOrder: the tenant furthest over its nominal first, then its lowest priority, and as
// few jobs as make room.
func TestReclaimOrder(t *testing.T) {
	// A holds 6 on no nominal, C 2: A is further over, so its most recent job goes, not C's.
	c := gpuRegion(gpuJob("a1", "A", 2, 1), gpuJob("a2", "A", 2, 2), gpuJob("a3", "A", 2, 3), gpuJob("c1", "C", 2, 4))
	c.Quotas["A"], c.Quotas["C"] = Quota{{Nominal: Vec{0, 0}}}, Quota{{Nominal: Vec{0, 0}}}
	cands, needs := gpuWaiting("B", 2, jobs.DefaultPriority, "b1")
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 1 || d.Evict[0].ID != "a3" {
		t.Errorf("A further over than C: evicted %v; want a3", d.Evict)
	}
	// A and C hold 4 each: A's job of lower priority goes, though C's started later.
	c = gpuRegion(gpuJob("a1", "A", 2, 1), gpuJob("a2", "A", 2, 2), gpuJob("c1", "C", 2, 3), gpuJob("c2", "C", 2, 4))
	c.Quotas["A"], c.Quotas["C"] = Quota{{Nominal: Vec{0, 0}}}, Quota{{Nominal: Vec{0, 0}}}
	c.Reclaim.Running[0].Priority = jobs.DefaultPriority - 10
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 1 || d.Evict[0].ID != "a1" {
		t.Errorf("A and C as far over, a1 of lower priority: evicted %v; want a1", d.Evict)
	}
	c = gpuRegion(gpuJob("big", "A", 4, 1), gpuJob("small", "A", 2, 2), gpuJob("a3", "A", 2, 3))
	cands, needs = gpuWaiting("B", 4, jobs.DefaultPriority, "b-four")
	c.Quotas["A"] = Quota{{Nominal: Vec{0, 0}}}
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 2 || d.Evict[0].ID != "a3" || d.Evict[1].ID != "small" {
		t.Errorf("B wanting 4 of A's 2+2+4, most recent first: evicted %v; want a3 and small", d.Evict)
	}
	c = gpuRegion(gpuJob("big", "A", 4, 3), gpuJob("small", "A", 2, 2), gpuJob("a1", "A", 2, 1))
	c.Quotas["A"] = Quota{{Nominal: Vec{0, 0}}}
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 1 || d.Evict[0].ID != "big" {
		t.Errorf("B wanting 4, A's most recent job holding 4: evicted %v; want big alone", d.Evict)
	}
	c = gpuRegion(gpuJob("small", "A", 2, 3), gpuJob("big", "A", 4, 2), gpuJob("a1", "A", 2, 1))
	c.Quotas["A"] = Quota{{Nominal: Vec{0, 0}}}
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 1 || d.Evict[0].ID != "big" {
		t.Errorf("B wanting 4, A's most recent holding 2 then one holding 4: evicted %v; want big alone (the fewest)", d.Evict)
	}
}

// TestReclaimWithinTenant: a tenant that opts in has its waiting job of higher priority evict its
// own of lower priority; one that does not, and jobs of equal priority, evict nothing.
func TestReclaimWithinTenant(t *testing.T) {
	running := []Running{gpuJob("a1", "A", 4, 1), gpuJob("b1", "B", 4, 2)}
	running[0].Priority = 10
	cands, needs := gpuWaiting("A", 4, 90, "urgent")
	c := gpuRegion(running...)
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 0 {
		t.Errorf("A not opted in: evicted %v; want none", d.Evict)
	}
	c.Reclaim.WithinTenant = map[string]bool{"A": true}
	d := DecideFlavors(cands, needs, c, nil)
	if diff := cmp.Diff([]Eviction{{ID: "a1", For: "urgent", Reason: EvictLowerPriority, Flavor: "gpu"}}, d.Evict); diff != "" {
		t.Errorf("A opted in (-want +got):\n%s", diff)
	}
	cands[0].Priority = 10
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 0 {
		t.Errorf("equal priority: evicted %v; want none", d.Evict)
	}
	c.Reclaim.WithinTenant = map[string]bool{"B": true}
	cands[0].Priority = 90
	if d := DecideFlavors(cands, needs, c, nil); len(d.Evict) != 0 {
		t.Errorf("B opted in, A's job waiting: evicted %v; want none", d.Evict)
	}
}

// TestBorrowing: a region whose tenants all hold at most their nominal quotas borrows nothing;
// one holding more of any resource borrows; without quotas nobody does.
func TestBorrowing(t *testing.T) {
	if c := gpuRegion(gpuJob("a1", "A", 4, 1), gpuJob("b1", "B", 2, 2)); c.Borrowing() {
		t.Errorf("A at its nominal, B under: Borrowing() = true")
	}
	if c := gpuRegion(aBorrowing()...); !c.Borrowing() {
		t.Errorf("A over its nominal: Borrowing() = false")
	}
	if c := gpuRegion(gpuJob("c1", "C", 1, 1)); !c.Borrowing() {
		t.Errorf("C with no quota of its own and a job running: Borrowing() = false")
	}
	c := gpuRegion(aBorrowing()...)
	c.Quotas = nil
	if c.Borrowing() {
		t.Errorf("no quotas: Borrowing() = true")
	}
}
