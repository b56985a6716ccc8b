package admission

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTenantsOf: each candidate's tenant number names its tenant alone, with its share and use,
// however many tenants there are and however their names share a cache slot.
func TestTenantsOf(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 2026))
	// 1,000 names where the cache's 256 slots hold a few hundred, many alike at both ends.
	names := []string{""}
	for i := range 1000 {
		names = append(names, fmt.Sprintf("%c%0*d%c", 'a'+i%3, r.IntN(6), i, 'x'+i%2))
	}
	c := Capacity{Shares: map[string]Amount{}, InUse: map[string]Amount{}, DefaultShare: Amount{Jobs: -1}}
	for i, name := range names {
		if i%2 == 0 {
			c.Shares[name] = Amount{Jobs: i, GPUs: int64(2 * i)}
		}
		c.InUse[name] = Amount{Jobs: 3 * i, GPUs: int64(4 * i)}
	}
	cands := make([]Candidate, 20_000)
	for i := range cands {
		cands[i].Tenant = names[r.IntN(len(names))]
		if i > 0 && r.IntN(3) == 0 {
			cands[i].Tenant = cands[i-1].Tenant // runs of one tenant's jobs
		}
	}
	ts := tenantsOf(cands, c)
	named := map[int32]string{}
	for i, cand := range cands {
		id := ts.of[i]
		if prev, ok := named[id]; ok && prev != cand.Tenant {
			t.Fatalf("tenantsOf: candidate %d's tenant %q has number %d, which is %q's", i, cand.Tenant, id, prev)
		}
		named[id] = cand.Tenant
		share, ok := c.Shares[cand.Tenant]
		if !ok {
			share = c.DefaultShare
		}
		if ts.share[id] != share || ts.used[id] != c.InUse[cand.Tenant] {
			t.Fatalf("tenantsOf: tenant %q has share %+v and use %+v, want %+v and %+v", cand.Tenant, ts.share[id], ts.used[id], share, c.InUse[cand.Tenant])
		}
	}
	if len(named) != len(ts.share) {
		t.Errorf("tenantsOf: %d tenants numbered, %d met", len(ts.share), len(named))
	}
}
