package admission

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// reclaimSim is a random history of one region run drain by drain: tenants with nominal quotas,
// jobs arriving with priorities and lengths, decisions taken with reclaim, admissions started,
// evictions queued again in their place at once, as dispatch records them.
type reclaimSim struct {
	r        *rand.Rand
	c        FlavorCapacity // flavors and quotas; InUse and Reclaim made for each drain
	size     int64          // every job's GPUs: nominal quotas are multiples of it
	cooldown time.Duration
	budget   int
	tenants  []string
	within   map[string]bool // the tenants whose jobs preempt their own of lower priority

	now      time.Time
	next     int
	queued   map[string]*simJob
	running  map[string]*simJob
	ended    map[string]bool
	evicted  int
	admitted map[string]int // times each job was admitted
	evictOf  map[string]int // times each job was evicted
	reasons  map[EvictReason]int
}

type simJob struct {
	cand    Candidate
	need    Need
	flavor  string
	length  time.Duration
	started time.Time
	shield  string
	until   time.Time
}

const simDrain = 10 * time.Second

func newReclaimSim(seed uint64) *reclaimSim {
	r := rand.New(rand.NewPCG(seed, 31))
	s := &reclaimSim{r: r, size: int64(1 + r.IntN(2)), cooldown: time.Duration(r.IntN(4)) * simDrain, budget: []int{1, 2, 100}[r.IntN(3)],
		now: t0, queued: map[string]*simJob{}, running: map[string]*simJob{}, ended: map[string]bool{}, admitted: map[string]int{}, evictOf: map[string]int{}, reasons: map[EvictReason]int{}}
	s.c.Resources = []string{"nvidia.com/gpu", "pods"}
	capacity := s.size * int64(4+r.IntN(5))
	s.c.Flavors = []Flavor{{Name: "gpu", Capacity: Vec{capacity, 1000}}}
	s.c.Quotas = map[string]Quota{}
	left := capacity
	for i := range 2 + r.IntN(3) {
		name := fmt.Sprintf("t%d", i)
		s.tenants = append(s.tenants, name)
		nominal := min(left, s.size*int64(r.IntN(4)))
		left -= nominal
		s.c.Quotas[name] = Quota{{Nominal: Vec{nominal, 1000}}}
	}
	if s.budget < 100 && r.IntN(2) == 0 {
		s.within = map[string]bool{"t0": true}
	}
	return s
}

// arrive queues a few jobs of random tenants.
func (s *reclaimSim) arrive() {
	for range s.r.IntN(4) {
		id := fmt.Sprintf("j%03d", s.next)
		s.next++
		s.queued[id] = &simJob{cand: Candidate{ID: id, Tenant: s.tenants[s.r.IntN(len(s.tenants))], Priority: s.r.IntN(3) * 40, CreatedAt: s.now},
			need: Need{Demand: Vec{s.size, 1}}, length: time.Duration(1+s.r.IntN(30)) * simDrain}
	}
}

// capacity is the region as the next decision sees it.
func (s *reclaimSim) capacity() FlavorCapacity {
	c := s.c
	c.InUse = map[string][]Vec{}
	c.Reclaim = Reclaim{Budget: s.budget, Now: s.now, WithinTenant: s.within}
	for _, id := range sortedKeys(s.running) {
		j := s.running[id]
		u := c.InUse[j.cand.Tenant]
		if u == nil {
			u = []Vec{{0, 0}}
		}
		u[0] = Vec{u[0][0] + j.need.Demand[0], u[0][1] + j.need.Demand[1]}
		c.InUse[j.cand.Tenant] = u
		c.Reclaim.Running = append(c.Reclaim.Running, Running{ID: id, Tenant: j.cand.Tenant, Flavor: j.flavor, Demand: j.need.Demand,
			Priority: j.cand.Priority, StartedAt: j.started, Shield: j.shield, ShieldUntil: j.until})
	}
	return c
}

func sortedKeys(m map[string]*simJob) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// drain ends what has run its length, decides, and carries the decision out. It answers the
// decision and the capacity it was taken on.
func (s *reclaimSim) drain() (FlavorDecision, FlavorCapacity) {
	for _, id := range sortedKeys(s.running) {
		if j := s.running[id]; !s.now.Before(j.started.Add(j.length)) {
			delete(s.running, id)
			s.ended[id] = true
		}
	}
	var cands []Candidate
	var needs []Need
	for _, id := range sortedKeys(s.queued) {
		cands, needs = append(cands, s.queued[id].cand), append(needs, s.queued[id].need)
	}
	c := s.capacity()
	d := DecideFlavors(cands, needs, c, nil)
	for _, e := range d.Evict {
		v := s.running[e.ID]
		delete(s.running, e.ID)
		v.shield = ""
		s.queued[e.ID] = v // in its place: its created time and priority are kept
		s.evicted++
		s.evictOf[e.ID]++
		s.reasons[e.Reason]++
		if s.cooldown > 0 && e.Reason == EvictReclaimed { // a tenant's priorities cannot go back and forth
			f := s.queued[e.For]
			f.shield, f.until = v.cand.Tenant, s.now.Add(s.cooldown)
		}
	}
	for _, p := range d.Admit {
		j := s.queued[p.ID]
		delete(s.queued, p.ID)
		j.flavor, j.started = p.Flavor, s.now
		s.running[p.ID] = j
		s.admitted[p.ID]++
	}
	return d, c
}

// TestReclaimProperties runs random histories and checks, at every drain: no eviction past the
// budget, of a job already stopping or shielded from the tenant it is evicted for, nor of a job
// within its tenant's nominal quota for another tenant; the job evicted for waits for that room;
// no job is lost or counted twice; no job admitted by evicting a tenant's jobs is evicted for that
// tenant before its cool-down ends; and, every job being of one size, a tenant below its nominal
// quota by a job's worth, with a job queued, sees its use grow within three drains (an eviction, the
// admission) when the budget does not bind.
func TestReclaimProperties(t *testing.T) {
	evictions := map[EvictReason]int{}
	for seed := range uint64(200) {
		s := newReclaimSim(seed)
		short := map[string]int{}  // drains each tenant has been owed room in a row, its use not growing
		used := map[string]int64{} // its use when it was last not owed, or grew
		for step := range 120 {
			if step < 80 {
				s.arrive()
			}
			d, c := s.drain()
			name := fmt.Sprintf("seed %d drain %d", seed, step)
			checkEvictions(t, name, d, c, s)
			checkConserved(t, name, s)
			if s.budget < 100 {
				s.now = s.now.Add(simDrain)
				continue
			}
			for _, tenant := range s.tenants {
				owed, use := s.owed(tenant)
				if owed && use <= used[tenant] {
					short[tenant]++
				} else {
					short[tenant], used[tenant] = 0, use
				}
				if short[tenant] > 3 {
					t.Fatalf("%s: tenant %s below its nominal by a job, with a job queued, and its use not growing for %d drains",
						name, tenant, short[tenant])
				}
			}
			s.now = s.now.Add(simDrain)
		}
		for reason, n := range s.reasons {
			evictions[reason] += n
		}
	}
	t.Logf("evictions over the histories: %v", evictions)
	if evictions[EvictReclaimed] < 100 || evictions[EvictLowerPriority] < 20 {
		t.Errorf("the histories evicted %v: too few to show anything; make them press harder", evictions)
	}
}

// owed says whether tenant has a job queued and, with what it runs, room for one more within its
// nominal quota after this drain; and what it runs.
func (s *reclaimSim) owed(tenant string) (bool, int64) {
	queued := false
	for _, j := range s.queued {
		queued = queued || j.cand.Tenant == tenant
	}
	used := int64(0)
	for _, j := range s.running {
		if j.cand.Tenant == tenant {
			used += j.need.Demand[0]
		}
	}
	return queued && used+s.size <= s.c.Quotas[tenant][0].Nominal[0], used
}

func checkEvictions(t *testing.T, name string, d FlavorDecision, c FlavorCapacity, s *reclaimSim) {
	t.Helper()
	if len(d.Evict) > c.Reclaim.Budget {
		t.Errorf("%s: %d evictions past the budget of %d", name, len(d.Evict), c.Reclaim.Budget)
	}
	running := map[string]Running{}
	for _, j := range c.Reclaim.Running {
		running[j.ID] = j
	}
	use := map[string]int64{}
	for tenant, u := range c.InUse {
		use[tenant] = u[0][0]
	}
	waiting := map[string]Reason{}
	for _, w := range d.Waiting {
		waiting[w.ID] = w.Reason
	}
	for _, e := range d.Evict {
		v, ok := running[e.ID]
		forTenant := s.queued[e.For].cand.Tenant
		switch {
		case !ok:
			t.Fatalf("%s: evicted %s, which is not running", name, e.ID)
		case v.Shield == forTenant && c.Reclaim.Now.Before(v.ShieldUntil):
			t.Errorf("%s: evicted %s for %s, from which it is shielded until %s", name, e.ID, forTenant, v.ShieldUntil)
		case e.Reason == EvictReclaimed && (v.Tenant == forTenant || use[v.Tenant]-v.Demand[0] < s.c.Quotas[v.Tenant][0].Nominal[0]):
			t.Errorf("%s: evicted %s of %s (using %d of nominal %d) for %s", name, e.ID, v.Tenant, use[v.Tenant], s.c.Quotas[v.Tenant][0].Nominal[0], forTenant)
		case e.Reason == EvictLowerPriority && (v.Tenant != forTenant || !s.within[v.Tenant] || v.Priority >= s.queued[e.For].cand.Priority):
			t.Errorf("%s: evicted %s of %s, priority %d, for %s of %s, priority %d", name, e.ID, v.Tenant, v.Priority, e.For, forTenant, s.queued[e.For].cand.Priority)
		case waiting[e.For] != ReasonPreempting:
			t.Errorf("%s: evicted %s for %s, which waits with %q", name, e.ID, e.For, waiting[e.For])
		}
		use[v.Tenant] -= v.Demand[0]
	}
}

// checkConserved: every job submitted is queued, running or ended, once, and none ended was
// admitted more often than it was evicted, plus once.
func checkConserved(t *testing.T, name string, s *reclaimSim) {
	t.Helper()
	for i := range s.next {
		id := fmt.Sprintf("j%03d", i)
		_, q := s.queued[id]
		_, r := s.running[id]
		n := 0
		for _, in := range []bool{q, r, s.ended[id]} {
			if in {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s: job %s is queued %v, running %v, ended %v", name, id, q, r, s.ended[id])
		}
		if s.admitted[id] > s.evictOf[id]+1 {
			t.Fatalf("%s: job %s admitted %d times, evicted %d", name, id, s.admitted[id], s.evictOf[id])
		}
	}
}
