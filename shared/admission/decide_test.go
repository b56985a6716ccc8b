package admission

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// job is a candidate of priority prio created age after t0.
func job(id string, prio int, age time.Duration) Candidate {
	return Candidate{ID: id, Priority: prio, CreatedAt: t0.Add(age)}
}

func gpus(c Candidate, n int64) Candidate { c.GPUs = n; return c }

func capped(c Candidate, instanceType string, maxPrice float64) Candidate {
	c.Spot = &jobs.Spot{InstanceType: instanceType, MaxPrice: maxPrice}
	return c
}

func wait(id string, r Reason, pos int) Wait { return Wait{ID: id, Reason: r, Position: pos} }

// devPrices are the prices of the "done when": g5.xlarge at $0.55 in the region.
var devPrices = map[string]spotgate.Observation{
	"g5.xlarge": {Price: 0.55, Known: true},
	"m5.large":  {Price: 0.031, Known: true},
	"p4d":       {Known: false},
}

func TestDecide(t *testing.T) {
	one := Capacity{MaxActive: 1}
	tests := []struct {
		name   string
		in     []Candidate
		cap    Capacity
		prices map[string]spotgate.Observation
		want   Decision
	}{
		{"nothing queued", nil, one, nil, Decision{}},
		{"the issue's three jobs at capacity 1", []Candidate{job("p10", 10, 0), job("p90", 90, time.Second), job("p50", 50, 2*time.Second)}, one, nil,
			Decision{Admit: []string{"p90"}, Waiting: []Wait{
				wait("p50", ReasonCapacity, 1), wait("p10", ReasonQueuedBehindHigherPriority, 2)}}},
		{"a gated priority-100 job holds nobody up", []Candidate{
			job("p10", 10, 0), job("p90", 90, 0), capped(job("p100", 100, 0), "g5.xlarge", 0.40), job("p50", 50, 0)}, one, devPrices,
			Decision{Admit: []string{"p90"}, Waiting: []Wait{
				wait("p100", ReasonSpotPriceAboveCap, 1), wait("p50", ReasonCapacity, 2), wait("p10", ReasonQueuedBehindHigherPriority, 3)}}},
		{"price at the cap is admitted", []Candidate{capped(job("a", 50, 0), "g5.xlarge", 0.55)}, one, devPrices,
			Decision{Admit: []string{"a"}}},
		{"price a hair above the cap", []Candidate{capped(job("a", 50, 0), "g5.xlarge", 0.549999)}, one, devPrices,
			Decision{Waiting: []Wait{wait("a", ReasonSpotPriceAboveCap, 1)}}},
		{"no observation, or an unknown one, fails closed", []Candidate{
			capped(job("unobserved", 50, 0), "c5.large", 10), capped(job("unknown", 50, time.Second), "p4d", 10), capped(job("untyped", 50, 2*time.Second), "", 10)},
			Capacity{MaxActive: 10}, devPrices,
			Decision{Waiting: []Wait{
				wait("unobserved", ReasonSpotPriceUnknown, 1), wait("unknown", ReasonSpotPriceUnknown, 2), wait("untyped", ReasonSpotPriceUnknown, 3)}}},
		{"nil prices hold every capped job", []Candidate{capped(job("a", 50, 0), "m5.large", 1), job("b", 40, 0)}, one, nil,
			Decision{Admit: []string{"b"}, Waiting: []Wait{wait("a", ReasonSpotPriceUnknown, 1)}}},
		{"a gated job in a full region names its price", []Candidate{capped(job("a", 90, 0), "g5.xlarge", 0.1), job("b", 50, 0)},
			Capacity{MaxActive: 1, ActiveJobs: 1}, devPrices,
			Decision{Waiting: []Wait{wait("a", ReasonSpotPriceAboveCap, 1), wait("b", ReasonCapacity, 2)}}},
		{"ties go to the oldest, then to the lower ID", []Candidate{
			job("young", 50, time.Hour), job("b-same", 50, time.Minute), job("old", 50, 0), job("a-same", 50, time.Minute)},
			Capacity{MaxActive: 2}, nil,
			Decision{Admit: []string{"old", "a-same"}, Waiting: []Wait{
				wait("b-same", ReasonCapacity, 1), wait("young", ReasonCapacity, 2)}}},
		{"nanoseconds order two jobs of one second", []Candidate{job("later", 50, time.Nanosecond), job("first", 50, 0)}, one, nil,
			Decision{Admit: []string{"first"}, Waiting: []Wait{wait("later", ReasonCapacity, 1)}}},
		{"a full region: the top priority waits for capacity, the rest behind it", []Candidate{
			job("p90-new", 90, time.Hour), job("p90-old", 90, 0), job("p50", 50, 0), job("p10", 10, 0)},
			Capacity{MaxActive: 3, ActiveJobs: 3}, nil,
			Decision{Waiting: []Wait{
				wait("p90-old", ReasonCapacity, 1), wait("p90-new", ReasonCapacity, 2),
				wait("p50", ReasonQueuedBehindHigherPriority, 3), wait("p10", ReasonQueuedBehindHigherPriority, 4)}}},
		{"more active than allowed (the limit was lowered) admits nothing", []Candidate{job("a", 50, 0)},
			Capacity{MaxActive: 2, ActiveJobs: 5}, nil,
			Decision{Waiting: []Wait{wait("a", ReasonCapacity, 1)}}},
		{"MaxActive 0 admits nothing", []Candidate{job("a", 50, 0)}, Capacity{}, nil,
			Decision{Waiting: []Wait{wait("a", ReasonCapacity, 1)}}},
		{"a job too large for the GPUs left is passed over for smaller ones", []Candidate{
			gpus(job("p90-8gpu", 90, 0), 8), gpus(job("p80-4gpu", 80, 0), 4), gpus(job("p70-4gpu", 70, 0), 4),
			gpus(job("p60-2gpu", 60, 0), 2), job("p50-cpu", 50, 0)},
			Capacity{MaxActive: 10, MaxGPUs: 8, ActiveGPUs: 2}, nil,
			Decision{Admit: []string{"p80-4gpu", "p60-2gpu", "p50-cpu"}, Waiting: []Wait{
				wait("p90-8gpu", ReasonCapacity, 1), wait("p70-4gpu", ReasonQueuedBehindHigherPriority, 2)}}},
		{"GPUs exactly filling the budget", []Candidate{gpus(job("a", 50, 0), 6), gpus(job("b", 50, time.Second), 1)},
			Capacity{MaxActive: 10, MaxGPUs: 8, ActiveGPUs: 2}, nil,
			Decision{Admit: []string{"a"}, Waiting: []Wait{wait("b", ReasonCapacity, 1)}}},
		{"a GPU cap lowered under use still admits jobs needing no GPU", []Candidate{gpus(job("gpu", 90, 0), 1), job("cpu", 10, 0)},
			Capacity{MaxActive: 10, MaxGPUs: 4, ActiveGPUs: 6}, nil,
			Decision{Admit: []string{"cpu"}, Waiting: []Wait{wait("gpu", ReasonCapacity, 1)}}},
		{"no GPU cap", []Candidate{gpus(job("huge", 50, 0), 1024)}, Capacity{MaxActive: 1, ActiveGPUs: 4096}, nil,
			Decision{Admit: []string{"huge"}}},
		{"a negative GPU count is read as none", []Candidate{gpus(job("neg", 90, 0), -5), gpus(job("b", 50, 0), 4)},
			Capacity{MaxActive: 10, MaxGPUs: 4}, nil,
			Decision{Admit: []string{"neg", "b"}}},
		{"slots run out after a GPU skip", []Candidate{gpus(job("big", 90, 0), 16), job("a", 50, 0), job("b", 40, 0)},
			Capacity{MaxActive: 1, MaxGPUs: 8}, nil,
			Decision{Admit: []string{"a"}, Waiting: []Wait{wait("big", ReasonCapacity, 1), wait("b", ReasonQueuedBehindHigherPriority, 2)}}},
		{"a gated job ahead does not put capacity waiters behind it", []Candidate{
			capped(job("gated", 90, 0), "g5.xlarge", 0.1), job("a", 50, 0), job("b", 50, time.Second)},
			Capacity{MaxActive: 1, ActiveJobs: 1}, devPrices,
			Decision{Waiting: []Wait{wait("gated", ReasonSpotPriceAboveCap, 1), wait("a", ReasonCapacity, 2), wait("b", ReasonCapacity, 3)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.in, tt.cap, tt.prices)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestDecideRunsInPriorityOrder plays the "done when" over several calls: capacity 1,
// queued jobs of priorities 10, 90 and 50 and a gated one of 100. Each admitted job runs to its
// end before the next call.
func TestDecideRunsInPriorityOrder(t *testing.T) {
	queued := []Candidate{job("p10", 10, 0), job("p90", 90, time.Minute), job("p50", 50, 2*time.Minute),
		capped(job("p100", 100, 0), "g5.xlarge", 0.40)}
	var ran []string
	for call := 1; len(queued) > 1; call++ {
		if call > 10 {
			t.Fatalf("after %d calls still queued: %v", call, queued)
		}
		d := Decide(queued, Capacity{MaxActive: 1}, devPrices)
		if len(d.Admit) != 1 {
			t.Fatalf("call %d: Decide admitted %v, want one job", call, d.Admit)
		}
		ran = append(ran, d.Admit[0])
		for i, c := range queued {
			if c.ID == d.Admit[0] {
				queued = append(queued[:i:i], queued[i+1:]...)
				break
			}
		}
	}
	if diff := cmp.Diff([]string{"p90", "p50", "p10"}, ran); diff != "" {
		t.Errorf("order run at capacity 1 (-want +got):\n%s", diff)
	}
	if queued[0].ID != "p100" {
		t.Errorf("left queued %v, want the gated p100", queued)
	}
}
