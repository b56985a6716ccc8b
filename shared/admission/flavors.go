package admission

import (
	"fmt"
	"math"

	"github.com/tidegate/tidegate/shared/spotgate"
)

// Admission counted in resources, as Kueue counts a ClusterQueue's and AWS Batch a compute
// environment's: a region's room is a list of flavors (spot or on-demand, an instance family, a
// GPU model), each a quantity per resource, and a job's demand is what every pod of it that can
// run at once requests. A job is admitted only when all of its demand fits one flavor (all or
// nothing); it runs on the flavor its node selector names, else on the first in the operator's
// order where it fits.
//
// Tenants share the flavors as ClusterQueues share a cohort: each has a nominal quota per flavor
// and resource, may borrow what the others leave unused up to its borrowing limit, and lends of
// its unused nominal up to its lending limit. A job that fits its tenant's nominal quota is never
// kept waiting by a borrower: the walk admits every such job first, and keeps the room of those it
// cannot place yet from the borrowers after them. Nothing running is preempted here.

// Vec is an amount of each of FlavorCapacity.Resources, in their order and in their units (milli
// for cpu, bytes for memory and storage, a count for pods and GPUs).
type Vec []int64

// Flavor is one kind of node a region runs jobs on, and how much of each resource it has.
type Flavor struct {
	Name     string
	Capacity Vec
}

// FlavorQuota is a tenant's share of one flavor.
type FlavorQuota struct {
	// Nominal is what the tenant is sure of.
	Nominal Vec
	// BorrowingLimit is how far above Nominal the tenant may go, per resource; nil is no limit.
	BorrowingLimit Vec
	// LendingLimit is how much of its unused Nominal others may borrow, per resource; nil is all.
	LendingLimit Vec
}

// Quota is a tenant's share of each flavor, in FlavorCapacity.Flavors' order; a flavor past its
// end is one the tenant has no nominal share of (it may still borrow there).
type Quota []FlavorQuota

// FlavorCapacity is a region's room in resources, and what its active jobs hold of it.
type FlavorCapacity struct {
	// Resources name what each Vec counts, e.g. cpu, memory, nvidia.com/gpu, pods.
	Resources []string
	// Flavors are in the operator's order: a job that names none runs on the first it fits.
	Flavors []Flavor
	// Quotas are the tenants' shares, by tenant name; a tenant not named has DefaultQuota. With
	// neither, tenants do not share by quotas, and jobs take whatever room is free.
	Quotas       map[string]Quota
	DefaultQuota Quota
	// InUse is what each tenant's active jobs hold of each flavor, by tenant name, then flavor in
	// Flavors' order.
	InUse map[string][]Vec

	// MaxLongRunning is how many long-running jobs (Candidate.Slotless) each tenant may have
	// active in the region at once, LongRunningInUse how many each has. One over it waits with
	// ReasonSlotlessLimit, blocking nobody. As in Decide, 0 admits none; a region that lists no
	// flavor admits nothing at all.
	MaxLongRunning   int
	LongRunningInUse map[string]int

	// Reclaim has the region's running jobs, for taking borrowed room back (reclaim.go).
	Reclaim Reclaim
}

func (c FlavorCapacity) quotas() bool { return c.Quotas != nil || c.DefaultQuota != nil }

// Need is what one candidate asks of the region.
type Need struct {
	// Demand is its pods' requests, per resource, in FlavorCapacity.Resources' order.
	Demand Vec
	// Flavor is the flavor its node selector names; "" is any.
	Flavor string
	// Within, when it has the Restricted bit, is the set of flavors it may run on besides: bit f
	// for Flavors[f] (those whose node labels its node selector agrees with). Restricted alone is
	// none of them. Zero is any.
	Within uint64
}

// Restricted marks a Need.Within that restricts; flavors are bits 0 to MaxFlavors-1.
const Restricted uint64 = 1 << 63

// May says whether the need may run on flavor f (the f-th of the region's): it names no set of
// flavors, or f is in it.
func (n Need) May(f int) bool { return n.Within&Restricted == 0 || n.Within&(1<<f) != 0 }

// MaxFlavors is how many flavors a region may have: one bit each of a Need.Within.
const MaxFlavors = 63

// Reasons a job waits for room, under flavors.
const (
	// ReasonFlavorFull: no flavor the job may run on has all of its demand free now.
	ReasonFlavorFull Reason = "flavor_full"
	// ReasonLargerThanFlavors: the job's demand is more than the whole of every flavor it may run
	// on: it cannot run in the region as configured.
	ReasonLargerThanFlavors Reason = "larger_than_every_flavor"
	// ReasonNoSuchFlavor: the flavor the job's node selector names is not one of the region's.
	ReasonNoSuchFlavor Reason = "no_such_flavor"
)

// Placed is one job admitted, and the flavor it runs on.
type Placed struct {
	ID     string
	Flavor string
}

// FlavorWait is one job DecideFlavors does not admit now.
type FlavorWait struct {
	Wait
	// Resource names the resource it lacks, where it waits for room or quota.
	Resource string
}

// FlavorDecision is what DecideFlavors says for one region at one moment.
type FlavorDecision struct {
	Admit   []Placed     // in dispatch order
	Waiting []FlavorWait // every other candidate, in dispatch order
	// Evict are the running jobs to evict to make room for waiting ones (reclaim.go), in the
	// waiting jobs' dispatch order.
	Evict []Eviction
}

// DecideFlavors says which candidates to dispatch now, on which flavor, and why each other one
// waits; needs[i] is what candidates[i] asks. It touches nothing.
//
// Candidates are ordered as Decide orders them, and under quotas each run of equal priority is
// ordered fairly by dominant resource share (DRF): a job's standing is its tenant's largest share
// of any resource, counting its active jobs and its jobs ahead of this one, against its nominal
// quota (against the region's whole under no quota); the lowest standing goes first. Then:
//
//   - A job held by its price cap waits as in Decide, taking no room.
//   - Under quotas, the jobs that fit their tenant's nominal quota of a flavor they may run on go
//     first: each is admitted on the first such flavor with all its demand free; one that is not
//     keeps its demand of the first such flavor from the borrowers after it.
//   - Then every other job: admitted on the first flavor it may run on with all its demand free
//     (less what is kept), within its tenant's borrowing limit and the unused nominal the other
//     tenants lend.
//
// A job that does not fit waits and blocks nobody behind it. Its reason names the first resource
// it lacks: ReasonLargerThanFlavors, ReasonTenantQuotaExhausted, or ReasonFlavorFull (and
// ReasonQueuedBehindHigherPriority behind a higher priority waiting for room).
func DecideFlavors(candidates []Candidate, needs []Need, c FlavorCapacity, prices map[string]spotgate.Observation) FlavorDecision {
	if len(needs) != len(candidates) {
		panic(fmt.Sprintf("admission: %d needs for %d candidates; give each candidate its need", len(needs), len(candidates)))
	}
	order, l := dispatchOrder(candidates, prices)
	s := newFlavorState(c, candidates, needs)
	if c.quotas() {
		s.fairOrder(order, l)
	}
	s.place(order, l)
	evict := s.reclaim(order, l, candidates)
	return s.decision(order, l, candidates, evict)
}

// unlimited stands for a limit that is not set.
const unlimited = math.MaxInt64

// flavorState is one decision's arithmetic, in flat slices: [f*R+r] for a flavor's resource,
// [(t*F+f)*R+r] for a tenant's.
type flavorState struct {
	c           FlavorCapacity
	r, f        int
	quotas      bool
	needs       []Need
	of          []int32          // each candidate's tenant
	ids         map[string]int32 // each tenant's number, by name
	named       []int32          // the flavor each candidate names, from 1; 0 for any, -1 for none of these
	free        []int64          // capacity less use, then less what the walk admits
	kept        []int64          // room kept for jobs within their nominal quota
	use         []int64          // by tenant
	nominal     []int64
	borrowLimit []int64
	lendLimit   []int64
	lent        []int64 // the unused nominal each flavor's tenants lend, in all
	borrowed    []int64 // what each flavor's tenants use above their nominal quotas, in all
	weight      []int64 // by tenant and resource: what its standing is a share of
	// placed is each candidate's flavor once admitted (from 1), or its verdict once judged.
	placed []int32
	keptOn []int32 // the flavor kept for each kept job, when reclaiming
	short  []int32 // the resource a waiting job lacks, from 1
	why    []why
	long   slotless // the long-running jobs' limit per tenant
}

func newFlavorState(c FlavorCapacity, candidates []Candidate, needs []Need) *flavorState {
	R, F := len(c.Resources), len(c.Flavors)
	s := &flavorState{c: c, r: R, f: F, quotas: c.quotas(), needs: needs,
		named: make([]int32, len(candidates)), free: make([]int64, F*R), kept: make([]int64, F*R),
		placed: make([]int32, len(candidates)), short: make([]int32, len(candidates)), why: make([]why, len(candidates)),
	}
	for f, fl := range c.Flavors {
		for r := range R {
			s.free[f*R+r] = at(fl.Capacity, r)
		}
	}
	flavorIndex := make(map[string]int32, F)
	for f, fl := range c.Flavors {
		flavorIndex[fl.Name] = int32(f + 1)
	}
	for i := range needs {
		if name := needs[i].Flavor; name != "" {
			if s.named[i] = flavorIndex[name]; s.named[i] == 0 {
				s.named[i] = -1
			}
		}
		if w := needs[i].Within; w&Restricted != 0 && w&(1<<F-1) == 0 && F <= MaxFlavors {
			s.named[i] = -1 // its node selector agrees with none of them
		}
	}
	s.long = slotlessOf(Capacity{MaxActive: F, MaxSlotless: c.MaxLongRunning, SlotlessInUse: c.LongRunningInUse}, candidates)
	if len(c.Reclaim.Running) > 0 {
		s.keptOn = make([]int32, len(candidates))
	}
	var ids map[string]int32
	var names []string
	s.of, ids, names = numberTenants(candidates)
	s.ids = ids
	for name := range c.InUse {
		if _, ok := ids[name]; !ok {
			ids[name], names = int32(len(names)), append(names, name)
		}
	}
	if s.quotas {
		for name := range c.Quotas {
			if _, ok := ids[name]; !ok {
				ids[name], names = int32(len(names)), append(names, name)
			}
		}
	}
	s.tenants(names)
	return s
}

// At is v's r-th amount; a Vec shorter than the resources has none of the rest.
func (v Vec) At(r int) int64 { return at(v, r) }

// at is v's r-th amount; a Vec shorter than the resources has none of the rest.
func at(v Vec, r int) int64 {
	if r < len(v) {
		return v[r]
	}
	return 0
}

// tenants fills in each tenant's use, quota and weight, and takes their use from the room.
func (s *flavorState) tenants(names []string) {
	R, F, T := s.r, s.f, len(names)
	s.use, s.nominal = make([]int64, T*F*R), make([]int64, T*F*R)
	s.borrowLimit, s.lendLimit = make([]int64, T*F*R), make([]int64, T*F*R)
	s.lent, s.borrowed, s.weight = make([]int64, F*R), make([]int64, F*R), make([]int64, T*R)
	whole := make([]int64, R)
	for f := range F {
		for r := range R {
			whole[r] += at(s.c.Flavors[f].Capacity, r)
		}
	}
	for t, name := range names {
		q, named := s.c.Quotas[name]
		if !named {
			q = s.c.DefaultQuota
		}
		inUse := s.c.InUse[name]
		for f := range F {
			var fq FlavorQuota
			if f < len(q) {
				fq = q[f]
			}
			var u Vec
			if f < len(inUse) {
				u = inUse[f]
			}
			for r := range R {
				i := (t*F+f)*R + r
				s.use[i], s.nominal[i] = max(at(u, r), 0), max(at(fq.Nominal, r), 0)
				s.borrowLimit[i], s.lendLimit[i] = limit(fq.BorrowingLimit, r), limit(fq.LendingLimit, r)
				s.free[f*R+r] -= s.use[i]
				s.lent[f*R+r] += s.lends(i)
				s.borrowed[f*R+r] += s.borrows(i)
				s.weight[t*R+r] += s.nominal[i]
			}
		}
		for r := range R {
			if !s.quotas || s.weight[t*R+r] == 0 {
				s.weight[t*R+r] = whole[r]
			}
		}
	}
	// Room no tenant's nominal quota claims is lent by the region itself: a tenant alone in a
	// region is not held to its own nominal while the rest stands idle. (A tenant with a quota
	// and no job here claims nothing now; its jobs come first once queued, as any nominal's.)
	for f := range F {
		for r := range R {
			claimed := int64(0)
			for t := range T {
				claimed = satAdd(claimed, s.nominal[(t*F+f)*R+r])
			}
			s.lent[f*R+r] = satAdd(s.lent[f*R+r], max(at(s.c.Flavors[f].Capacity, r)-claimed, 0))
		}
	}
}

// satAdd is a+b for amounts ≥ 0, held at unlimited rather than wrapping.
func satAdd(a, b int64) int64 {
	if a > unlimited-b {
		return unlimited
	}
	return a + b
}

func limit(v Vec, r int) int64 {
	if v == nil {
		return unlimited
	}
	return max(at(v, r), 0)
}

// lends is what the tenant's quota at i lends now: its unused nominal, up to its lending limit.
func (s *flavorState) lends(i int) int64 {
	return min(max(s.nominal[i]-s.use[i], 0), s.lendLimit[i])
}

// borrows is how far the tenant's use at i is above its nominal quota.
func (s *flavorState) borrows(i int) int64 { return max(s.use[i]-s.nominal[i], 0) }
