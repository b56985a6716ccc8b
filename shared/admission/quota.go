package admission

import "github.com/tidegate/tidegate/shared/spotgate"

// Quotas share a region among tenants as Kueue's ClusterQueues share a cohort: each tenant has a
// nominal share (Capacity.Shares), may borrow what the others leave idle, and borrowed room is
// never lent again while a tenant under its share has a job waiting. Nothing running is
// preempted: a borrower keeps what it holds until its jobs end.
//
// decideShared orders the candidates as Decide does, then reorders each run of equal priority
// fairly (the tenant furthest below its share first, each tenant's own jobs keeping their order),
// and walks that order twice:
//
//   - First, only the jobs within their tenant's share: one is within it when its tenant's
//     active and admitted jobs, with it, are at most the share's jobs, and (under a GPU cap)
//     their GPUs at most the share's GPUs. Each is admitted if the region has room, as Decide
//     admits; one there is no room for is owed room, which the second walk keeps for it.
//   - Then the rest, borrowing: each is admitted if the region has room beyond what the jobs
//     owed room need (one slot each and their GPUs). One that is not waits with
//     ReasonTenantQuotaExhausted while any job within its share waits for room, and for room
//     otherwise.
//
// So a job within its tenant's share never waits for a borrower, whatever their priorities: a
// share is what the tenant is sure of. Idle room is used whenever a job fits it, unless it is
// owed. Jobs held by their price cap wait as in Decide, taking no room.
func decideShared(candidates []Candidate, c Capacity, prices map[string]spotgate.Observation) Decision {
	order, l := dispatchOrder(candidates, prices)
	r := roomOf(c, candidates)
	ts := tenantsOf(candidates, c)
	fairOrder(order, l, &r, ts)
	marks, admits, owed := ts.walk(order, l, &r)
	return decision(order, l, &r, marks, admits, owed, candidates)
}

// tenants are the candidates' tenants, numbered in order of first appearance.
type tenants struct {
	of    []int32  // each candidate's tenant, in the order given
	share []Amount // by tenant
	used  []Amount // by tenant: what its active jobs hold, and then what the walk admits
}

func tenantsOf(candidates []Candidate, c Capacity) tenants {
	of, _, names := numberTenants(candidates)
	ts := tenants{of: of, share: make([]Amount, len(names)), used: make([]Amount, len(names))}
	for t, name := range names {
		share, named := c.Shares[name]
		if !named {
			share = c.DefaultShare
		}
		ts.share[t], ts.used[t] = share, c.InUse[name]
	}
	return ts
}

// numberTenants numbers the candidates' tenants in order of first appearance: each candidate's
// number (of), the number of each name (ids) and the names by number.
func numberTenants(candidates []Candidate) (of []int32, ids map[string]int32, names []string) {
	of, ids = make([]int32, len(candidates)), map[string]int32{}
	var recent tenantCache
	for i := range candidates {
		name := candidates[i].Tenant
		slot := recent.slot(name)
		if slot.known && slot.name == name {
			of[i] = slot.id
			continue
		}
		id, ok := ids[name]
		if !ok {
			id = int32(len(names))
			ids[name], names = id, append(names, name)
		}
		of[i] = id
		*slot = tenantSlot{name: name, id: id, known: true}
	}
	return of, ids, names
}

// tenantCache holds the tenants met most recently, one a slot chosen by a few of the name's
// bytes, so that most jobs find their tenant's number without hashing the whole name, which cost
// about a quarter of what quotas add to a decision over 10,000 jobs. Names that share a slot
// take turns in it and find each other in the map.
type tenantCache [tenantSlots]tenantSlot

type tenantSlot struct {
	name  string
	id    int32
	known bool
}

// 256 slots leave a few hundred tenants mostly one a slot, and fill 6 KiB, cleared once a
// decision.
const tenantSlots = 256

// slot is name's slot: picked by its length and its first and last two bytes, which is where
// names that share a prefix (team-…, tenant-07, tenant-17) differ.
func (tc *tenantCache) slot(name string) *tenantSlot {
	x := uint32(len(name))
	if n := len(name); n > 0 {
		x ^= uint32(name[0])<<8 ^ uint32(name[n-1])<<16 ^ uint32(name[max(n-2, 0)])<<24
	}
	return &tc[x*0x9e3779b1>>24] // Fibonacci hashing: the top byte of the product mixes them all
}

// within says whether tenant t's share has room for one more job needing need GPUs; a slotless
// job (free) needs no job of the share, only its GPUs.
func (ts tenants) within(t int32, need int64, free bool) bool {
	u, s := ts.used[t], ts.share[t]
	return (free || u.Jobs < s.Jobs) && (need == 0 || u.GPUs+need <= s.GPUs)
}

// need is candidate k's GPUs as the room counts them: none without a GPU cap.
func (r *room) need(k int) int64 {
	if r.gpuCapped {
		return r.needs[k]
	}
	return 0
}

// mark is what the walk under quotas decided for one job.
type mark uint8

const (
	markRoom mark = iota // waits for room
	markAdmit
	markUnknownPrice
	markAboveCap
	markQuota  // waits for the room owed to tenants under their shares
	markBorrow // beyond its tenant's share: decision judges it, after every job within one
	markLimit  // slotless, and its tenant has as many active as it may
)

// walk decides each job of order within its tenant's share, as decideShared says, marks the rest
// to borrow, and leaves each word of order as its job's priority and index. It answers each
// job's mark, by position in order, how many it admitted, and whether any is owed room; what is
// owed is taken from r.
func (ts tenants) walk(order []word, l layout, r *room) (marks []mark, admits int, owed bool) {
	marks = make([]mark, len(order))
	owedSlots, owedGPUs := 0, int64(0)
	for i, w := range order {
		k := l.index(w)
		order[i] = w>>(64-prioBits)<<(64-prioBits) | word(k) // the priority stays, for decision
		switch l.verdict(w) {
		case unknownPrice:
			marks[i] = markUnknownPrice
			continue
		case aboveCap:
			marks[i] = markAboveCap
			continue
		}
		if r.free.atLimit(k) {
			marks[i] = markLimit
			continue
		}
		t, need, free := ts.of[k], r.need(k), r.free.is(k)
		switch {
		case !ts.within(t, need, free):
			marks[i] = markBorrow
		case r.take(k):
			marks[i], admits = markAdmit, admits+1
			if !free {
				ts.used[t].Jobs++
			}
			ts.used[t].GPUs += need
		default:
			owed = true
			if !free {
				owedSlots++
			}
			owedGPUs += need
		}
	}
	r.slots, r.gpus = max(r.slots-owedSlots, 0), r.gpus-owedGPUs
	return marks, admits, owed
}

var markReasons = [...]Reason{markUnknownPrice: ReasonSpotPriceUnknown, markAboveCap: ReasonSpotPriceAboveCap, markQuota: ReasonTenantQuotaExhausted,
	markLimit: ReasonSlotlessLimit}

// decision walks order a second time, judging the borrowers with what room the first walk left,
// and lists the marks as a Decision, in order. Among the jobs waiting for room, as in Decide,
// those of the first one's priority wait with ReasonCapacity. Judging a borrower where it is
// listed spares a walk of the borrowers alone: each is still judged after every job within its
// share and before the borrowers behind it.
func decision(order []word, l layout, r *room, marks []mark, admits int, owed bool, candidates []Candidate) Decision {
	// Borrowers can be admitted only into the slots left.
	d := Decision{Admit: make([]string, 0, admits+r.slots), Waiting: make([]Wait, 0, len(order)-admits)}
	headPrio := -1
	for i, w := range order {
		m := marks[i]
		if m == markBorrow {
			switch {
			case r.take(l.index(w)):
				m = markAdmit
			case r.free.atLimit(l.index(w)):
				m = markLimit
			case owed:
				m = markQuota
			default:
				m = markRoom
			}
			marks[i] = m
		}
		if m == markAdmit {
			d.Admit = append(d.Admit, "")
			continue
		}
		reason := markReasons[m]
		if m == markRoom {
			p := l.priority(w)
			if headPrio < 0 {
				headPrio = p
			}
			reason = ReasonCapacity
			if p < headPrio {
				reason = ReasonQueuedBehindHigherPriority
			}
		}
		d.Waiting = append(d.Waiting, Wait{Reason: reason, Position: len(d.Waiting) + 1})
	}
	// As in Decide, the IDs are read last, in a loop whose reads do not wait on each other.
	a, wt := 0, 0
	for i, w := range order {
		id := candidates[l.index(w)].ID
		if marks[i] == markAdmit {
			d.Admit[a], a = id, a+1
		} else {
			d.Waiting[wt].ID, wt = id, wt+1
		}
	}
	return d
}
