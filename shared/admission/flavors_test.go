package admission

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// The resources of these tests: cpu in millicores, memory in MiB, GPUs, pods.
var testResources = []string{"cpu", "memory", "nvidia.com/gpu", "pods"}

// spotAndOnDemand is a region of an 8-CPU spot flavor without GPUs and a 4-CPU on-demand flavor
// with 4 GPUs.
func spotAndOnDemand() FlavorCapacity {
	return FlavorCapacity{Resources: testResources, Flavors: []Flavor{
		{Name: "spot", Capacity: Vec{8000, 32768, 0, 110}},
		{Name: "on-demand", Capacity: Vec{4000, 16384, 4, 110}},
	}}
}

// fjob is a candidate of tenant asking cpu millicores and gpus in one pod, created at minute i.
type fjob struct {
	id, tenant string
	prio       int
	cpu, gpus  int64
	flavor     string
	spot       *jobs.Spot
}

func flavorInput(js []fjob) ([]Candidate, []Need) {
	cands, needs := make([]Candidate, len(js)), make([]Need, len(js))
	for i, j := range js {
		prio := j.prio
		if prio == 0 {
			prio = jobs.DefaultPriority
		}
		cands[i] = Candidate{ID: j.id, Tenant: j.tenant, Priority: prio, CreatedAt: t0.Add(time.Duration(i) * time.Minute), Spot: j.spot}
		needs[i] = Need{Demand: Vec{j.cpu, 256, j.gpus, 1}, Flavor: j.flavor}
	}
	return cands, needs
}

func TestDecideFlavors(t *testing.T) {
	prices := map[string]spotgate.Observation{"g5.xlarge": {Price: 0.9, Known: true}}
	tests := []struct {
		name string
		js   []fjob
		cap  func(FlavorCapacity) FlavorCapacity
		want FlavorDecision
	}{
		{
			name: "the first flavor it fits, in the operator's order",
			js:   []fjob{{id: "a", cpu: 1000}, {id: "gpu", cpu: 1000, gpus: 2}},
			want: FlavorDecision{Admit: []Placed{{"a", "spot"}, {"gpu", "on-demand"}}, Waiting: []FlavorWait{}},
		},
		{
			name: "a full flavor sends the next job to the next flavor",
			js:   []fjob{{id: "big", cpu: 7000}, {id: "next", cpu: 2000}, {id: "last", cpu: 3000}},
			want: FlavorDecision{Admit: []Placed{{"big", "spot"}, {"next", "on-demand"}},
				Waiting: []FlavorWait{{Wait{ID: "last", Reason: ReasonFlavorFull, Position: 1}, "cpu"}}},
		},
		{
			name: "all or nothing: never split over flavors",
			js:   []fjob{{id: "a", cpu: 6000}, {id: "b", cpu: 3000}, {id: "split", cpu: 3000}},
			want: FlavorDecision{Admit: []Placed{{"a", "spot"}, {"b", "on-demand"}},
				Waiting: []FlavorWait{{Wait{ID: "split", Reason: ReasonFlavorFull, Position: 1}, "cpu"}}},
		},
		{
			name: "200 pods of 100m need 20 CPUs: larger than every flavor, and blocks nobody",
			js:   []fjob{{id: "wide", cpu: 20000}, {id: "small", cpu: 500}},
			want: FlavorDecision{Admit: []Placed{{"small", "spot"}},
				Waiting: []FlavorWait{{Wait{ID: "wide", Reason: ReasonLargerThanFlavors, Position: 1}, "cpu"}}},
		},
		{
			name: "the flavor a node selector names, and one the region lacks",
			js:   []fjob{{id: "named", cpu: 1000, flavor: "on-demand"}, {id: "lost", cpu: 1000, flavor: "gpu-a100"}},
			want: FlavorDecision{Admit: []Placed{{"named", "on-demand"}},
				Waiting: []FlavorWait{{Wait: Wait{ID: "lost", Reason: ReasonNoSuchFlavor, Position: 1}}}},
		},
		{
			name: "a job held by its price takes no room",
			js: []fjob{{id: "held", prio: 90, cpu: 8000, spot: &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.5}},
				{id: "free", cpu: 8000}},
			want: FlavorDecision{Admit: []Placed{{"free", "spot"}},
				Waiting: []FlavorWait{{Wait: Wait{ID: "held", Reason: ReasonSpotPriceAboveCap, Position: 1}}}},
		},
		{
			name: "behind a higher priority waiting for room",
			js:   []fjob{{id: "fill", prio: 99, cpu: 8000}, {id: "high", prio: 80, cpu: 5000}, {id: "low", prio: 10, cpu: 5000}},
			want: FlavorDecision{Admit: []Placed{{"fill", "spot"}},
				Waiting: []FlavorWait{{Wait{ID: "high", Reason: ReasonFlavorFull, Position: 1}, "cpu"},
					{Wait{ID: "low", Reason: ReasonQueuedBehindHigherPriority, Position: 2}, "cpu"}}},
		},
		{
			name: "in use is not free",
			js:   []fjob{{id: "a", cpu: 3000}},
			cap: func(c FlavorCapacity) FlavorCapacity {
				c.InUse = map[string][]Vec{"other": {{6000, 0, 0, 3}, {2000, 0, 0, 1}}}
				return c
			},
			want: FlavorDecision{Waiting: []FlavorWait{{Wait{ID: "a", Reason: ReasonFlavorFull, Position: 1}, "cpu"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := spotAndOnDemand()
			if tt.cap != nil {
				c = tt.cap(c)
			}
			cands, needs := flavorInput(tt.js)
			got := DecideFlavors(cands, needs, c, prices)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("DecideFlavors (-want +got):\n%s", diff)
			}
		})
	}
}

// halves gives tenants a and b half the spot flavor's CPUs each, with limits set by lim.
func halves(lim func(q *FlavorQuota, tenant string)) FlavorCapacity {
	c := spotAndOnDemand()
	c.Quotas = map[string]Quota{}
	for _, name := range []string{"a", "b"} {
		q := FlavorQuota{Nominal: Vec{4000, 16384, 0, 55}}
		if lim != nil {
			lim(&q, name)
		}
		c.Quotas[name] = Quota{q}
	}
	return c
}

func TestDecideFlavorsQuotas(t *testing.T) {
	onSpot := func(js []fjob) []fjob {
		for i := range js {
			js[i].flavor = "spot"
		}
		return js
	}
	tests := []struct {
		name string
		js   []fjob
		cap  FlavorCapacity
		want FlavorDecision
	}{
		{
			name: "fair order by dominant share, then borrowing what the other leaves",
			js:   onSpot([]fjob{{id: "a1", tenant: "a", cpu: 2000}, {id: "a2", tenant: "a", cpu: 2000}, {id: "a3", tenant: "a", cpu: 2000}, {id: "b1", tenant: "b", cpu: 2000}}),
			cap:  halves(nil),
			want: FlavorDecision{Admit: []Placed{{"a1", "spot"}, {"b1", "spot"}, {"a2", "spot"}, {"a3", "spot"}}, Waiting: []FlavorWait{}},
		},
		{
			name: "nothing lent, nothing borrowed",
			js:   onSpot([]fjob{{id: "a1", tenant: "a", cpu: 2000}, {id: "a2", tenant: "a", cpu: 2000}, {id: "a3", tenant: "a", cpu: 2000}, {id: "b1", tenant: "b", cpu: 2000}}),
			cap: halves(func(q *FlavorQuota, tenant string) {
				if tenant == "b" {
					q.LendingLimit = Vec{0, 16384, 0, 55}
				}
			}),
			want: FlavorDecision{Admit: []Placed{{"a1", "spot"}, {"b1", "spot"}, {"a2", "spot"}},
				Waiting: []FlavorWait{{Wait{ID: "a3", Reason: ReasonTenantQuotaExhausted, Position: 1}, "cpu"}}},
		},
		{
			name: "a borrowing limit",
			js:   onSpot([]fjob{{id: "a1", tenant: "a", cpu: 4000}, {id: "a2", tenant: "a", cpu: 2000}, {id: "a3", tenant: "a", cpu: 1000}}),
			cap: halves(func(q *FlavorQuota, tenant string) {
				q.BorrowingLimit = Vec{1000, 0, 0, 10}
			}),
			want: FlavorDecision{Admit: []Placed{{"a1", "spot"}, {"a3", "spot"}},
				Waiting: []FlavorWait{{Wait{ID: "a2", Reason: ReasonTenantQuotaExhausted, Position: 1}, "cpu"}}},
		},
		{
			name: "a job within its nominal quota keeps its room from borrowers",
			js:   onSpot([]fjob{{id: "b1", tenant: "b", cpu: 4000}, {id: "a1", tenant: "a", cpu: 1000}}),
			cap: func() FlavorCapacity {
				c := halves(nil)
				c.InUse = map[string][]Vec{"a": {{6000, 0, 0, 3}}}
				return c
			}(),
			want: FlavorDecision{Waiting: []FlavorWait{
				{Wait{ID: "b1", Reason: ReasonFlavorFull, Position: 1}, "cpu"},
				{Wait{ID: "a1", Reason: ReasonTenantQuotaExhausted, Position: 2}, "cpu"}}},
		},
		{
			name: "quotas above the flavor: the room a nominal job waits for is kept from a borrower the quotas allow",
			js:   onSpot([]fjob{{id: "b1", tenant: "b", cpu: 4000}, {id: "a1", tenant: "a", cpu: 1000}}),
			cap: func() FlavorCapacity {
				c := halves(func(q *FlavorQuota, _ string) { q.Nominal[0] = 6000 })
				c.InUse = map[string][]Vec{"a": {{6000, 0, 0, 3}}}
				return c
			}(),
			want: FlavorDecision{Waiting: []FlavorWait{
				{Wait{ID: "b1", Reason: ReasonFlavorFull, Position: 1}, "cpu"},
				{Wait{ID: "a1", Reason: ReasonTenantQuotaExhausted, Position: 2}, "cpu"}}},
		},
		{
			name: "a tenant without a quota borrows what the others lend",
			js:   onSpot([]fjob{{id: "c1", tenant: "c", cpu: 3000}, {id: "c2", tenant: "c", cpu: 6000}}),
			cap:  halves(nil),
			want: FlavorDecision{Admit: []Placed{{"c1", "spot"}},
				Waiting: []FlavorWait{{Wait{ID: "c2", Reason: ReasonFlavorFull, Position: 1}, "cpu"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cands, needs := flavorInput(tt.js)
			got := DecideFlavors(cands, needs, tt.cap, nil)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("DecideFlavors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideFlavorsWithin(t *testing.T) {
	js := []fjob{{id: "spot-only", cpu: 5000}, {id: "od-only", cpu: 1000}, {id: "none", cpu: 100}, {id: "too-big-where-allowed", cpu: 6000}}
	cands, needs := flavorInput(js)
	needs[0].Within = Restricted | 1    // spot
	needs[1].Within = Restricted | 1<<1 // on-demand
	needs[2].Within = Restricted        // agrees with no flavor
	needs[3].Within = Restricted | 1<<1 // 6 CPUs where only 4 are
	got := DecideFlavors(cands, needs, spotAndOnDemand(), nil)
	want := FlavorDecision{Admit: []Placed{{"spot-only", "spot"}, {"od-only", "on-demand"}}, Waiting: []FlavorWait{
		{Wait{ID: "none", Reason: ReasonNoSuchFlavor, Position: 1}, ""},
		{Wait{ID: "too-big-where-allowed", Reason: ReasonLargerThanFlavors, Position: 2}, "cpu"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecideFlavors (-want +got):\n%s", diff)
	}
}

func TestDecideFlavorsLongRunningLimit(t *testing.T) {
	js := []fjob{{id: "web-1", tenant: "a", cpu: 100}, {id: "web-2", tenant: "a", cpu: 100}, {id: "batch", tenant: "a", cpu: 100}, {id: "other", tenant: "b", cpu: 100}}
	cands, needs := flavorInput(js)
	for _, i := range []int{0, 1, 3} {
		cands[i].Slotless = true
	}
	c := spotAndOnDemand()
	c.MaxLongRunning, c.LongRunningInUse = 2, map[string]int{"a": 1}
	got := DecideFlavors(cands, needs, c, nil)
	want := FlavorDecision{Admit: []Placed{{"web-1", "spot"}, {"batch", "spot"}, {"other", "spot"}}, Waiting: []FlavorWait{
		{Wait{ID: "web-2", Reason: ReasonSlotlessLimit, Position: 1}, ""},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecideFlavors (-want +got):\n%s", diff)
	}
	// Under quotas b, holding nothing, stands first; a's limit holds all the same.
	c.Quotas = map[string]Quota{"a": {{Nominal: Vec{8000, 32768, 0, 110}}}}
	want.Admit = []Placed{{"other", "spot"}, {"web-1", "spot"}, {"batch", "spot"}}
	if diff := cmp.Diff(want, DecideFlavors(cands, needs, c, nil)); diff != "" {
		t.Errorf("DecideFlavors under quotas (-want +got):\n%s", diff)
	}
}
