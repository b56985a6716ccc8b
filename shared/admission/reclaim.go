package admission

import (
	"cmp"
	"slices"
	"time"
)

// Reclaim: borrowed room comes back. A tenant may borrow what the others leave idle (flavors.go),
// and with jobs that run for hours a tenant within its nominal quota would otherwise wait hours
// behind another's borrowing. So, after the walk, each job that fits its tenant's nominal quota
// of a flavor but waits for room there (a kept job) may have running jobs evicted for it:
//
//   - Only jobs of other tenants that run on borrowed room: their tenant's use of the flavor,
//     less the job, stays at or above its nominal quota in a resource the waiting job lacks. A job
//     running within its own tenant's nominal quota is never evicted for another tenant.
//   - The tenant furthest over its nominal quota first (its dominant share, as the fair order
//     counts it), then its lowest priority, then its most recently started, and then as few
//     jobs as make room: those taken in that order that the room does not need are given back.
//   - A job admitted by preempting a tenant's jobs is shielded from that tenant's jobs until its
//     Shield ends, so two tenants never take the same room back and forth.
//   - At most Budget evictions a decision (what is left of the region's limit per minute). A job
//     whose room would need more waits as it would without reclaim.
//   - Within a tenant that opts in (WithinTenant), a job waiting for room may evict the tenant's
//     own jobs of lower priority on a flavor it may run on, when its tenant's quota allows it the
//     room they free.
//
// A job evicted for gives its room back when its eviction is recorded (the caller queues it again,
// and then stops its pods with their grace period), so the next decision admits the job it was
// evicted for; until then that one waits with ReasonPreempting. Nothing here writes: the
// evictions are steps in the decision, each with its reason and the job it makes room for.
// Evicting a tenant's own jobs of lower priority needs no shield: priorities cannot go back and
// forth.

// Running is one of the region's active jobs, as reclaim sees it.
type Running struct {
	ID     string
	Tenant string
	// Flavor names the flavor it runs on, one of FlavorCapacity.Flavors'.
	Flavor string
	// Demand is what it holds of that flavor; FlavorCapacity.InUse counts it too.
	Demand    Vec
	Priority  int
	StartedAt time.Time
	// Shield names the tenant whose jobs may not evict this one before ShieldUntil: this job was
	// admitted by evicting that tenant's jobs.
	Shield      string
	ShieldUntil time.Time
}

// Reclaim is what DecideFlavors needs to take room back; its zero value evicts nothing.
type Reclaim struct {
	Running []Running
	// Budget is how many jobs the decision may evict: what is left of the region's limit.
	Budget int
	// Now is the decision's time, against which shields are judged.
	Now time.Time
	// WithinTenant names the tenants whose jobs may evict their own jobs of lower priority.
	WithinTenant map[string]bool
}

// EvictReason says why a running job is evicted.
type EvictReason string

const (
	// EvictReclaimed: the job ran on room its tenant borrowed, and a job of a tenant within its
	// nominal quota needs that room.
	EvictReclaimed EvictReason = "reclaimed"
	// EvictLowerPriority: a job of its own tenant, of higher priority, needs its room, and the
	// tenant lets its jobs preempt its own.
	EvictLowerPriority EvictReason = "lower_priority"
)

// ReasonPreempting: jobs have been evicted to make room for this one, which the next decision
// admits.
const ReasonPreempting Reason = "waiting_for_preempted_jobs"

// Eviction is one running job DecideFlavors evicts.
type Eviction struct {
	ID string
	// For is the waiting job whose room it frees.
	For    string
	Reason EvictReason
	Flavor string
}

// reclaimer is one decision's reclaim: the running jobs by flavor, in the order they are taken.
type reclaimer struct {
	s  *flavorState
	rc Reclaim
	// victims are the running jobs that may be evicted, by flavor, in the order taken; tenant is
	// each running job's tenant (-1 for one the decision does not know).
	victims [][]int32
	tenant  []int32
	taken   []bool
	// spare is each flavor's free room and the room of the jobs evicted, less what the jobs they
	// were evicted for take of it.
	spare []int64
	// failed are demands already found to need more than can be taken back, by flavor, tenant and
	// (within a tenant) priority: a job asking as much or more is not tried again.
	failed map[[3]int32][]Vec
	out    []Eviction
}

// reclaim evicts for the waiting jobs of order, as the file's comment says.
func (s *flavorState) reclaim(order []word, l layout, candidates []Candidate) []Eviction {
	rc := s.c.Reclaim
	if len(rc.Running) == 0 || s.f == 0 {
		return nil
	}
	m := s.newReclaimer(rc)
	for _, w := range order {
		k := l.index(w)
		switch {
		case s.placed[k] == placedKept:
			m.forKept(k, candidates)
		case s.placed[k] == placedWaits && s.why[k] == whyFull && rc.WithinTenant[candidates[k].Tenant]:
			m.forWaiting(k, candidates)
		}
	}
	return m.out
}

func (s *flavorState) newReclaimer(rc Reclaim) *reclaimer {
	F := s.f
	m := &reclaimer{s: s, rc: rc, victims: make([][]int32, F), tenant: make([]int32, len(rc.Running)),
		taken: make([]bool, len(rc.Running)), spare: slices.Clone(s.free), failed: map[[3]int32][]Vec{}}
	flavorIndex := make(map[string]int, F)
	for f, fl := range s.c.Flavors {
		flavorIndex[fl.Name] = f
	}
	standing := s.standings()
	for i := range rc.Running {
		j := &rc.Running[i]
		t, known := s.ids[j.Tenant]
		f, onFlavor := flavorIndex[j.Flavor]
		m.tenant[i] = -1
		if known {
			m.tenant[i] = t
		}
		if onFlavor && known {
			m.victims[f] = append(m.victims[f], int32(i))
		}
	}
	for f := range F {
		m.victims[f] = m.inOrder(m.victims[f], standing)
	}
	return m
}

// victimKey is what orders the running jobs that may be evicted, in one flat value a job.
type victimKey struct {
	standing float64 // its tenant's, negated: the furthest over first
	priority int     // the lowest first
	started  int64   // negated: the most recent first
	i        int32
}

// inOrder sorts running jobs is in the order they are taken: their tenant furthest over its
// nominal quota first, then the lowest priority, then the most recently started, then by ID.
func (m *reclaimer) inOrder(is []int32, standing []float64) []int32 {
	keys := make([]victimKey, len(is))
	for n, i := range is {
		j := &m.rc.Running[i]
		keys[n] = victimKey{standing: -standing[m.tenant[i]], priority: j.Priority, started: -j.StartedAt.UnixNano(), i: i}
	}
	slices.SortFunc(keys, func(a, b victimKey) int {
		switch {
		case a.standing != b.standing:
			return cmp.Compare(a.standing, b.standing)
		case a.priority != b.priority:
			return cmp.Compare(a.priority, b.priority)
		case a.started != b.started:
			return cmp.Compare(a.started, b.started)
		}
		return cmp.Compare(m.rc.Running[a.i].ID, m.rc.Running[b.i].ID)
	})
	for n := range keys {
		is[n] = keys[n].i
	}
	return is
}

// standings are the tenants' dominant shares: the largest share of any resource each holds,
// over every flavor, against what its standing is a share of (flavorState.weight).
func (s *flavorState) standings() []float64 {
	R := s.r
	T := len(s.weight) / max(R, 1)
	out := make([]float64, T)
	for t := range T {
		for r := range R {
			held := int64(0)
			for f := range s.f {
				held += s.use[(t*s.f+f)*R+r]
			}
			per := float64(zeroShare)
			if w := s.weight[t*R+r]; w > 0 {
				per = 1 / float64(w)
			}
			out[t] = max(out[t], float64(max(held, 0))*per)
		}
	}
	return out
}

// forKept makes room for kept job k on the flavor kept for it, from other tenants' borrowing.
func (m *reclaimer) forKept(k int, candidates []Candidate) {
	s := m.s
	f, t, d := int(s.keptOn[k]), int(s.of[k]), s.needs[k].Demand
	if m.covered(f, d) {
		m.settle(k, f, d)
		return
	}
	chosen := m.choose(k, f, -1, func(i int32) bool {
		u := m.tenant[i]
		return int(u) != t && m.unshielded(i, candidates[k].Tenant) && m.borrowed(i, f, d)
	})
	if chosen == nil {
		return
	}
	m.evict(k, f, chosen, EvictReclaimed, candidates)
	m.settle(k, f, d)
}

// forWaiting makes room for job k, waiting for room, from its own tenant's jobs of lower
// priority, on the first flavor it may run on where that frees enough and its quota allows it.
func (m *reclaimer) forWaiting(k int, candidates []Candidate) {
	s := m.s
	t, d, prio := int(s.of[k]), s.needs[k].Demand, candidates[k].Priority
	lo, hi := s.flavors(k)
	for f := lo; f < hi; f++ {
		if !s.may(k, f) || s.exceeds(f, d) >= 0 {
			continue
		}
		if m.covered(f, d) {
			if s.mayBorrow(t, f, d) < 0 {
				m.settle(k, f, d)
				return
			}
			continue
		}
		chosen := m.choose(k, f, int32(prio), func(i int32) bool {
			return int(m.tenant[i]) == t && m.rc.Running[i].Priority < prio
		})
		if chosen == nil {
			continue
		}
		for _, i := range chosen {
			s.give(t, f, m.rc.Running[i].Demand)
		}
		if s.mayBorrow(t, f, d) >= 0 {
			for _, i := range chosen {
				s.take(t, f, m.rc.Running[i].Demand, false)
			}
			continue
		}
		for _, i := range chosen {
			s.take(t, f, m.rc.Running[i].Demand, false) // evict gives them back once more
		}
		m.evict(k, f, chosen, EvictLowerPriority, candidates)
		s.take(t, f, d, false)
		m.settle(k, f, d)
		return
	}
}

// covered says whether flavor f's spare room has all of d.
func (m *reclaimer) covered(f int, d Vec) bool {
	for r := range m.s.r {
		if at(d, r) > m.spare[f*m.s.r+r] {
			return false
		}
	}
	return true
}

// settle has job k wait for room on flavor f that is free or coming: d is taken from the spare.
func (m *reclaimer) settle(k, f int, d Vec) {
	for r := range m.s.r {
		m.spare[f*m.s.r+r] -= max(at(d, r), 0)
	}
	m.s.placed[k], m.s.why[k], m.s.short[k] = placedWaits, whyPreempting, 0
}

// unshielded says whether running job i may be evicted for tenant's jobs now.
func (m *reclaimer) unshielded(i int32, tenant string) bool {
	j := &m.rc.Running[i]
	return j.Shield != tenant || !m.rc.Now.Before(j.ShieldUntil)
}

// borrowed says whether running job i runs on room its tenant borrowed of flavor f, in a resource
// d lacks: its tenant's use, less the job, stays at or above its nominal quota there.
func (m *reclaimer) borrowed(i int32, f int, d Vec) bool {
	s, j := m.s, &m.rc.Running[i]
	base := (int(m.tenant[i])*s.f + f) * s.r
	for r := range s.r {
		held := max(at(j.Demand, r), 0)
		if held > 0 && at(d, r) > m.spare[f*s.r+r] && s.use[base+r]-held >= s.nominal[base+r] {
			return true
		}
	}
	return false
}

// choose answers the running jobs on flavor f to evict for job k, of those may allows (which, for
// a tenant's own jobs, depends on prio; -1 for other tenants'), taken in
// the victims' order until the spare room and theirs has all of k's demand, then those not needed
// given back, latest first; nil when they cannot make the room, or more are needed than the budget
// allows. Each is judged with those taken before it already gone from its tenant's use.
func (m *reclaimer) choose(k, f int, prio int32, may func(int32) bool) []int32 {
	s := m.s
	if m.rc.Budget <= 0 {
		return nil
	}
	d := s.needs[k].Demand
	key := [3]int32{int32(f), s.of[k], prio}
	for _, v := range m.failed[key] {
		if covers(d, v, s.r) {
			return nil
		}
	}
	lack := make([]int64, s.r)
	for r := range s.r {
		lack[r] = max(at(d, r), 0) - m.spare[f*s.r+r]
	}
	var chosen []int32
	for _, i := range m.victims[f] {
		if m.taken[i] || m.tenant[i] < 0 || !may(i) || !helps(m.rc.Running[i].Demand, lack) {
			continue
		}
		chosen = append(chosen, i)
		m.taken[i] = true
		s.give(int(m.tenant[i]), f, m.rc.Running[i].Demand)
		addLack(lack, m.rc.Running[i].Demand, -1)
		if slices.Max(lack) <= 0 {
			break
		}
	}
	for _, i := range chosen {
		m.taken[i] = false
		s.take(int(m.tenant[i]), f, m.rc.Running[i].Demand, false)
	}
	if len(chosen) == 0 || slices.Max(lack) > 0 {
		m.failed[key] = append(m.failed[key], d)
		return nil
	}
	for n := len(chosen) - 1; n >= 0; n-- {
		addLack(lack, m.rc.Running[chosen[n]].Demand, 1)
		if slices.Max(lack) <= 0 {
			chosen = slices.Delete(chosen, n, n+1)
		} else {
			addLack(lack, m.rc.Running[chosen[n]].Demand, -1)
		}
	}
	if len(chosen) > m.rc.Budget {
		return nil
	}
	return chosen
}

// evict records chosen's evictions for job k, takes them from their tenants' use and the budget,
// and adds their room to flavor f's spare.
func (m *reclaimer) evict(k, f int, chosen []int32, why EvictReason, candidates []Candidate) {
	s := m.s
	for _, i := range chosen {
		j := &m.rc.Running[i]
		m.taken[i] = true
		s.give(int(m.tenant[i]), f, j.Demand)
		for r := range s.r {
			m.spare[f*s.r+r] += max(at(j.Demand, r), 0)
		}
		m.out = append(m.out, Eviction{ID: j.ID, For: candidates[k].ID, Reason: why, Flavor: j.Flavor})
	}
	m.rc.Budget -= len(chosen)
}

// covers says whether d asks at least v of each of r resources.
func covers(d, v Vec, r int) bool {
	for i := range r {
		if at(d, i) < at(v, i) {
			return false
		}
	}
	return true
}

// helps says whether a job holding v frees some of a resource lack still lacks.
func helps(v Vec, lack []int64) bool {
	for r, n := range lack {
		if n > 0 && at(v, r) > 0 {
			return true
		}
	}
	return false
}

// addLack adds sign times v to lack.
func addLack(lack []int64, v Vec, sign int64) {
	for r := range lack {
		lack[r] += sign * max(at(v, r), 0)
	}
}

// Borrowing says whether any tenant's active jobs hold more of a flavor than its nominal quota,
// in any resource: only then may a decision evict for another tenant, so only then need a drain
// of a full region read its queues for jobs to make room for.
func (c FlavorCapacity) Borrowing() bool {
	if !c.quotas() {
		return false
	}
	for name, use := range c.InUse {
		q, named := c.Quotas[name]
		if !named {
			q = c.DefaultQuota
		}
		for f, u := range use {
			var nominal Vec
			if f < len(q) {
				nominal = q[f].Nominal
			}
			for r := range u {
				if u[r] > at(nominal, r) {
					return true
				}
			}
		}
	}
	return false
}
