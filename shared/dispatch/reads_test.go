package dispatch

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tidegate/tidegate/shared/dev/awscalls"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// TestDrainReadsOnlyWhatItNeeds queues many more jobs than a region has room for and counts
// the queue's items each drain reads from DynamoDB itself (each query's ScannedCount, what it is
// charged for): a drain with room for ten reads about a page, and one of a full region reads
// none, whatever the queue's length.
func TestDrainReadsOnlyWhatItNeeds(t *testing.T) {
	const queued, room = 300, 10
	r := newRig(t, room)
	counter := &awscalls.Counter{}
	counted := dynamodb.New(r.db.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, counter.APIOption())
	})
	r.dispatch.Store = dynamo.NewJobStore(counted, r.tables)
	seed(t, r, queued)
	ctx := context.Background()

	// The first drain of a process counts the whole queue once (its census, for the gauges).
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	first := counter.Items()[string(dynamo.RegionQueue(region))]
	if first > queued+maxPage {
		t.Errorf("Drain with room for %d of %d queued read %d queued items with its census; want at most %d", room, queued, first, queued+maxPage)
	}
	if n := countStatus(t, r, jobs.StatusPending); n != room {
		t.Fatalf("after the first drain %d jobs are pending, want %d", n, room)
	}

	counter.Reset()
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	items := counter.Items()
	for _, q := range []dynamo.Queue{dynamo.RegionQueue(region), dynamo.LongRunningQueue(region), dynamo.RoamingQueue} {
		if n := items[string(q)]; n != 0 {
			t.Errorf("Drain of a full region read %d items of %s, want none", n, q)
		}
	}

	// Room for ten again: the census is fresh, so the drain reads a page of the region's queue
	// (and an empty page of the roaming queue), not the 290 jobs still waiting.
	r.dispatch.Capacity = func(string) int { return 2 * room }
	counter.Reset()
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	if n := counter.Items()[string(dynamo.RegionQueue(region))]; n > 2*pageFor(room) {
		t.Errorf("Drain with room for %d of %d queued read %d of the queue's items, want at most two pages (%d)", room, queued-room, n, 2*pageFor(room))
	}
	if n := countStatus(t, r, jobs.StatusPending); n != 2*room {
		t.Errorf("after the drain with room for %d more, %d jobs are pending, want %d", room, n, 2*room)
	}
}

// seed queues n jobs in the rig's region, a few at a time.
func seed(t *testing.T, r rig, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_, errs[i] = r.create(fmt.Sprintf("job-read-%03d", i), fmt.Sprintf("read-%03d", i), 50, nil)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// countStatus counts the rig's region's jobs in status s among its active and queued ones.
func countStatus(t *testing.T, r rig, s jobs.Status) int {
	t.Helper()
	ctx := context.Background()
	active, err := r.store.Active(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range active {
		if j.Status == s {
			n++
		}
	}
	return n
}
