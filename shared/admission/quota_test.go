package admission

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// of makes c tenant's job.
func of(tenant string, c Candidate) Candidate { c.Tenant = tenant; return c }

func TestDecideWithQuotas(t *testing.T) {
	two := map[string]Amount{"a": {Jobs: 2}, "b": {Jobs: 2}}
	tests := []struct {
		name string
		in   []Candidate
		cap  Capacity
		want Decision
	}{
		{"a tenant borrows what others leave idle", []Candidate{
			of("a", job("a1", 50, 0)), of("a", job("a2", 50, 1)), of("a", job("a3", 50, 2)), of("a", job("a4", 50, 3)), of("a", job("a5", 50, 4))},
			Capacity{MaxActive: 4, Shares: two},
			Decision{Admit: []string{"a1", "a2", "a3", "a4"}, Waiting: []Wait{wait("a5", ReasonCapacity, 1)}}},
		{"borrowed room is not lent again while a tenant under its share waits", []Candidate{
			of("a", job("a1", 90, 0)), of("b", job("b1", 10, 0)), of("b", job("b2", 10, 1))},
			Capacity{MaxActive: 4, ActiveJobs: 3, Shares: two, InUse: map[string]Amount{"a": {Jobs: 3}}},
			Decision{Admit: []string{"b1"}, Waiting: []Wait{wait("a1", ReasonTenantQuotaExhausted, 1), wait("b2", ReasonCapacity, 2)}}},
		{"and is lent when nobody under its share waits", []Candidate{of("a", job("a1", 90, 0)), of("a", job("a2", 90, 1))},
			Capacity{MaxActive: 4, ActiveJobs: 3, Shares: two, InUse: map[string]Amount{"a": {Jobs: 3}}},
			Decision{Admit: []string{"a1"}, Waiting: []Wait{wait("a2", ReasonCapacity, 1)}}},
		{"room beyond what the waiting shares need is lent", []Candidate{
			of("a", gpus(job("a1", 50, 0), 0)), of("b", gpus(job("b-big", 50, 0), 4))},
			Capacity{MaxActive: 4, MaxGPUs: 8, ActiveJobs: 2, ActiveGPUs: 6, Shares: map[string]Amount{"a": {Jobs: 1}, "b": {Jobs: 2, GPUs: 8}},
				InUse: map[string]Amount{"a": {Jobs: 1, GPUs: 6}, "b": {Jobs: 1}}},
			Decision{Admit: []string{"a1"}, Waiting: []Wait{wait("b-big", ReasonCapacity, 1)}}},
		{"but not the GPUs they need", []Candidate{
			of("a", gpus(job("a1", 50, 0), 1)), of("b", gpus(job("b-big", 50, 0), 4))},
			Capacity{MaxActive: 4, MaxGPUs: 8, ActiveJobs: 2, ActiveGPUs: 6, Shares: map[string]Amount{"a": {Jobs: 1, GPUs: 6}, "b": {Jobs: 2, GPUs: 8}},
				InUse: map[string]Amount{"a": {Jobs: 1, GPUs: 6}, "b": {Jobs: 1}}},
			// b, at 1 of its 2 jobs, is further below its share than a, at its 1 job, and goes first.
			Decision{Waiting: []Wait{wait("b-big", ReasonCapacity, 1), wait("a1", ReasonTenantQuotaExhausted, 2)}}},
		{"among equal priorities the tenant furthest below its share goes first", []Candidate{
			of("a", job("a1", 50, 0)), of("a", job("a2", 50, 1)), of("b", job("b1", 50, 2)), of("c", job("c1", 50, 3))},
			Capacity{MaxActive: 5, ActiveJobs: 3, Shares: map[string]Amount{"a": {Jobs: 4}, "b": {Jobs: 2}, "c": {Jobs: 2}},
				InUse: map[string]Amount{"a": {Jobs: 1}, "b": {Jobs: 1}, "c": {Jobs: 1}}},
			// a1 would put a at 2/4, b1 b at 2/2, c1 c at 2/2, a2 a at 3/4.
			Decision{Admit: []string{"a1", "a2"}, Waiting: []Wait{wait("b1", ReasonCapacity, 1), wait("c1", ReasonCapacity, 2)}}},
		{"a share is sure whatever the borrower's priority", []Candidate{of("a", job("a-hi", 100, 0)), of("b", job("b-lo", 0, 0))},
			Capacity{MaxActive: 3, ActiveJobs: 2, Shares: two, InUse: map[string]Amount{"a": {Jobs: 2}}},
			// Once b-lo is in, nobody under its share waits: a-hi waits for room, and is next.
			Decision{Admit: []string{"b-lo"}, Waiting: []Wait{wait("a-hi", ReasonCapacity, 1)}}},
		{"priority orders a tenant's own jobs", []Candidate{of("a", job("a-lo", 10, 0)), of("a", job("a-hi", 90, 1))},
			Capacity{MaxActive: 1, Shares: two},
			Decision{Admit: []string{"a-hi"}, Waiting: []Wait{wait("a-lo", ReasonCapacity, 1)}}},
		{"the default share is every unnamed tenant's, the no-tenant one too", []Candidate{of("", job("anon", 50, 0)), of("x", job("x1", 50, time.Second)), of("x", job("x2", 50, 2*time.Second))},
			Capacity{MaxActive: 2, DefaultShare: Amount{Jobs: 1}},
			Decision{Admit: []string{"anon", "x1"}, Waiting: []Wait{wait("x2", ReasonCapacity, 1)}}},
		{"a capped job waits on its price under quotas too", []Candidate{of("a", capped(job("a1", 50, 0), "g5.xlarge", 0.1)), of("a", job("a2", 40, 0))},
			Capacity{MaxActive: 2, Shares: two},
			Decision{Admit: []string{"a2"}, Waiting: []Wait{wait("a1", ReasonSpotPriceAboveCap, 1)}}},
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
