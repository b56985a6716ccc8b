package dispatch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestRoamingJobLeavesARegionFullForItsTenant: a job that may run in us-east-1 or us-west-2 is
// cheaper in us-east-1, where its tenant holds its whole share and the room left is owed to
// another tenant's job within its share. us-east-1's drain holds it there for its tenant's share,
// says so in its summary and rings us-west-2, whose drain takes it up: it runs in us-west-2, claimed
// once, though both regions' drains run at once, and every drain a ring starts runs at once with
// the others of its round.
func TestRoamingJobLeavesARegionFullForItsTenant(t *testing.T) {
	r := newRigIn(t, func(string) int { return 2 }, region, west)
	r.prices(t, map[string]float64{region: 0.30, west: 0.50})
	r.dispatch.GPUs = func(reg string) int64 { return map[string]int64{region: 1}[reg] }
	tenants := dynamo.NewTenantStore(r.db, r.tables.Control)
	for name, q := range map[string]tenancy.Quota{"ml": {Jobs: 1}, "u": {Jobs: 2, GPUs: 2}} {
		if err := tenants.PutTenant(context.Background(), tenancy.Tenant{Name: name, Org: "acme", Namespaces: []string{r.ns},
			Role: tenancy.RoleMember, CreatedAt: time.Now(), Quotas: map[string]tenancy.Quota{region: q}}); err != nil {
			t.Fatal(err)
		}
	}
	r.dispatch.Tenants = tenants
	rung := &ringLog{next: r.reconcile.Ringer}
	r.dispatch.Ringer = rung

	// ml's own job takes its share of us-east-1; u's, within u's share, waits there for GPUs.
	filler := r.submitIn(t, "job-filler", "filler", region)
	now := r.clock.now()
	owed := jobs.New("job-owed", "u", r.ns, region, 50, nil, []map[string]any{r.manifest("owed")}, now)
	owed.GPUs = 2
	if _, _, err := r.store.Create(context.Background(), owed, jobs.Event(outbox.JobQueued, owed, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	r.drainIn(t, region)
	if got := r.job(t, filler.ID); got.Status != jobs.StatusPending {
		t.Fatalf("filler = %s; want pending, holding ml's share of us-east-1", got.Status)
	}
	j, err := r.createRoaming("job-roam", "roam", 50, capped, region, west)
	if err != nil {
		t.Fatal(err)
	}

	round, seen := []string{region, west}, 0
	for i := 0; len(round) > 0; i++ {
		if i == 10 {
			t.Fatalf("drains still ringing after 10 rounds: %v", round)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(round))
		for k, reg := range round {
			wg.Go(func() { errs[k] = r.dispatch.Drain(context.Background(), reg) })
		}
		wg.Wait()
		for k, err := range errs {
			if err != nil {
				t.Fatalf("Drain(%s): %v", round[k], err)
			}
		}
		all := rung.rung()
		round = nil
		for _, reg := range all[seen:] {
			if !slices.Contains(round, reg) && r.job(t, j.ID).Status == jobs.StatusQueued {
				round = append(round, reg)
			}
		}
		seen = len(all)
	}
	got := r.job(t, j.ID)
	if got.Status != jobs.StatusPending || got.Region != west {
		t.Fatalf("roaming job = %s in %q (%s); want pending in us-west-2, where its tenant has room", got.Status, got.Region, got.PendingReason)
	}
	claims := 0
	for _, h := range got.StatusHistory {
		if h.Status == jobs.StatusDispatching {
			claims++
		}
	}
	if claims != 1 {
		t.Errorf("roaming job's history %+v has %d claims; want exactly one", got.StatusHistory, claims)
	}
	for reg, want := range map[string]int{region: 1, west: 1} {
		active, err := r.store.Active(context.Background(), reg)
		if err != nil {
			t.Fatal(err)
		}
		if len(active) != want {
			t.Errorf("%s has %d active jobs; want %d", reg, len(active), want)
		}
	}
	sums, err := r.store.RegionSummaries(context.Background(), []string{region})
	if err != nil {
		t.Fatal(err)
	}
	if s := sums[region]; !slices.Equal(s.TenantsFull, []string{"ml"}) {
		t.Errorf("us-east-1's summary = %+v; want ml full there", s)
	}
}
