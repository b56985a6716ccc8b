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
