package dynamo_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
)

// TestClaimInOnce: a roaming job is claimed by exactly one of many drains of two regions racing
// for it, in a region it allows, leaves the roaming queue for that region's active jobs, and a
// claim into a region it does not allow, or of a job that already has its region, is refused.
func TestClaimInOnce(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	ctx, now := context.Background(), time.Now()
	create := func(id, region string, regions ...string) {
		t.Helper()
		j := jobs.New(id, "ml", "team-a", region, 50, nil, []map[string]any{{"kind": "ConfigMap"}}, now)
		j.Regions = regions
		if _, _, err := s.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
			t.Fatal(err)
		}
	}
	create("job-roam", "", "us-east-1", "us-west-2")
	create("job-plain", "us-east-1")
	if roaming, err := s.Roaming(ctx); err != nil || len(roaming) != 1 || roaming[0].ID != "job-roam" || len(roaming[0].Regions) != 2 {
		t.Fatalf("Roaming = %+v, %v; want job-roam with its two regions", roaming, err)
	}
	why := jobs.RegionChoice{Reason: "lowest_price"}
	if _, err := s.ClaimIn(ctx, "job-roam", "eu-west-1", "", why, "tok-x", now, now.Add(time.Minute)); !errors.Is(err, records.ErrStale) {
		t.Errorf("ClaimIn into a region the job does not allow = %v; want records.ErrStale", err)
	}
	if _, err := s.ClaimIn(ctx, "job-plain", "us-east-1", "", why, "tok-y", now, now.Add(time.Minute)); !errors.Is(err, records.ErrStale) {
		t.Errorf("ClaimIn of a job with its own region = %v; want records.ErrStale", err)
	}

	regions := []string{"us-east-1", "us-west-2"}
	var wg sync.WaitGroup
	won := make([]jobs.Job, 16)
	errs := make([]error, 16)
	for i := range won {
		wg.Go(func() {
			won[i], errs[i] = s.ClaimIn(ctx, "job-roam", regions[i%2], "", why, "tok-"+string(rune('a'+i)), now, now.Add(time.Minute))
		})
	}
	wg.Wait()
	var winner *jobs.Job
	for i, err := range errs {
		switch {
		case err == nil && winner != nil:
			t.Fatalf("two claims won: %s and %s", winner.Region, won[i].Region)
		case err == nil:
			winner = &won[i]
		case !errors.Is(err, records.ErrStale):
			t.Fatalf("ClaimIn: %v", err)
		}
	}
	if winner == nil {
		t.Fatal("no claim won")
	}
	if winner.Status != jobs.StatusDispatching || winner.RegionChoice == nil || winner.RegionChoice.Region != winner.Region {
		t.Errorf("the winner's record = %s in %s, choice %+v; want dispatching with its region chosen", winner.Status, winner.Region, winner.RegionChoice)
	}
	active, err := s.Active(ctx, winner.Region)
	if err != nil || len(active) != 1 || active[0].ID != "job-roam" {
		t.Errorf("Active(%s) = %v, %v; want the claimed job", winner.Region, active, err)
	}
	if roaming, err := s.Roaming(ctx); err != nil || len(roaming) != 0 {
		t.Errorf("Roaming after the claim = %v, %v; want none", roaming, err)
	}
}

// TestRegionSummaries: what a drain keeps of its region is read back by region; a region that
// kept none is left out.
func TestRegionSummaries(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	want := jobs.RegionSummary{Region: "us-east-1", Room: true, Queue: 3, At: at, TenantsFull: []string{"a", "b"}}
	if err := s.PutRegionSummary(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.RegionSummaries(ctx, []string{"us-east-1", "us-west-2"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]jobs.RegionSummary{"us-east-1": want}, got); diff != "" {
		t.Errorf("RegionSummaries: want us-east-1's alone (-want +got):\n%s", diff)
	}
}
