package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// TestTallyRoaming: a region's census counts each tenant's roaming jobs that allow it, and every
// roaming job of the tenant once; a job with a region of its own is no roaming job.
func TestTallyRoaming(t *testing.T) {
	job := func(tenant, own string, regions ...string) jobs.Job {
		return jobs.Job{Tenant: tenant, Region: own, Regions: regions}
	}
	all := []jobs.Job{
		job("a", "", "us-east-1", "us-west-2"),
		job("a", "", "eu-west-1", "us-west-2"),
		job("b", "", "us-east-1", "eu-west-1"),
		job("b", "us-east-1", "us-east-1", "eu-west-1"), // claimed since it was listed
	}
	got := tallyRoaming("us-east-1", all)
	want := dynamo.RegionCensus{Region: "us-east-1", Roaming: map[string]int{"a": 1, "b": 1}, RoamingAll: map[string]int{"a": 2, "b": 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tallyRoaming(us-east-1) (-want +got):\n%s", diff)
	}
}

// TestCensusKeepsQueuedByTenant: a region's census counts each tenant's jobs in the region's own
// queues, held there and backing off, batch and long-running apart, beside its roaming jobs, and keeps them as
// the region's dynamo.RegionCensus, dated when the count began.
func TestCensusKeepsQueuedByTenant(t *testing.T) {
	tables, db := testenv.Tables(t)
	js := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	batch := []map[string]any{{"kind": "Job", "metadata": map[string]any{"name": "n"}}}
	long := []map[string]any{{"kind": "Deployment", "metadata": map[string]any{"name": "svc"}}}
	var all []jobs.Job
	for i, j := range []struct {
		tenant  string
		ms      []map[string]any
		regions []string
	}{
		{"a", batch, nil}, {"a", batch, nil}, {"a", long, nil}, {"b", batch, nil},
		{"a", batch, []string{"us-east-1", "us-west-2"}},
	} {
		job := jobs.New(fmt.Sprintf("job-%d", i), j.tenant, "ns", "us-east-1", 50, nil, j.ms, now)
		if j.regions != nil {
			job.Region, job.Regions = "", j.regions
		}
		all = append(all, job)
	}
	held := jobs.New("job-held", "b", "ns", "us-east-1", 50, nil, batch, now)
	held.Spot, held.PendingReason = &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.1}, "spot_price_above_cap"
	later := now.Add(time.Hour)
	backing := jobs.New("job-backing-off", "a", "ns", "us-east-1", 50, nil, batch, now)
	backing.NotBefore, backing.PendingReason = &later, "retry_backoff"
	all = append(all, held, backing)
	if err := js.Load(ctx, all); err != nil {
		t.Fatal(err)
	}
	h := &Handler{Store: js, Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	if c := h.census(ctx, "us-east-1"); c.Jobs != 6 {
		t.Errorf("census(us-east-1) counted %d jobs in the region's own queues, held and backing off, want 6", c.Jobs)
	}
	got, err := js.Censuses(ctx, []string{"us-east-1"})
	want := dynamo.RegionCensus{Region: "us-east-1", At: now,
		Queued: map[string]dynamo.Queued{"a": {Batch: 3, LongRunning: 1},
			"b": {Batch: 2, Gated: 1, Caps: map[string][]jobs.PriceCap{"g5.xlarge": {{MaxPrice: 0.1, Jobs: 1}}}}},
		Roaming:    map[string]int{"a": 1},
		RoamingAll: map[string]int{"a": 1}}
	if diff := cmp.Diff(want, got["us-east-1"]); err != nil || diff != "" {
		t.Errorf("us-east-1's census kept = %v (-want +got):\n%s", err, diff)
	}
}
