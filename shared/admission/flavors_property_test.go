package admission

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// flavorCase is a random region of two or three flavors, three tenants (quotas or not) and a
// queue of up to 40 jobs.
type flavorCase struct {
	cands  []Candidate
	needs  []Need
	cap    FlavorCapacity
	prices map[string]spotgate.Observation
}

func randomFlavorCase(r *rand.Rand) flavorCase {
	fc := flavorCase{prices: map[string]spotgate.Observation{"g5.xlarge": {Price: 0.5, Known: true}}}
	c := &fc.cap
	c.Resources = testResources
	for f := range 2 + r.IntN(2) {
		c.Flavors = append(c.Flavors, Flavor{Name: fmt.Sprintf("f%d", f),
			Capacity: Vec{int64(r.IntN(9)) * 1000, int64(r.IntN(5)) * 4096, int64(r.IntN(5)), int64(r.IntN(12))}})
	}
	tenants := []string{"a", "b", "c"}
	c.InUse = map[string][]Vec{}
	quotas := r.IntN(2) == 0
	if quotas {
		c.Quotas = map[string]Quota{}
	}
	for _, t := range tenants {
		for range c.Flavors {
			c.InUse[t] = append(c.InUse[t], Vec{int64(r.IntN(3)) * 500, int64(r.IntN(2)) * 1024, int64(r.IntN(2)), int64(r.IntN(3))})
		}
		if quotas && r.IntN(4) > 0 {
			var q Quota
			for range c.Flavors {
				fq := FlavorQuota{Nominal: Vec{int64(r.IntN(5)) * 1000, int64(r.IntN(3)) * 4096, int64(r.IntN(3)), int64(r.IntN(6))}}
				if r.IntN(3) == 0 {
					fq.BorrowingLimit = Vec{int64(r.IntN(3)) * 1000, 4096, 1, 2}
				}
				if r.IntN(3) == 0 {
					fq.LendingLimit = Vec{int64(r.IntN(3)) * 500, 2048, 1, 1}
				}
				q = append(q, fq)
			}
			c.Quotas[t] = q
		}
	}
	for i := range r.IntN(41) {
		cand := Candidate{ID: fmt.Sprintf("j%02d", i), Tenant: tenants[r.IntN(3)], Priority: r.IntN(3) * 40,
			CreatedAt: t0.Add(time.Duration(r.IntN(100)) * time.Second)}
		if r.IntN(6) == 0 {
			cand.Spot = &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: float64(r.IntN(2))}
		}
		n := Need{Demand: Vec{int64(1+r.IntN(6)) * 500, int64(r.IntN(3)) * 1024, int64(r.IntN(3)) * int64(r.IntN(2)), int64(1 + r.IntN(3))}}
		if r.IntN(5) == 0 {
			n.Flavor = fmt.Sprintf("f%d", r.IntN(4)) // f3 is not always one of the region's
		}
		fc.cands, fc.needs = append(fc.cands, cand), append(fc.needs, n)
	}
	return fc
}

// TestDecideFlavorsProperties: whatever the region, DecideFlavors lists every candidate once,
// never places more on a flavor than it has free, never places a job on a flavor it did not name,
// never lets a tenant borrow past its limit nor all tenants borrow past what is lent, and does not
// depend on the order the candidates are listed in.
func TestDecideFlavorsProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2026))
	for n := range 3000 {
		fc := randomFlavorCase(r)
		d := DecideFlavors(fc.cands, fc.needs, fc.cap, fc.prices)
		name := fmt.Sprintf("case %d (%d candidates)", n, len(fc.cands))

		idx := slices.Collect(func(yield func(int) bool) {
			for i := range fc.cands {
				if !yield(i) {
					return
				}
			}
		})
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		sc, sn := make([]Candidate, len(idx)), make([]Need, len(idx))
		for i, k := range idx {
			sc[i], sn[i] = fc.cands[k], fc.needs[k]
		}
		if diff := cmp.Diff(d, DecideFlavors(sc, sn, fc.cap, fc.prices), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: the decision depends on the candidates' order (-listed +shuffled):\n%s", name, diff)
		}
		checkFlavorDecision(t, name, fc, d)
	}
}

func checkFlavorDecision(t *testing.T, name string, fc flavorCase, d FlavorDecision) {
	t.Helper()
	c := fc.cap
	byID := map[string]int{}
	for i, cand := range fc.cands {
		byID[cand.ID] = i
	}
	if got := len(d.Admit) + len(d.Waiting); got != len(fc.cands) {
		t.Fatalf("%s: %d admitted and waiting, want %d", name, got, len(fc.cands))
	}
	R := len(c.Resources)
	flavor := map[string]int{}
	for f, fl := range c.Flavors {
		flavor[fl.Name] = f
	}
	use := map[string][]int64{} // by tenant: [f*R+r]
	total := make([]int64, len(c.Flavors)*R)
	for tn, vs := range c.InUse {
		use[tn] = make([]int64, len(c.Flavors)*R)
		for f, v := range vs {
			for r := range R {
				use[tn][f*R+r] += at(v, r)
				total[f*R+r] += at(v, r)
			}
		}
	}
	for _, a := range d.Admit {
		k := byID[a.ID]
		cand, need := fc.cands[k], fc.needs[k]
		f := flavor[a.Flavor]
		if need.Flavor != "" && need.Flavor != a.Flavor {
			t.Fatalf("%s: %s names %s and was placed on %s", name, a.ID, need.Flavor, a.Flavor)
		}
		if g := gate(cand.Spot, fc.prices); g != open {
			t.Fatalf("%s: %s was admitted with its price holding it", name, a.ID)
		}
		if use[cand.Tenant] == nil {
			use[cand.Tenant] = make([]int64, len(c.Flavors)*R)
		}
		for r := range R {
			use[cand.Tenant][f*R+r] += at(need.Demand, r)
			total[f*R+r] += at(need.Demand, r)
			if total[f*R+r] > at(c.Flavors[f].Capacity, r) && at(need.Demand, r) > 0 {
				t.Fatalf("%s: %s puts %s of flavor %s at %d, over its %d", name, a.ID, c.Resources[r], a.Flavor, total[f*R+r], at(c.Flavors[f].Capacity, r))
			}
		}
	}
	if !c.quotas() {
		return
	}
	// A tenant that borrows more than it did borrows within its limit.
	for f := range c.Flavors {
		for r := range R {
			for tn, u := range use {
				q, ok := c.Quotas[tn]
				if !ok {
					q = c.DefaultQuota
				}
				var fq FlavorQuota
				if f < len(q) {
					fq = q[f]
				}
				var was int64
				if f < len(c.InUse[tn]) {
					was = at(c.InUse[tn][f], r)
				}
				nominal := at(fq.Nominal, r)
				over := max(u[f*R+r]-nominal, 0)
				if over > max(was-nominal, 0) && fq.BorrowingLimit != nil && over > at(fq.BorrowingLimit, r) {
					t.Fatalf("%s: tenant %s borrows %d of %s on %s, past its limit %d", name, tn, over, c.Resources[r], c.Flavors[f].Name, at(fq.BorrowingLimit, r))
				}
			}
		}
	}
}
