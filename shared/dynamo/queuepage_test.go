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

// TestQueuePages reads a region's queue a page at a time in dispatch order, each page resuming
// after the last key of the one before, and counts each job's place in line when asked. A
// long-running job waits in the region's queue of its own.
func TestQueuePages(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour)
	var all []jobs.Job
	for i := range 7 {
		// Priorities 0, 50, 100 in turn, each created a minute after the last.
		all = append(all, jobs.New(fmt.Sprintf("job-%d", i), "t", "ns", "us-east-1", i%3*50, nil,
			[]map[string]any{{"kind": "Job", "metadata": map[string]any{"name": fmt.Sprintf("n%d", i)}}}, base.Add(time.Duration(i)*time.Minute)))
	}
	long := jobs.New("job-long", "t", "ns", "us-east-1", 100, nil, []map[string]any{{"kind": "Deployment", "metadata": map[string]any{"name": "svc"}}}, base)
	if err := s.Load(ctx, append(all, long)); err != nil {
		t.Fatal(err)
	}
	// Dispatch order: priority 100 (jobs 2, 5), 50 (1, 4), 0 (0, 3, 6), oldest first.
	want := []string{"job-2", "job-5", "job-1", "job-4", "job-0", "job-3", "job-6"}
	var got []string
	after, pages := "", 0
	for {
		p, err := s.QueuePage(ctx, dynamo.RegionQueue("us-east-1"), after, 3)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for i, j := range p.Jobs {
			got = append(got, j.ID)
			if i > 0 && p.Keys[i] <= p.Keys[i-1] {
				t.Errorf("QueuePage keys %q then %q: not in dispatch order", p.Keys[i-1], p.Keys[i])
			}
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("QueuePage, pages of 3, read (-want +got):\n%s", diff)
	}
	if pages > 4 {
		t.Errorf("QueuePage read 7 jobs in %d pages of 3, want at most 4", pages)
	}
	lp, err := s.QueuePage(ctx, dynamo.LongRunningQueue("us-east-1"), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(lp.Jobs) != 1 || lp.Jobs[0].ID != "job-long" || lp.Next != "" {
		t.Errorf("the long-running queue holds %v (next %q), want job-long alone", lp.Jobs, lp.Next)
	}
	for i, id := range want {
		j, err := s.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if p, err := s.QueuePosition(ctx, j); err != nil || p != i+1 {
			t.Errorf("QueuePosition(%s) = %d, %v; want %d", id, p, err, i+1)
		}
	}
	c, err := s.Census(ctx, dynamo.RegionQueue("us-east-1"))
	if err != nil || c.Jobs != 7 || !c.Oldest.Equal(base.UTC().Truncate(0)) && c.Oldest.Sub(base).Abs() > time.Millisecond {
		t.Errorf("Census = %+v, %v; want 7 jobs, the oldest created %s", c, err, base)
	}
}

// TestHeldPages: jobs held by their spot cap wait apart from the queue; HeldPage reads, of one
// instance type, only those whose cap a price meets, highest cap first, a page at a time, with
// their places in dispatch order; a new reason moves a job out of the held jobs and back; a
// region with only held jobs still has queued ones (the beat rings its drain for the price).
func TestHeldPages(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour)
	var held []jobs.Job
	for i, capped := range []float64{0.10, 0.30, 0.50, 0.30, 0.05} {
		j := jobs.New(fmt.Sprintf("job-h%d", i), "t", "ns", "us-east-1", 50, nil,
			[]map[string]any{{"kind": "Job", "metadata": map[string]any{"name": fmt.Sprintf("h%d", i)}}}, base.Add(time.Duration(i)*time.Minute))
		j.Spot, j.PendingReason = &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: capped}, "spot_price_above_cap"
		held = append(held, j)
	}
	other := jobs.New("job-other-type", "t", "ns", "us-east-1", 50, nil, []map[string]any{{"kind": "Job", "metadata": map[string]any{"name": "o"}}}, base)
	other.Spot, other.PendingReason = &jobs.Spot{InstanceType: "p4d.24xlarge", MaxPrice: 99}, "spot_price_above_cap"
	if err := s.Load(ctx, append(held, other)); err != nil {
		t.Fatal(err)
	}
	if has, err := s.HasQueued(ctx, "us-east-1"); err != nil || !has {
		t.Errorf("HasQueued with only held jobs = %v, %v; want true", has, err)
	}
	if p, err := s.QueuePage(ctx, dynamo.RegionQueue("us-east-1"), "", 10); err != nil || len(p.Jobs) != 0 {
		t.Errorf("the region's queue holds %d jobs (%v), want none: they are held", len(p.Jobs), err)
	}
	read := func(price float64, size int) (ids []string, pages int) {
		t.Helper()
		after := ""
		for {
			p, err := s.HeldPage(ctx, "us-east-1", "g5.xlarge", price, after, size)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, j := range p.Jobs {
				ids = append(ids, j.ID)
			}
			if after = p.Next; after == "" {
				return ids, pages
			}
		}
	}
	for _, tt := range []struct {
		price float64
		want  []string
	}{
		{0.60, nil},
		{0.50, []string{"job-h2"}},
		{0.30, []string{"job-h2", "job-h1", "job-h3"}},
		{0.0, []string{"job-h2", "job-h1", "job-h3", "job-h0", "job-h4"}},
	} {
		got, _ := read(tt.price, 2)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("HeldPage at %.2f (-want +got):\n%s", tt.price, diff)
		}
	}
	// A new reason takes a job out of the held jobs, into the queue; being held again puts it back.
	j, err := s.Job(ctx, "job-h2")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, j, jobs.Wait("flavor_full", 0, nil, time.Now())); err != nil {
		t.Fatal(err)
	}
	if p, err := s.QueuePage(ctx, dynamo.RegionQueue("us-east-1"), "", 10); err != nil || len(p.Jobs) != 1 || p.Jobs[0].ID != "job-h2" {
		t.Errorf("after flavor_full the queue = %v (%v), want job-h2", p.Jobs, err)
	}
	if got, _ := read(0.50, 10); len(got) != 0 {
		t.Errorf("after flavor_full the held jobs at 0.50 = %v, want none", got)
	}
	if j, err = s.Job(ctx, "job-h2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, j, jobs.Wait("spot_price_above_cap", 0, nil, time.Now())); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(0.50, 10); !cmp.Equal(got, []string{"job-h2"}) {
		t.Errorf("held again, the held jobs at 0.50 = %v, want job-h2", got)
	}
	// Its place in line is among the jobs the drains read, as if the price let it run.
	if pos, err := s.QueuePosition(ctx, j); err != nil || pos != 1 {
		t.Errorf("QueuePosition of a held job = %d, %v; want 1", pos, err)
	}
}
