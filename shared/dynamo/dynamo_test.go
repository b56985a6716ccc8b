package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestTenantStore(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewTenantStore(db, tables.Control)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	want := tenancy.Tenant{Name: "ml", Org: "acme", Namespaces: []string{"a", "b"}, Role: tenancy.RoleMember, CreatedAt: now}
	if err := s.PutTenant(ctx, want); err != nil {
		t.Fatalf("PutTenant: %v", err)
	}
	got, err := s.Tenant(ctx, "ml")
	if err != nil {
		t.Fatalf("Tenant(ml): %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tenant(ml) (-want +got):\n%s", diff)
	}
	if _, err := s.Tenant(ctx, "nobody"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Tenant(nobody) = %v, want ErrNotFound", err)
	}
	if err := s.PutTenant(ctx, tenancy.Tenant{Name: "Bad Name", Org: "acme", Namespaces: []string{"a"}, Role: "root"}); err == nil {
		t.Errorf("PutTenant accepted a bad name and role")
	}

	key, _ := tenancy.NewKey()
	if err := s.AddKey(ctx, "ml", key, now); err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	p, err := s.ByKey(ctx, key)
	if err != nil || p.Tenant.Name != "ml" || p.Subject != "key:"+tenancy.KeyID(key) {
		t.Errorf("ByKey = %+v, %v; want tenant ml, subject key:%s", p, err, tenancy.KeyID(key))
	}
	if _, err := s.ByKey(ctx, key+"x"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("ByKey(other key) = %v, want ErrNotFound", err)
	}
	if err := s.AddKey(ctx, "ghost", key, now); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("AddKey for a missing tenant = %v, want ErrNotFound", err)
	}
	if _, err := s.ByKey(ctx, key); err != nil {
		t.Errorf("the failed AddKey for a missing tenant disturbed the stored key: %v", err)
	}
}

// createJobs stores jobs 0..n-1 through Create, one minute apart, cycling namespaces a, b, c and
// regions us-east-1, us-west-2; job i has priority i*10 and label parity=even|odd.
func createJobs(t *testing.T, s *dynamo.JobStore, n int) []jobs.Job {
	t.Helper()
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	var out []jobs.Job
	for i := range n {
		at := base.Add(time.Duration(i) * time.Minute)
		parity := map[bool]string{true: "even", false: "odd"}[i%2 == 0]
		m := []map[string]any{{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": fmt.Sprintf("j%d", i)}, "spec": map[string]any{"backoffLimit": json.Number("12345678901234567890")}}}
		j := jobs.New(fmt.Sprintf("job-%02d", i), "ml", []string{"a", "b", "c"}[i%3], []string{"us-east-1", "us-west-2"}[i%2], i*10, map[string]string{"parity": parity}, m, at)
		if _, _, err := s.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", at), nil, at); err != nil {
			t.Fatalf("Create(%s): %v", j.ID, err)
		}
		out = append(out, j)
	}
	return out
}

// listAll pages through List two at a time and answers the ids in order.
func listAll(t *testing.T, s *dynamo.JobStore, f jobs.Filter) []string {
	t.Helper()
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("listing did not end after 10 pages; got %v", got)
		}
		page, err := s.List(context.Background(), f, 2, cursor)
		if err != nil {
			t.Fatalf("List(%+v): %v", f, err)
		}
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		if page.Next == "" {
			return got
		}
		cursor = page.Next
	}
}

func TestJobList(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	createJobs(t, s, 7) // a: 0,3,6  b: 1,4  c: 2,5
	tests := []struct {
		name   string
		filter jobs.Filter
		want   []string
	}{
		{"newest first across a and b", jobs.Filter{Namespaces: []string{"a", "b"}}, []string{"job-06", "job-04", "job-03", "job-01", "job-00"}},
		{"by priority", jobs.Filter{Namespaces: []string{"a", "c"}, ByPriority: true}, []string{"job-06", "job-05", "job-03", "job-02", "job-00"}},
		{"region", jobs.Filter{Namespaces: []string{"a", "b", "c"}, Region: "us-west-2"}, []string{"job-05", "job-03", "job-01"}},
		{"label", jobs.Filter{Namespaces: []string{"a", "b", "c"}, Labels: map[string]string{"parity": "even"}}, []string{"job-06", "job-04", "job-02", "job-00"}},
		{"status matches none", jobs.Filter{Namespaces: []string{"a"}, Status: jobs.StatusRunning}, nil},
		{"status and label", jobs.Filter{Namespaces: []string{"a"}, Status: jobs.StatusQueued, Labels: map[string]string{"parity": "odd"}}, []string{"job-03"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, listAll(t, s, tt.filter)); diff != "" {
				t.Errorf("List(%+v) (-want +got):\n%s", tt.filter, diff)
			}
		})
	}
}

func TestJobCreateKeepsManifestsAndWritesTheEvent(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	want := createJobs(t, s, 1)[0]
	got, err := s.Job(context.Background(), want.ID)
	if err != nil {
		t.Fatalf("Job(%s): %v", want.ID, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Job(%s) after Create (-want +got):\n%s", want.ID, diff)
	}
	evs := undeliveredEvents(t, db, tables)
	if len(evs) != 1 || evs[0].Type != outbox.JobQueued || evs[0].Data["job_id"] != want.ID {
		t.Errorf("outbox after Create = %+v, want one job.queued for %s", evs, want.ID)
	}
	if _, err := s.Job(context.Background(), "job-nope"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Job(job-nope) = %v, want ErrNotFound", err)
	}
}

func TestJobCreateIdempotency(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	now := time.Now()
	mk := func(id string) (jobs.Job, outbox.Event) {
		j := jobs.New(id, "ml", "a", "us-east-1", 50, nil, nil, now)
		return j, jobs.Event(outbox.JobQueued, j, "", now)
	}
	key := &dynamo.Idempotency{Tenant: "ml", Key: "k1", BodyHash: "h1"}
	j1, ev1 := mk("job-first")
	if _, replayed, err := s.Create(ctx, j1, ev1, key, now); err != nil || replayed {
		t.Fatalf("first Create = replayed %v, %v; want a new job", replayed, err)
	}
	j2, ev2 := mk("job-second")
	got, replayed, err := s.Create(ctx, j2, ev2, key, now)
	if err != nil || !replayed || got.ID != "job-first" {
		t.Errorf("same key, same body: Create = %s replayed %v, %v; want job-first replayed", got.ID, replayed, err)
	}
	if _, err := s.Job(ctx, "job-second"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("a replayed Create stored its own job anyway: %v", err)
	}
	j3, ev3 := mk("job-third")
	if _, _, err := s.Create(ctx, j3, ev3, &dynamo.Idempotency{Tenant: "ml", Key: "k1", BodyHash: "h2"}, now); !errors.Is(err, dynamo.ErrIdempotencyConflict) {
		t.Errorf("same key, other body: Create = %v, want ErrIdempotencyConflict", err)
	}
	j4, ev4 := mk("job-fourth")
	if _, replayed, err := s.Create(ctx, j4, ev4, &dynamo.Idempotency{Tenant: "other", Key: "k1", BodyHash: "h2"}, now); err != nil || replayed {
		t.Errorf("same key, another tenant: Create = replayed %v, %v; want a new job (keys are per tenant)", replayed, err)
	}
	j5, ev5 := mk("job-fifth")
	later := now.Add(dynamo.IdempotencyTTL + time.Minute)
	if _, replayed, err := s.Create(ctx, j5, ev5, &dynamo.Idempotency{Tenant: "ml", Key: "k1", BodyHash: "h3"}, later); err != nil || replayed {
		t.Errorf("an expired key: Create = replayed %v, %v; want a new job", replayed, err)
	}
}

// TestStatesAndUnlisted: States reads any number of records by id (more than one BatchGetItem
// holds), leaving out ids without one; Unlisted reads only the claims and podless jobs of a
// region's active partitions, not the jobs a LIST shows.
func TestStatesAndUnlisted(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables)
	made := createJobs(t, s, 130)
	ids := []string{"job-missing", made[7].ID} // and job 7 again below
	for _, j := range made {
		ids = append(ids, j.ID)
	}
	got, err := s.States(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(made) {
		t.Fatalf("States of %d ids (one without a record, one twice) answered %d, want %d", len(ids), len(got), len(made))
	}
	for _, j := range got {
		if j.Status != jobs.StatusQueued || j.Region == "" || j.Manifests != nil {
			t.Errorf("state of %s = %s in %q with manifests %v; want queued, its region, no manifests", j.ID, j.Status, j.Region, j.Manifests)
		}
	}

	// In us-east-1: one job claimed, one podless pending, one pending that its LIST would show.
	move := func(j jobs.Job, through ...jobs.Status) {
		t.Helper()
		for _, to := range through {
			var err error
			if to == jobs.StatusDispatching {
				_, err = s.Claim(ctx, j.ID, j.Region, "t", time.Now(), time.Now().Add(time.Minute))
			} else {
				err = s.Apply(ctx, j, jobs.Change{From: j.Status, To: to, At: time.Now()})
			}
			if err != nil {
				t.Fatalf("moving %s to %s: %v", j.ID, to, err)
			}
			j.Status = to
		}
	}
	now := time.Now()
	cm := []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings"}}}
	podless := jobs.New("job-podless", "ml", "a", "us-east-1", 50, nil, cm, now)
	podless.Podless = true
	if _, _, err := s.Create(ctx, podless, jobs.Event(outbox.JobQueued, podless, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	move(made[0], jobs.StatusDispatching)
	move(podless, jobs.StatusDispatching, jobs.StatusPending)
	move(made[4], jobs.StatusDispatching, jobs.StatusPending)
	unlisted, err := s.Unlisted(ctx, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, j := range unlisted {
		seen = append(seen, j.ID+"="+string(j.Status))
	}
	if want := []string{"job-00=dispatching", "job-podless=pending"}; !cmp.Equal(seen, want) {
		t.Errorf("Unlisted(us-east-1) = %v, want %v", seen, want)
	}
	active, err := s.ActiveStates(ctx, "us-east-1")
	if err != nil || len(active) != 3 {
		t.Errorf("ActiveStates(us-east-1) = %d jobs (%v), want all 3", len(active), err)
	}
}

// TestJobListBudget: a filter that matches nothing, or one job at the far end of the namespaces,
// reads at most the budget a namespace a request: each page answers what it found by then and a
// cursor, and paging on finds every match once and ends. A tenant's label_selector=x=nomatch over
// its whole history costs one budget a request, not a partition.
func TestJobListBudget(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewJobStore(db, tables).ListBudget(4)
	createJobs(t, s, 21) // a: 0,3,…,18 (7)  b: 1,4,…,19 (7)  c: 2,5,…,20 (7)
	for _, tt := range []struct {
		name   string
		filter jobs.Filter
		want   []string
		pages  int // at least: a namespace of 7 read 4 at a time needs 2 requests
	}{
		{"nothing matches", jobs.Filter{Namespaces: []string{"a", "b", "c"}, Labels: map[string]string{"x": "nomatch"}}, nil, 2},
		{"every even job, spread over the three namespaces", jobs.Filter{Namespaces: []string{"a", "b", "c"}, Labels: map[string]string{"parity": "even"}, Status: jobs.StatusQueued, Region: "us-east-1"},
			[]string{"job-20", "job-18", "job-16", "job-14", "job-12", "job-10", "job-08", "job-06", "job-04", "job-02", "job-00"}, 2},
		{"by priority, ascending", jobs.Filter{Namespaces: []string{"a"}, ByPriority: true, Ascending: true, Labels: map[string]string{"parity": "odd"}},
			[]string{"job-03", "job-09", "job-15"}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			cursor, pages := "", 0
			for {
				pages++
				if pages > 20 {
					t.Fatalf("List(%+v) did not end after 20 pages; got %v", tt.filter, got)
				}
				page, err := s.List(context.Background(), tt.filter, 100, cursor)
				if err != nil {
					t.Fatalf("List(%+v): %v", tt.filter, err)
				}
				for _, j := range page.Jobs {
					got = append(got, j.ID)
				}
				if page.Next == "" {
					break
				}
				cursor = page.Next
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("List(%+v) paged on with a budget of 4 (-want +got):\n%s", tt.filter, diff)
			}
			if pages < tt.pages {
				t.Errorf("List(%+v) took %d pages with a budget of 4 over 7 jobs a namespace, want at least %d: it read past the budget", tt.filter, pages, tt.pages)
			}
		})
	}
}
