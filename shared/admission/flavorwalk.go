package admission

// The walk of DecideFlavors: the fair order, the two passes, and the reasons.

// why is a waiting job's reason as flavorState keeps it: a byte a job, not a string.
type why uint8

const (
	whyNone why = iota
	whyFull
	whyLarger
	whyNoSuch
	whyQuota
	whyLongRunning
	whyPreempting
)

var whyReasons = [...]Reason{whyFull: ReasonFlavorFull, whyLarger: ReasonLargerThanFlavors,
	whyNoSuch: ReasonNoSuchFlavor, whyQuota: ReasonTenantQuotaExhausted, whyLongRunning: ReasonSlotlessLimit,
	whyPreempting: ReasonPreempting}

// Marks of flavorState.placed beyond the flavors (which are 1…F).
const (
	placedNone   int32 = 0
	placedHeld   int32 = -1 // held by its price cap
	placedKept   int32 = -2 // fits its tenant's nominal quota, waits for room kept for it
	placedWaits  int32 = -3 // waits for room, or for quota
	placedNoSuch int32 = -4 // names a flavor the region does not have
)

// fairOrder reorders each run of equal priority of order by the jobs' standing, the largest
// share of any resource their tenant would hold were they and its jobs ahead admitted. Held jobs
// take nothing, and stand where their tenant stands.
func (s *flavorState) fairOrder(order []word, l layout) {
	R := s.r
	T := len(s.weight) / max(R, 1)
	// held is each tenant's use over every flavor, then with its jobs ahead added as the walk
	// meets them; per is what one unit of it weighs against the tenant's weight (ratio, as a
	// product); standing, the largest of its resources' parts, only grows, so a job changes it
	// only through the resources it asks for.
	held, per, standing := make([]int64, T*R), make([]float64, T*R), make([]float64, T)
	for t := range T {
		for r := range R {
			i := t*R + r
			for f := range s.f {
				held[i] += s.use[(t*s.f+f)*R+r]
			}
			per[i] = zeroShare
			if s.weight[i] > 0 {
				per[i] = 1 / float64(s.weight[i])
			}
			standing[t] = max(standing[t], float64(max(held[i], 0))*per[i])
		}
	}
	keep := word(1)<<l.sortFrom() - 1
	for i, w := range order {
		k := l.index(w)
		t := int(s.of[k])
		if l.verdict(w) == open {
			for r, d := range s.needs[k].Demand {
				if r < R && d > 0 {
					held[t*R+r] += d
					standing[t] = max(standing[t], float64(held[t*R+r])*per[t*R+r])
				}
			}
		}
		order[i] = stand(w, standing[t], keep)
	}
	radixSort(order, standingAt)
}

// place walks order: under quotas first the jobs within their tenant's nominal quota, then the
// rest; without quotas, all in one pass.
func (s *flavorState) place(order []word, l layout) {
	for _, w := range order {
		k := l.index(w)
		switch {
		case l.verdict(w) != open:
			s.placed[k] = placedHeld
		case s.f == 0:
			s.placed[k], s.why[k] = placedWaits, whyLarger
		case s.named[k] < 0:
			s.placed[k], s.why[k] = placedNoSuch, whyNoSuch
		case s.long.atLimit(k):
			s.placed[k], s.why[k] = placedWaits, whyLongRunning
		case s.quotas:
			s.nominalPass(k)
		}
	}
	for _, w := range order {
		k := l.index(w)
		if s.placed[k] != placedNone {
			continue
		}
		if s.long.atLimit(k) {
			s.placed[k], s.why[k] = placedWaits, whyLongRunning
			continue
		}
		s.borrowPass(k)
	}
}

// may says whether job k may run on flavor f, of those flavors gives it.
func (s *flavorState) may(k, f int) bool { return s.needs[k].May(f) }

// admit places job k on flavor f, its demand d taken as tenant t's.
func (s *flavorState) admit(k, t, f int, d Vec) {
	s.take(t, f, d, true)
	s.placed[k] = int32(f + 1)
	if s.long.is(k) {
		s.long.left[s.long.of[k]-1]--
	}
}

// flavors are the flavors job k may run on, f from lo up to hi: the one it names, or all.
func (s *flavorState) flavors(k int) (lo, hi int) {
	if n := int(s.named[k]); n > 0 {
		return n - 1, n
	}
	return 0, s.f
}

// nominalPass admits job k on the first flavor where its tenant's nominal quota has room for it
// and the flavor has; where only the quota has, it keeps the room of the first such flavor.
func (s *flavorState) nominalPass(k int) {
	t, d := int(s.of[k]), s.needs[k].Demand
	first := -1
	lo, hi := s.flavors(k)
	for f := lo; f < hi; f++ {
		if !s.may(k, f) || !s.withinNominal(t, f, d) {
			continue
		}
		if first < 0 {
			first = f
		}
		if s.fits(f, d, false) < 0 {
			s.admit(k, t, f, d)
			return
		}
	}
	if first < 0 {
		return
	}
	s.placed[k] = placedKept
	if s.keptOn != nil {
		s.keptOn[k] = int32(first)
	}
	s.why[k], s.short[k] = s.roomReason(k, first)
	s.take(t, first, d, false)
	for r := range s.r {
		s.kept[first*s.r+r] += max(at(d, r), 0)
	}
}

// borrowPass admits job k on the first flavor it may run on whose room, less what is kept, has
// all of its demand, within what its tenant may borrow there.
func (s *flavorState) borrowPass(k int) {
	t, d := int(s.of[k]), s.needs[k].Demand
	s.placed[k] = placedWaits
	var quotaShort, keptShort, roomFlavor = -1, -1, -1
	lo, hi := s.flavors(k)
	for f := lo; f < hi; f++ {
		if !s.may(k, f) {
			continue
		}
		if s.fits(f, d, false) >= 0 {
			if roomFlavor < 0 {
				roomFlavor = f
			}
			continue
		}
		if r := s.fits(f, d, true); r >= 0 {
			if keptShort < 0 {
				keptShort = r
			}
			continue
		}
		if r := s.mayBorrow(t, f, d); r >= 0 {
			if quotaShort < 0 {
				quotaShort = r
			}
			continue
		}
		s.admit(k, t, f, d)
		return
	}
	switch {
	case quotaShort >= 0:
		s.why[k], s.short[k] = whyQuota, int32(quotaShort+1)
	case keptShort >= 0:
		s.why[k], s.short[k] = whyQuota, int32(keptShort+1)
	default:
		s.why[k], s.short[k] = s.roomReason(k, roomFlavor)
	}
}

// roomReason is why job k waits for room, judged on flavor f: larger than every flavor it may run
// on, or f full, and the first resource it lacks there.
func (s *flavorState) roomReason(k, f int) (why, int32) {
	d, larger := s.needs[k].Demand, true
	lo, hi := s.flavors(k)
	for g := lo; g < hi && larger; g++ {
		larger = !s.may(k, g) || s.exceeds(g, d) >= 0
	}
	if larger {
		return whyLarger, int32(s.exceeds(f, d) + 1)
	}
	return whyFull, int32(s.fits(f, d, false) + 1)
}

// fits answers -1 when flavor f's free room (less what is kept, with kept) has all of d, else the
// first resource it lacks.
func (s *flavorState) fits(f int, d Vec, kept bool) int {
	for r := range s.r {
		free := s.free[f*s.r+r]
		if kept {
			free -= s.kept[f*s.r+r]
		}
		if at(d, r) > free {
			return r
		}
	}
	return -1
}

// exceeds answers the first resource of which d asks more than flavor f has in all, or -1.
func (s *flavorState) exceeds(f int, d Vec) int {
	for r := range s.r {
		if at(d, r) > at(s.c.Flavors[f].Capacity, r) {
			return r
		}
	}
	return -1
}

// withinNominal says whether tenant t's nominal quota of flavor f has room for d besides its use.
func (s *flavorState) withinNominal(t, f int, d Vec) bool {
	base := (t*s.f + f) * s.r
	for r := range s.r {
		if s.use[base+r]+max(at(d, r), 0) > s.nominal[base+r] {
			return false
		}
	}
	return true
}

// mayBorrow answers -1 when tenant t may take d of flavor f under quotas — within its borrowing
// limit, and what all tenants borrow there within what all lend — else the first resource it may
// not. Without quotas every tenant may take any room.
func (s *flavorState) mayBorrow(t, f int, d Vec) int {
	if !s.quotas {
		return -1
	}
	base := (t*s.f + f) * s.r
	for r := range s.r {
		i, j := base+r, f*s.r+r
		u := s.use[i] + max(at(d, r), 0)
		over := max(u-s.nominal[i], 0)
		if over > s.borrowLimit[i] {
			return r
		}
		lends := min(max(s.nominal[i]-u, 0), s.lendLimit[i])
		if s.borrowed[j]-s.borrows(i)+over > s.lent[j]-s.lends(i)+lends {
			return r
		}
	}
	return -1
}

// take counts d of flavor f as tenant t's, and as the flavor's when room is taken (not kept).
func (s *flavorState) take(t, f int, d Vec, room bool) {
	s.count(t, f, d, 1)
	if room {
		for r := range s.r {
			s.free[f*s.r+r] -= max(at(d, r), 0)
		}
	}
}

// give takes d of flavor f from tenant t's use, as a job evicted gives it back.
func (s *flavorState) give(t, f int, d Vec) { s.count(t, f, d, -1) }

// count adds sign times d of flavor f to tenant t's use, and what that changes of what the
// flavor's tenants lend and borrow.
func (s *flavorState) count(t, f int, d Vec, sign int64) {
	base := (t*s.f + f) * s.r
	for r := range s.r {
		i, j := base+r, f*s.r+r
		s.lent[j] -= s.lends(i)
		s.borrowed[j] -= s.borrows(i)
		s.use[i] += sign * max(at(d, r), 0)
		s.lent[j] += s.lends(i)
		s.borrowed[j] += s.borrows(i)
	}
}

// decision lists the admitted and the waiting in order, with positions and reasons, and evict.
func (s *flavorState) decision(order []word, l layout, candidates []Candidate, evict []Eviction) FlavorDecision {
	admitted := 0
	for _, p := range s.placed {
		if p > 0 {
			admitted++
		}
	}
	// Filled in place, each field once: a row written whole into a slice already made costs no
	// copy of the row, and the collector's barriers only for the strings.
	d := FlavorDecision{Admit: make([]Placed, admitted), Waiting: make([]FlavorWait, len(order)-admitted), Evict: evict}
	roomWaited, headPrio := false, 0
	a, n := 0, 0
	for _, w := range order {
		k := l.index(w)
		if p := s.placed[k]; p > 0 {
			d.Admit[a] = Placed{ID: candidates[k].ID, Flavor: s.c.Flavors[p-1].Name}
			a++
			continue
		}
		reason := whyReasons[s.why[k]]
		if s.placed[k] == placedHeld {
			reason = verdictReasons[l.verdict(w)]
		}
		if reason == ReasonFlavorFull {
			prio := l.priority(w)
			if !roomWaited {
				roomWaited, headPrio = true, prio
			}
			if prio < headPrio {
				reason = ReasonQueuedBehindHigherPriority
			}
		}
		wt := &d.Waiting[n]
		n++
		wt.ID, wt.Reason, wt.Position = candidates[k].ID, reason, n
		if s.short[k] > 0 {
			wt.Resource = s.c.Resources[s.short[k]-1]
		}
	}
	return d
}
