package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// TestCensusByTenant: a census of a region's queues and held jobs counts each tenant's jobs there,
// batch and long-running apart (a held job by its kind), those that wait for their spot price,
// and their caps by instance type; a region's census kept and read back holds them, and Waiting
// says which regions hold any job.
func TestCensusByTenant(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour)
	batch := []map[string]any{{"kind": "Job", "metadata": map[string]any{"name": "n"}}}
	long := []map[string]any{{"kind": "Deployment", "metadata": map[string]any{"name": "svc"}}}
	var all []jobs.Job
	add := func(tenant string, ms []map[string]any, spot *jobs.Spot, reason string) {
		j := jobs.New(fmt.Sprintf("job-%02d", len(all)), tenant, "ns-"+tenant, "us-east-1", 50, nil, ms, base.Add(time.Duration(len(all))*time.Second))
		j.Spot, j.PendingReason = spot, reason
		all = append(all, j)
	}
	g5 := func(p float64) *jobs.Spot { return &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: p} }
	add("a", batch, nil, "capacity")
	add("a", batch, g5(0.3), "spot_price_above_cap")
	add("a", batch, g5(0.3), "spot_price_unknown")
	add("a", batch, g5(0.2), "capacity")
	add("a", long, nil, "")
	add("a", long, g5(0.1), "spot_price_above_cap") // held, as the one above at 0.3
	add("b", batch, &jobs.Spot{InstanceType: "p4d.24xlarge", MaxPrice: 12}, "spot_price_above_cap")
	if err := s.Load(ctx, all); err != nil {
		t.Fatal(err)
	}
	byTenant := map[string]dynamo.Queued{}
	for _, q := range []dynamo.Queue{dynamo.RegionQueue("us-east-1"), dynamo.LongRunningQueue("us-east-1"), dynamo.HeldQueue("us-east-1"), dynamo.BackoffQueue("us-east-1")} {
		c, err := s.Census(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for tenant, n := range c.Tenants {
			byTenant[tenant] = byTenant[tenant].Add(n)
		}
	}
	want := map[string]dynamo.Queued{
		"a": {Batch: 4, LongRunning: 2, Gated: 3, Caps: map[string][]jobs.PriceCap{"g5.xlarge": {{MaxPrice: 0.1, Jobs: 1}, {MaxPrice: 0.2, Jobs: 1}, {MaxPrice: 0.3, Jobs: 2}}}},
		"b": {Batch: 1, Gated: 1, Caps: map[string][]jobs.PriceCap{"p4d.24xlarge": {{MaxPrice: 12, Jobs: 1}}}},
	}
	if diff := cmp.Diff(want, byTenant); diff != "" {
		t.Errorf("Census of us-east-1's queues by tenant (-want +got):\n%s", diff)
	}

	at := time.Now().UTC().Truncate(time.Second)
	if err := s.PutCensus(ctx, dynamo.RegionCensus{Region: "us-east-1", At: at, Queued: byTenant, RoamingAll: map[string]int{"a": 1}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Censuses(ctx, []string{"us-east-1", "us-west-2"})
	wantKept := map[string]dynamo.RegionCensus{"us-east-1": {Region: "us-east-1", At: at, Queued: want, RoamingAll: map[string]int{"a": 1}}}
	if diff := cmp.Diff(wantKept, got); err != nil || diff != "" {
		t.Errorf("Censuses after PutCensus = %v (-want +got):\n%s", err, diff)
	}

	// A region whose only waiting job is held waits all the same; so does one whose only job backs
	// off.
	held := jobs.New("job-held-west", "a", "ns-a", "us-west-2", 50, nil, batch, base)
	held.Spot, held.PendingReason = g5(0.1), "spot_price_above_cap"
	if err := s.Load(ctx, []jobs.Job{held}); err != nil || !dynamo.Held(held) {
		t.Fatalf("loading a held job: %v (held %v)", err, dynamo.Held(held))
	}
	later := time.Now().Add(time.Hour)
	backing := jobs.New("job-backoff-eu", "a", "ns-a", "eu-west-1", 50, nil, batch, base)
	backing.NotBefore, backing.PendingReason = &later, "retry_backoff"
	if err := s.Load(ctx, []jobs.Job{backing}); err != nil || !dynamo.BackingOff(backing) {
		t.Fatalf("loading a job backing off: %v (backing off %v)", err, dynamo.BackingOff(backing))
	}
	waiting, roaming, err := s.Waiting(ctx, []string{"us-east-1", "us-west-2", "eu-west-1", "ap-south-1"})
	if err != nil || !cmp.Equal(waiting, map[string]bool{"us-east-1": true, "us-west-2": true, "eu-west-1": true, "ap-south-1": false}) || roaming {
		t.Errorf("Waiting = %v, %v, %v; want every region but ap-south-1, and no roaming job", waiting, roaming, err)
	}
}
