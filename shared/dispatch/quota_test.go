package dispatch

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestSharesBetweenTenants: two tenants with equal shares of a region of capacity 4. Tenant A
// fills the region with 40 jobs at its highest priority, borrowing B's idle half; then tenant B
// submits 4 at a lower priority. Nothing running is preempted, but as A's borrowed jobs end, B's
// start, up to its share, before A's queue: a tenant's priority does not reach past another's
// share. The beat's part (recording ends) is done by hand, so each step is exact.
func TestSharesBetweenTenants(t *testing.T) {
	r := newRig(t, 4)
	tenants := dynamo.NewTenantStore(r.db, r.tables.Control)
	for _, name := range []string{"a", "b"} {
		if err := tenants.PutTenant(context.Background(), tenancy.Tenant{
			Name: name, Org: "acme", Namespaces: []string{r.ns}, Role: tenancy.RoleMember, CreatedAt: time.Now(),
			Quotas: map[string]tenancy.Quota{region: {Jobs: 2}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	r.dispatch.Tenants = tenants
	submit := func(tenant, name string, priority int) string {
		t.Helper()
		now := r.clock.now()
		j := jobs.New("job-"+tenant+"-"+name, tenant, r.ns, region, priority, nil, []map[string]any{r.manifest(name)}, now)
		if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	var aIDs, bIDs []string
	for i := range 40 {
		aIDs = append(aIDs, submit("a", fmt.Sprintf("a%02d", i), 100))
	}
	drain := func() {
		t.Helper()
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
	}
	left := func(ids []string) (out []string) {
		for _, id := range ids {
			if r.job(t, id).Status != jobs.StatusQueued {
				out = append(out, id)
			}
		}
		return out
	}
	end := func(id string) { r.succeed(t, id) }

	drain()
	if got := left(aIDs); !slices.Equal(got, aIDs[:4]) {
		t.Fatalf("A alone in the region: started %v, want its first four (two of them borrowed)", got)
	}
	for i := range 4 {
		bIDs = append(bIDs, submit("b", fmt.Sprintf("b%02d", i), 10))
	}
	drain()
	if got := left(bIDs); len(got) != 0 {
		t.Fatalf("B's jobs started %v in a full region, want none: running jobs are not preempted", got)
	}
	// Two of A's jobs end: the room goes to B, under its share, not to A's higher priority.
	end(aIDs[0])
	end(aIDs[1])
	drain()
	if got := left(bIDs); !slices.Equal(got, bIDs[:2]) {
		t.Errorf("after two of A's jobs ended, B started %v, want its first two", got)
	}
	if got := left(aIDs); len(got) != 4 {
		t.Errorf("after two of A's jobs ended, A has started %d jobs in all, want still 4", len(got))
	}
	if w := r.job(t, aIDs[4]); w.Status != jobs.StatusQueued || w.PendingReason == "" {
		t.Errorf("A's next job = %s waiting for %q, want queued with a reason", w.Status, w.PendingReason)
	}
	// A's last two end: A is under its share, B at its own, so the room goes to A.
	end(aIDs[2])
	end(aIDs[3])
	drain()
	if got := left(aIDs); !slices.Equal(got, aIDs[:6]) {
		t.Errorf("with both tenants at their shares, A has started %v, want its first six", got)
	}
	if got := left(bIDs); len(got) != 2 {
		t.Errorf("B has started %v, want still its first two: past its share, its lower priority waits", got)
	}
}

// countingTenants counts the reads a drain makes of the real tenant store.
type countingTenants struct {
	*dynamo.TenantStore
	reads atomic.Int64
}

func (c *countingTenants) Tenant(ctx context.Context, name string) (tenancy.Tenant, error) {
	c.reads.Add(1)
	return c.TenantStore.Tenant(ctx, name)
}

// TestQuotasAreReadOncePerTTL: a drain reads each tenant with jobs in the region once, the next
// drains within quotaTTL read none, and a quota an admin changed is what the first drain after
// quotaTTL shares by.
func TestQuotasAreReadOncePerTTL(t *testing.T) {
	r := newRig(t, 2)
	store := dynamo.NewTenantStore(r.db, r.tables.Control)
	tenants := &countingTenants{TenantStore: store}
	put := func(name string, jobs int) {
		t.Helper()
		if err := store.PutTenant(context.Background(), tenancy.Tenant{
			Name: name, Org: "acme", Namespaces: []string{r.ns}, Role: tenancy.RoleMember, CreatedAt: time.Now(),
			Quotas: map[string]tenancy.Quota{region: {Jobs: jobs}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		put(fmt.Sprintf("t%02d", i), 1)
	}
	r.dispatch.Tenants = tenants
	var qs []jobs.Job
	for i := range 20 {
		qs = append(qs, jobs.Job{Tenant: fmt.Sprintf("t%02d", i%20)}, jobs.Job{Tenant: fmt.Sprintf("t%02d", i%20)})
	}
	shares, err := r.dispatch.shares(context.Background(), region, qs)
	if err != nil || len(shares) != 20 || shares["t07"].Jobs != 1 {
		t.Fatalf("shares = %v, %v; want 20 tenants with 1 job each", shares, err)
	}
	if n := tenants.reads.Load(); n != 20 {
		t.Errorf("the first drain read %d tenant records, want 20 (one per tenant)", n)
	}
	put("t07", 2)
	r.clock.skip(quotaTTL / 2)
	if shares, err = r.dispatch.shares(context.Background(), region, qs); err != nil || shares["t07"].Jobs != 1 {
		t.Errorf("within quotaTTL t07's share = %v, %v; want the cached 1", shares["t07"], err)
	}
	if n := tenants.reads.Load(); n != 20 {
		t.Errorf("a drain within quotaTTL read %d more tenant records, want none", n-20)
	}
	r.clock.skip(quotaTTL)
	if shares, err = r.dispatch.shares(context.Background(), region, qs); err != nil || shares["t07"].Jobs != 2 {
		t.Errorf("after quotaTTL t07's share = %v, %v; want the changed 2", shares["t07"], err)
	}
}
