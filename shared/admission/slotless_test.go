package admission

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/jobs"
)

// free makes c a slotless (long-running) job.
func free(c Candidate) Candidate { c.Slotless = true; return c }

func TestDecideSlotless(t *testing.T) {
	tests := []struct {
		name string
		in   []Candidate
		cap  Capacity
		want Decision
	}{
		{"a long-running job takes no slot of a full region", []Candidate{free(job("svc", 50, 0)), job("batch", 90, 0)},
			Capacity{MaxActive: 2, ActiveJobs: 2, MaxSlotless: 5},
			Decision{Admit: []string{"svc"}, Waiting: []Wait{wait("batch", ReasonCapacity, 1)}}},
		{"nor leaves a batch job without the slot it would have had", []Candidate{free(job("svc", 90, 0)), job("batch", 50, 0)},
			Capacity{MaxActive: 1, MaxSlotless: 5},
			Decision{Admit: []string{"svc", "batch"}}},
		{"its GPUs count against the region's cap", []Candidate{free(gpus(job("svc", 90, 0), 4)), gpus(job("batch", 50, 0), 2)},
			Capacity{MaxActive: 4, MaxGPUs: 5, MaxSlotless: 5},
			Decision{Admit: []string{"svc"}, Waiting: []Wait{wait("batch", ReasonCapacity, 1)}}},
		{"and one the GPUs left do not fit waits for room", []Candidate{free(gpus(job("svc", 90, 0), 4))},
			Capacity{MaxActive: 4, MaxGPUs: 8, ActiveGPUs: 6, MaxSlotless: 5},
			Decision{Waiting: []Wait{wait("svc", ReasonCapacity, 1)}}},
		{"a tenant at its limit of long-running jobs waits, blocking nobody", []Candidate{
			of("a", free(job("a-svc", 90, 0))), of("b", free(job("b-svc", 50, 0))), of("a", job("a-batch", 40, 0))},
			Capacity{MaxActive: 1, MaxSlotless: 2, SlotlessInUse: map[string]int{"a": 2, "b": 1}},
			Decision{Admit: []string{"b-svc", "a-batch"}, Waiting: []Wait{wait("a-svc", ReasonSlotlessLimit, 1)}}},
		{"the limit counts what a decision admits", []Candidate{free(job("s1", 50, 0)), free(job("s2", 50, 1)), free(job("s3", 50, 2))},
			Capacity{MaxActive: 1, MaxSlotless: 2},
			Decision{Admit: []string{"s1", "s2"}, Waiting: []Wait{wait("s3", ReasonSlotlessLimit, 1)}}},
		{"a limit of 0 admits none", []Candidate{free(job("svc", 50, 0))},
			Capacity{MaxActive: 1},
			Decision{Waiting: []Wait{wait("svc", ReasonSlotlessLimit, 1)}}},
		{"a region without room is closed to them too", []Candidate{free(job("svc", 50, 0))},
			Capacity{MaxSlotless: 5},
			Decision{Waiting: []Wait{wait("svc", ReasonSlotlessLimit, 1)}}},
		{"a capped one waits on its price first", []Candidate{free(capped(job("svc", 50, 0), "g5.xlarge", 0.1))},
			Capacity{MaxActive: 1, MaxSlotless: 5},
			Decision{Waiting: []Wait{wait("svc", ReasonSpotPriceAboveCap, 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.in, tt.cap, devPrices)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestDecideSlotlessWithQuotas(t *testing.T) {
	tests := []struct {
		name string
		in   []Candidate
		cap  Capacity
		want Decision
	}{
		{"a tenant at its share of jobs still starts a long-running job", []Candidate{
			of("a", free(job("a-svc", 50, 0))), of("a", job("a-batch", 50, 1)), of("b", job("b1", 50, 2))},
			Capacity{MaxActive: 2, ActiveJobs: 1, Shares: map[string]Amount{"a": {Jobs: 1}, "b": {Jobs: 1}},
				InUse: map[string]Amount{"a": {Jobs: 1}}, MaxSlotless: 3},
			Decision{Admit: []string{"a-svc", "b1"}, Waiting: []Wait{wait("a-batch", ReasonCapacity, 1)}}},
		{"but its GPUs count against its share: beyond it, it borrows only what nobody under a share waits for", []Candidate{
			of("a", free(gpus(job("a-svc", 90, 0), 4))), of("b", gpus(job("b1", 10, 0), 6))},
			Capacity{MaxActive: 4, MaxGPUs: 8, ActiveGPUs: 4, Shares: map[string]Amount{"a": {Jobs: 2, GPUs: 4}, "b": {Jobs: 2, GPUs: 6}},
				InUse: map[string]Amount{"a": {GPUs: 4}}, MaxSlotless: 3, SlotlessInUse: map[string]int{"a": 1}},
			// b1 is within b's share and owed the GPUs a's running service leaves; a-svc may not borrow them.
			Decision{Waiting: []Wait{wait("a-svc", ReasonTenantQuotaExhausted, 1), wait("b1", ReasonCapacity, 2)}}},
		{"and is lent idle GPUs when nobody else waits", []Candidate{of("a", free(gpus(job("a-svc", 90, 0), 4)))},
			Capacity{MaxActive: 4, MaxGPUs: 8, ActiveGPUs: 4, Shares: map[string]Amount{"a": {Jobs: 2, GPUs: 4}, "b": {Jobs: 2, GPUs: 4}},
				InUse: map[string]Amount{"a": {GPUs: 4}}, MaxSlotless: 3, SlotlessInUse: map[string]int{"a": 1}},
			Decision{Admit: []string{"a-svc"}}},
		{"the per-tenant limit holds under quotas", []Candidate{of("a", free(job("a1", 50, 0))), of("a", free(job("a2", 50, 1)))},
			Capacity{MaxActive: 4, Shares: map[string]Amount{"a": {Jobs: 4}}, MaxSlotless: 3, SlotlessInUse: map[string]int{"a": 2}},
			Decision{Admit: []string{"a1"}, Waiting: []Wait{wait("a2", ReasonSlotlessLimit, 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.in, tt.cap, devPrices)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestUseCountsLongRunningGPUsNotSlots(t *testing.T) {
	active := []jobs.Job{
		{Tenant: "a", Kind: jobs.KindLongRunning, GPUs: 4},
		{Tenant: "a", Kind: jobs.KindBatch, GPUs: 1},
		{Tenant: "a", GPUs: 2}, // stored before kinds: batch
		{Tenant: "b", Kind: jobs.KindLongRunning},
	}
	if diff := cmp.Diff(map[string]Amount{"a": {Jobs: 2, GPUs: 7}, "b": {}}, Use(active, false)); diff != "" {
		t.Errorf("Use(long-running jobs hold no slot) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]Amount{"a": {Jobs: 3, GPUs: 7}, "b": {Jobs: 1}}, Use(active, true)); diff != "" {
		t.Errorf("Use(long-running jobs hold a slot) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 1}, SlotlessUse(active, false)); diff != "" {
		t.Errorf("SlotlessUse (-want +got):\n%s", diff)
	}
	if got := SlotlessUse(active, true); got != nil {
		t.Errorf("SlotlessUse when they hold slots = %v, want nil", got)
	}
}

// TestSlotlessProperties checks, over random queues mixing slotless jobs in, with and without
// quotas, that slot-holding jobs never exceed the free slots, no tenant exceeds its slotless
// limit, the GPUs admitted fit the cap, and every candidate is decided once.
func TestSlotlessProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 7))
	for n := range 3000 {
		pc := randomCase(r)
		tenants := []string{"a", "b", "c"}
		for i := range pc.cands {
			pc.cands[i].Tenant = tenants[r.IntN(len(tenants))]
			pc.cands[i].Slotless = r.IntN(2) == 0
		}
		pc.cap.MaxSlotless = r.IntN(4)
		pc.cap.SlotlessInUse = map[string]int{"a": r.IntN(4), "b": r.IntN(2)}
		if n%2 == 0 {
			pc.cap.Shares = map[string]Amount{"a": {Jobs: r.IntN(4), GPUs: int64(r.IntN(8))}, "b": {Jobs: r.IntN(4), GPUs: int64(r.IntN(8))}}
		}
		d := Decide(pc.cands, pc.cap, pc.prices)
		byID := map[string]Candidate{}
		for _, c := range pc.cands {
			byID[c.ID] = c
		}
		slots, gpus, perTenant := 0, int64(0), map[string]int{}
		for _, id := range d.Admit {
			c := byID[id]
			if c.Slotless {
				perTenant[c.Tenant]++
			} else {
				slots++
			}
			gpus += max(c.GPUs, 0)
		}
		if free := max(pc.cap.MaxActive-pc.cap.ActiveJobs, 0); slots > free {
			t.Fatalf("case %d: %d slot-holding jobs admitted into %d free slots: %+v", n, slots, free, d)
		}
		for tn, k := range perTenant {
			limit := max(pc.cap.MaxSlotless-pc.cap.SlotlessInUse[tn], 0)
			if pc.cap.MaxActive <= 0 {
				limit = 0
			}
			if k > limit {
				t.Fatalf("case %d: tenant %s started %d slotless jobs, limit %d", n, tn, k, limit)
			}
		}
		if pc.cap.MaxGPUs > 0 && gpus > 0 && gpus > max(pc.cap.MaxGPUs-pc.cap.ActiveGPUs, 0) {
			t.Fatalf("case %d: %d GPUs admitted, %d left of the cap", n, gpus, pc.cap.MaxGPUs-pc.cap.ActiveGPUs)
		}
		if got := len(d.Admit) + len(d.Waiting); got != len(pc.cands) {
			t.Fatalf("case %d: %d decided of %d candidates", n, got, len(pc.cands))
		}
		for _, w := range d.Waiting {
			if w.Reason == ReasonSlotlessLimit && !byID[w.ID].Slotless {
				t.Fatalf("case %d: batch job %s waits for the slotless limit", n, w.ID)
			}
		}
	}
}
