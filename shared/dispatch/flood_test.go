package dispatch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ec2spot"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// readCounting is the real store, counting the queued jobs a drain reads.
type readCounting struct {
	Store
	read atomic.Int64
}

func (s *readCounting) QueuePage(ctx context.Context, q dynamo.Queue, after string, limit int) (dynamo.QueuePage, error) {
	p, err := s.Store.QueuePage(ctx, q, after, limit)
	s.read.Add(int64(len(p.Jobs)))
	return p, err
}

func (s *readCounting) BackoffPage(ctx context.Context, region string, now time.Time, after string, limit int) (dynamo.QueuePage, error) {
	p, err := s.Store.BackoffPage(ctx, region, now, after, limit)
	s.read.Add(int64(len(p.Jobs)))
	return p, err
}

func (s *readCounting) LongHeldPage(ctx context.Context, region, tenant, after string, limit int) (dynamo.QueuePage, error) {
	p, err := s.Store.LongHeldPage(ctx, region, tenant, after, limit)
	s.read.Add(int64(len(p.Jobs)))
	return p, err
}

func (s *readCounting) HeldPage(ctx context.Context, region, instanceType string, price float64, after string, limit int) (dynamo.QueuePage, error) {
	p, err := s.Store.HeldPage(ctx, region, instanceType, price, after, limit)
	s.read.Add(int64(len(p.Jobs)))
	return p, err
}

// flood stores n queued jobs of tenant at priority, eight at a time, each edited by edit first.
func (r rig) flood(t *testing.T, tenant string, n, priority int, edit func(*jobs.Job)) {
	t.Helper()
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make([]error, n)
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				now := r.clock.now()
				name := fmt.Sprintf("%s-%05d", tenant, i)
				j := jobs.New("job-"+name, tenant, r.ns, region, priority, nil, []map[string]any{r.manifest(name)}, now)
				edit(&j)
				_, _, errs[i] = r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestHeldJobsCostADrainNothing: a tenant floods the region with 10,000 jobs at the top priority,
// each capped at $0.0001 an hour on an instance type whose last price was $0.50 (so held from
// submission, as the API stores them). Another tenant's job, at the lowest priority, dispatches
// in the very next drain, which reads none of the held jobs: they wait apart, and a drain reads
// only those the price it observes allows.
func TestHeldJobsCostADrainNothing(t *testing.T) {
	r := newRig(t, 10)
	counting := &readCounting{Store: r.store}
	r.dispatch.Store = counting
	if err := r.book.Set(region, "g5.xlarge", 0.50, r.clock.now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	r.flood(t, "flood", 10_000, jobs.MaxPriority, func(j *jobs.Job) {
		j.Spot = &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.0001}
		j.PendingReason = "spot_price_above_cap"
	})
	b := r.submit(t, "other-tenant", jobs.MinPriority, nil)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	if j := r.job(t, b.ID); j.Status != jobs.StatusPending {
		t.Errorf("the other tenant's job after one drain = %s (%q), want dispatched", j.Status, j.PendingReason)
	}
	if n := counting.read.Load(); n > 1 {
		t.Errorf("the drain read %d queued jobs, want the other tenant's alone", n)
	}
	// The price comes down under some caps: the drain reads those jobs, and only those.
	r.flood(t, "rich", 3, 50, func(j *jobs.Job) {
		j.Spot = &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.40}
		j.PendingReason = "spot_price_above_cap"
	})
	r.clock.skip(censusEvery + ec2spot.DefaultTTL) // the census and the price reader see the new caps and price
	if err := r.book.Set(region, "g5.xlarge", 0.30, r.clock.now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	counting.read.Store(0)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if j := r.job(t, fmt.Sprintf("job-rich-%05d", i)); j.Status != jobs.StatusPending {
			t.Errorf("a job capped at 0.40 with the price at 0.30 = %s (%q), want dispatched", j.Status, j.PendingReason)
		}
	}
	if n := counting.read.Load(); n != 3 {
		t.Errorf("the drain read %d queued jobs, want the 3 the price allows", n)
	}
}

// TestReadBudgetGoesOn: 1,000 jobs of one tenant that can never run here (each larger than the
// region) stand ahead of another tenant's job. A drain reads at most its room and its budget
// (200 here), and the drain after it goes on from where it stopped: the other tenant's job is
// dispatched within the drains the budget needs to pass the 1,000, each drain reading no more.
func TestReadBudgetGoesOn(t *testing.T) {
	r := newRig(t, 10)
	counting := &readCounting{Store: r.store}
	r.dispatch.Store, r.dispatch.ReadBudget = counting, 200
	r.flood(t, "wide", 1_000, jobs.MaxPriority, func(j *jobs.Job) { j.Demand = map[string]string{"pods": "20"} })
	b := r.submit(t, "other-tenant", jobs.MinPriority, nil)
	for drain := 1; ; drain++ {
		counting.read.Store(0)
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
		if n := counting.read.Load(); n > 10+200 {
			t.Fatalf("drain %d read %d queued jobs, want at most its room and budget (210)", drain, n)
		}
		if j := r.job(t, b.ID); j.Status == jobs.StatusPending {
			t.Logf("dispatched in drain %d", drain)
			break
		}
		if drain == 1_000/(200-10)+2 {
			t.Fatalf("after %d drains the other tenant's job is still %s", drain, r.job(t, b.ID).Status)
		}
	}
}

// TestBackingOffCostsADrainNothing: 1,000 retried jobs of one tenant, each waiting out its
// retry's backoff at the top priority, cost another tenant's drain no read, and its job
// dispatches in that drain; once their backoff is over, a drain reads them again (as many as
// its room and budget), and dispatches them by priority.
func TestBackingOffCostsADrainNothing(t *testing.T) {
	r := newRig(t, 10)
	counting := &readCounting{Store: r.store}
	r.dispatch.Store = counting
	until := r.clock.now().Add(time.Minute)
	r.flood(t, "retried", 1_000, jobs.MaxPriority, func(j *jobs.Job) {
		j.NotBefore, j.PendingReason = &until, string(reasonRetryBackoff)
	})
	b := r.submit(t, "other-tenant", jobs.MinPriority, nil)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	if j := r.job(t, b.ID); j.Status != jobs.StatusPending {
		t.Errorf("the other tenant's job after one drain = %s (%q), want dispatched", j.Status, j.PendingReason)
	}
	if n := counting.read.Load(); n != 1 {
		t.Errorf("the drain read %d queued jobs, want the other tenant's alone", n)
	}
	r.clock.skip(time.Minute + time.Second)
	counting.read.Store(0)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	active, err := r.store.Active(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 10 {
		t.Errorf("after the backoff, %d jobs active, want the region's 10", len(active))
	}
	if n := counting.read.Load(); n > 10+DefaultReadBudget {
		t.Errorf("the drain read %d jobs backing off no more, want at most its room and budget", n)
	}
}

// TestLongRunningAtTheLimitCostsADrainNothing: a tenant with 300 long-running jobs and a limit of
// one has one running; the rest, once a drain found the tenant at its limit, wait apart and cost
// the next drains no read, while another tenant's long-running job dispatches. When the running
// one ends, the next drain reads one of them, the one the limit lets start, and starts it.
func TestLongRunningAtTheLimitCostsADrainNothing(t *testing.T) {
	r := newRig(t, 1000)
	counting := &readCounting{Store: r.store}
	r.dispatch.Store, r.dispatch.LongRunningPerTenant = counting, 1
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < 300; i = int(next.Add(1) - 1) {
				now := r.clock.now()
				name := fmt.Sprintf("svc-%03d", i)
				j := jobs.New("job-"+name, "svc", r.ns, region, jobs.MaxPriority, nil, []map[string]any{r.deployment(name)}, now)
				if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	drain := func() int64 {
		t.Helper()
		counting.read.Store(0)
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
		return counting.read.Load()
	}
	drain() // one starts; the drain finds the rest at the limit and holds them apart
	now := r.clock.now()
	other := jobs.New("job-other-svc", "other", r.ns, region, jobs.MinPriority, nil, []map[string]any{r.deployment("other-svc")}, now)
	if _, _, err := r.store.Create(context.Background(), other, jobs.Event(outbox.JobQueued, other, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	if n := drain(); n != 1 {
		t.Errorf("a drain with the tenant at its limit read %d queued jobs, want the other tenant's alone", n)
	}
	if j := r.job(t, other.ID); j.Status != jobs.StatusPending {
		t.Errorf("the other tenant's long-running job = %s (%q), want dispatched", j.Status, j.PendingReason)
	}
	active, err := r.store.Active(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	var running jobs.Job
	for _, j := range active {
		if j.Tenant == "svc" {
			running = j
		}
	}
	_, c, err := jobs.Move(running, jobs.StatusCancelled, "", r.clock.now())
	if err == nil {
		err = r.store.Apply(context.Background(), running, c)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := drain(); n != 1 {
		t.Errorf("the drain after the tenant's job ended read %d queued jobs, want the one its limit lets start", n)
	}
	active, err = r.store.Active(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	svc := 0
	for _, j := range active {
		if j.Tenant == "svc" {
			svc++
		}
	}
	if svc != 1 {
		t.Errorf("the tenant has %d long-running jobs active after one ended, want its limit of 1", svc)
	}
}
