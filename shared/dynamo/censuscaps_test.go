package dynamo

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/jobs"
)

// TestQueuedAdd: two queues' counts of a tenant add up; the jobs at one cap of one type are added
// together, and each type's caps stay lowest first. Neither side is written to.
func TestQueuedAdd(t *testing.T) {
	batch := Queued{Batch: 3, Gated: 1, Caps: map[string][]jobs.PriceCap{
		"g5.xlarge": {{MaxPrice: 0.2, Jobs: 1}, {MaxPrice: 0.4, Jobs: 2}},
	}}
	long := Queued{LongRunning: 2, Gated: 2, Caps: map[string][]jobs.PriceCap{
		"g5.xlarge":    {{MaxPrice: 0.3, Jobs: 1}, {MaxPrice: 0.4, Jobs: 1}},
		"p4d.24xlarge": {{MaxPrice: 12, Jobs: 1}},
	}}
	got := batch.Add(long)
	want := Queued{Batch: 3, LongRunning: 2, Gated: 3, Caps: map[string][]jobs.PriceCap{
		"g5.xlarge":    {{MaxPrice: 0.2, Jobs: 1}, {MaxPrice: 0.3, Jobs: 1}, {MaxPrice: 0.4, Jobs: 3}},
		"p4d.24xlarge": {{MaxPrice: 12, Jobs: 1}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Add (-want +got):\n%s", diff)
	}
	if got.Jobs() != 5 {
		t.Errorf("Jobs() = %d, want 5", got.Jobs())
	}
	if batch.Caps["g5.xlarge"][1].Jobs != 2 || len(batch.Caps) != 1 {
		t.Errorf("Add wrote to its receiver: %+v", batch)
	}
	if got := (Queued{}).Add(Queued{Batch: 1}); got.Caps != nil {
		t.Errorf("Add of two counts without caps has caps %v, want nil", got.Caps)
	}
}

// TestQueuedCompact: a tenant that gives its jobs more than censusCaps caps in a region keeps, in
// its census, the censusCaps the most jobs wait with (the lower cap first among equals); one with
// fewer keeps them all.
func TestQueuedCompact(t *testing.T) {
	q := Queued{Batch: 1000, Caps: map[string][]jobs.PriceCap{}}
	for i := range 1000 {
		typ := fmt.Sprintf("t%d.large", i%50)
		q.Caps[typ] = append(q.Caps[typ], jobs.PriceCap{MaxPrice: float64(i) / 100, Jobs: 1})
	}
	q.Caps["g5.xlarge"] = []jobs.PriceCap{{MaxPrice: 0.5, Jobs: 400}, {MaxPrice: 0.6, Jobs: 300}}
	got := q.compact()
	n := 0
	for _, cs := range got.Caps {
		n += len(cs)
	}
	if n != censusCaps || got.Batch != 1000 {
		t.Fatalf("compact kept %d caps (batch %d), want %d (batch 1000)", n, got.Batch, censusCaps)
	}
	if diff := cmp.Diff([]jobs.PriceCap{{MaxPrice: 0.5, Jobs: 400}, {MaxPrice: 0.6, Jobs: 300}}, got.Caps["g5.xlarge"]); diff != "" {
		t.Errorf("compact: g5.xlarge's caps, the most jobs' (-want +got):\n%s", diff)
	}
	// The other 14 are of one job each: the lowest caps, 0.00 to 0.13, types t0 to t13.
	if cs := got.Caps["t13.large"]; len(cs) != 1 || cs[0].MaxPrice != 0.13 || len(got.Caps["t14.large"]) != 0 {
		t.Errorf("compact kept t13.large %v and t14.large %v, want 0.13 alone and none", cs, got.Caps["t14.large"])
	}
	few := Queued{Batch: 2, Caps: map[string][]jobs.PriceCap{"g5.xlarge": {{MaxPrice: 0.2, Jobs: 2}}}}
	if diff := cmp.Diff(few, few.compact()); diff != "" {
		t.Errorf("compact of one cap (-want +got):\n%s", diff)
	}
}
