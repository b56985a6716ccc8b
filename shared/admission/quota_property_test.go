package admission

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var quotaTenants = []string{"a", "b", "c", ""}

// randomQuotaCase is randomCase with each job given one of a few tenants, and the region shared
// among them: some named with a share, the rest on the default, each holding some of what is active.
func randomQuotaCase(r *rand.Rand) propCase {
	pc := randomCase(r)
	for i := range pc.cands {
		pc.cands[i].Tenant = quotaTenants[r.IntN(len(quotaTenants))]
	}
	c := &pc.cap
	c.Shares, c.InUse, c.ActiveJobs, c.ActiveGPUs = map[string]Amount{}, map[string]Amount{}, 0, 0
	for _, t := range quotaTenants {
		if r.IntN(3) > 0 {
			c.Shares[t] = Amount{Jobs: r.IntN(5), GPUs: int64(r.IntN(9))}
		}
		use := Amount{Jobs: r.IntN(4), GPUs: int64(r.IntN(8))}
		c.InUse[t] = use
		c.ActiveJobs, c.ActiveGPUs = c.ActiveJobs+use.Jobs, c.ActiveGPUs+use.GPUs
	}
	c.DefaultShare = Amount{Jobs: r.IntN(3), GPUs: int64(r.IntN(4))}
	return pc
}

func TestDecideWithQuotasProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	for n := range 3000 {
		pc := randomQuotaCase(r)
		before := deepCopy(pc)
		before.cap.Shares, before.cap.InUse = maps.Clone(pc.cap.Shares), maps.Clone(pc.cap.InUse)
		d := Decide(pc.cands, pc.cap, pc.prices)
		name := fmt.Sprintf("case %d (%d candidates, %+v)", n, len(pc.cands), pc.cap)

		if diff := cmp.Diff(before, pc, cmp.AllowUnexported(propCase{})); diff != "" {
			t.Fatalf("%s: Decide changed its input (-before +after):\n%s", name, diff)
		}
		shuffled := slices.Clone(pc.cands)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if diff := cmp.Diff(d, Decide(shuffled, pc.cap, pc.prices), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: Decide depends on the candidates' order (-listed +shuffled):\n%s", name, diff)
		}
		checkQuotaDecision(t, name, pc, d)
	}
}

// TestDecideWithoutQuotasIgnoresTenants: with no shares, tenants change nothing.
func TestDecideWithoutQuotasIgnoresTenants(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 2026))
	for n := range 1000 {
		pc := randomCase(r)
		withTenants := slices.Clone(pc.cands)
		for i := range withTenants {
			withTenants[i].Tenant = quotaTenants[r.IntN(len(quotaTenants))]
		}
		if diff := cmp.Diff(Decide(pc.cands, pc.cap, pc.prices), Decide(withTenants, pc.cap, pc.prices), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("case %d: tenants changed a decision without quotas (-without +with):\n%s", n, diff)
		}
	}
}

// quotaState is what a quota decision left: per tenant its use, and the region's room.
type quotaState struct {
	share, use     map[string]Amount
	admittedGPUJob map[string]bool // a job needing GPUs was admitted for the tenant now
	slotsLeft      int
	gpusLeft       int64
	capped         bool
}

func (s quotaState) need(c Candidate) int64 {
	if !s.capped {
		return 0
	}
	return max(c.GPUs, 0)
}

// within says whether c's tenant, as the decision left it, has room in its share for c.
func (s quotaState) within(c Candidate) bool {
	u, sh, need := s.use[c.Tenant], s.share[c.Tenant], s.need(c)
	return u.Jobs < sh.Jobs && (need == 0 || u.GPUs+need <= sh.GPUs)
}

// fits says whether c fits the room the decision left.
func (s quotaState) fits(c Candidate) bool {
	need := s.need(c)
	return s.slotsLeft > 0 && (need == 0 || need <= s.gpusLeft)
}

func stateAfter(pc propCase, byID map[string]Candidate, d Decision) quotaState {
	s := quotaState{share: map[string]Amount{}, use: map[string]Amount{}, admittedGPUJob: map[string]bool{}, capped: pc.cap.MaxGPUs > 0}
	for _, t := range quotaTenants {
		sh, ok := pc.cap.Shares[t]
		if !ok {
			sh = pc.cap.DefaultShare
		}
		s.share[t], s.use[t] = sh, pc.cap.InUse[t]
	}
	s.slotsLeft = max(pc.cap.MaxActive-pc.cap.ActiveJobs, 0) - len(d.Admit)
	s.gpusLeft = pc.cap.MaxGPUs - pc.cap.ActiveGPUs
	for _, id := range d.Admit {
		c := byID[id]
		u := s.use[c.Tenant]
		u.Jobs++
		u.GPUs += s.need(c)
		s.use[c.Tenant] = u
		s.gpusLeft -= s.need(c)
		s.admittedGPUJob[c.Tenant] = s.admittedGPUJob[c.Tenant] || s.need(c) > 0
	}
	return s
}

func checkQuotaDecision(t *testing.T, name string, pc propCase, d Decision) {
	t.Helper()
	byID := map[string]Candidate{}
	for _, c := range pc.cands {
		byID[c.ID] = c
	}
	if got := len(d.Admit) + len(d.Waiting); got != len(pc.cands) || len(byID) != len(pc.cands) {
		t.Fatalf("%s: %d of %d candidates decided: %+v", name, got, len(pc.cands), d)
	}
	s := stateAfter(pc, byID, d)

	// Never over capacity.
	if s.slotsLeft < 0 {
		t.Fatalf("%s: admitted %d jobs, %d past the free slots", name, len(d.Admit), -s.slotsLeft)
	}
	if budget := pc.cap.MaxGPUs - pc.cap.ActiveGPUs; s.capped && budget-s.gpusLeft > max(budget, 0) {
		t.Fatalf("%s: admitted jobs take %d GPUs of %d left", name, budget-s.gpusLeft, budget)
	}
	for _, id := range d.Admit {
		if gate(byID[id].Spot, pc.prices) != open {
			t.Fatalf("%s: admitted %s though its price cap holds it", name, id)
		}
	}

	// A tenant under its share with a waiting job is never passed over for a borrower: while one
	// waits for room, what was lent beyond shares left it the room it needs.
	var under []Candidate
	var underGPUs int64
	for _, w := range d.Waiting {
		if c := byID[w.ID]; (w.Reason == ReasonCapacity || w.Reason == ReasonQueuedBehindHigherPriority) && s.within(c) {
			under, underGPUs = append(under, c), underGPUs+s.need(c)
		}
	}
	for tenant, u := range s.use {
		lentJobs := u.Jobs > s.share[tenant].Jobs && u.Jobs > pc.cap.InUse[tenant].Jobs
		lentGPUs := s.capped && u.GPUs > s.share[tenant].GPUs && s.admittedGPUJob[tenant]
		if len(under) > 0 && lentJobs && s.slotsLeft < len(under) {
			t.Fatalf("%s: tenant %q borrowed a slot while %d jobs under their shares wait with %d slots left (%s first)", name, tenant, len(under), s.slotsLeft, under[0].ID)
		}
		if len(under) > 0 && lentGPUs && s.gpusLeft < underGPUs {
			t.Fatalf("%s: tenant %q borrowed GPUs while jobs under their shares wait for %d with %d left", name, tenant, underGPUs, s.gpusLeft)
		}
	}

	// Work-conserving: a job that fits the room left waits only for room owed to a share.
	owed := false
	for _, w := range d.Waiting {
		owed = owed || w.Reason == ReasonCapacity || w.Reason == ReasonQueuedBehindHigherPriority
	}
	for _, w := range d.Waiting {
		c := byID[w.ID]
		if gate(c.Spot, pc.prices) == open && s.fits(c) && (w.Reason != ReasonTenantQuotaExhausted || s.within(c)) {
			t.Fatalf("%s: %s waits with %s though it fits the room left (%d slots, %d GPUs)", name, w.ID, w.Reason, s.slotsLeft, s.gpusLeft)
		}
		if w.Reason == ReasonTenantQuotaExhausted && !owed {
			t.Fatalf("%s: %s waits with %s though no job waits for room", name, w.ID, w.Reason)
		}
	}

	// Each tenant's jobs of one priority keep their dispatch order.
	for _, ids := range [][]string{d.Admit, waitIDs(d)} {
		last := map[[2]any]Candidate{}
		for _, id := range ids {
			c := byID[id]
			k := [2]any{c.Tenant, c.Priority}
			if p, ok := last[k]; ok && !before(p, c) {
				t.Fatalf("%s: tenant %q's %s listed before its %s, out of dispatch order", name, c.Tenant, p.ID, c.ID)
			}
			last[k] = c
		}
	}
	for i, w := range d.Waiting {
		if w.Position != i+1 {
			t.Fatalf("%s: waiting job %d has position %d", name, i, w.Position)
		}
	}
}
