package reconcile

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/tidegate/tidegate/shared/jobs"
)

// TestMemoryNext: which jobs a beat counts as gone, and since when, from what the last beat
// remembered, what the LISTs show and (on a first beat) the active records read beside them.
func TestMemoryNext(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	listed := owned{jobs: map[string][]batchv1.Job{"listed": {{}}}}
	state := func(id string, s jobs.Status, region string, podless bool) jobs.Job {
		return jobs.Job{ID: id, Status: s, Region: region, Podless: podless}
	}
	tests := []struct {
		name string
		last memory
		read []jobs.Job
		want map[string]time.Time
	}{
		{
			name: "a followed job no longer listed is gone from now",
			last: memory{recorded: map[string]jobs.Status{"listed": jobs.StatusRunning, "vanished": jobs.StatusRunning, "pending-vanished": jobs.StatusPending}},
			want: map[string]time.Time{"vanished": now, "pending-vanished": now},
		},
		{
			name: "a finished, cancelled or foreign job is never gone",
			last: memory{recorded: map[string]jobs.Status{"done": jobs.StatusSucceeded, "cancelled": jobs.StatusCancelled, "foreign": ""}},
			want: map[string]time.Time{},
		},
		{
			name: "gone since earlier stays gone since then; one listed again is not gone",
			last: memory{recorded: map[string]jobs.Status{}, gone: map[string]time.Time{"still": t0, "listed": t0}},
			want: map[string]time.Time{"still": t0},
		},
		{
			name: "a first beat counts running, unlisted, non-podless records of its region only",
			read: []jobs.Job{
				state("running", jobs.StatusRunning, "us-east-1", false),
				state("pending", jobs.StatusPending, "us-east-1", false), // a CronJob before its first run, say
				state("podless", jobs.StatusRunning, "us-east-1", true),
				state("claimed", jobs.StatusDispatching, "us-east-1", false),
				state("elsewhere", jobs.StatusRunning, "us-west-2", false),
				state("listed", jobs.StatusRunning, "us-east-1", false),
			},
			want: map[string]time.Time{"running": now},
		},
		{
			name: "a later beat does not look at the records read for that",
			last: memory{recorded: map[string]jobs.Status{}},
			read: []jobs.Job{state("running", jobs.StatusRunning, "us-east-1", false)},
			want: map[string]time.Time{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.last.next("us-east-1", listed, tt.read, now)
			if diff := cmp.Diff(tt.want, got.gone); diff != "" {
				t.Errorf("gone (-want +got):\n%s", diff)
			}
			if len(got.recorded) != 0 {
				t.Errorf("recorded = %v, want it left for the beat to fill", got.recorded)
			}
		})
	}
}

// TestOverdue: a job is overdue once gone for goneGrace, not a moment before.
func TestOverdue(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := memory{gone: map[string]time.Time{
		"just": now.Add(-goneGrace), "long": now.Add(-time.Hour), "almost": now.Add(-goneGrace + time.Second),
	}}
	want := map[string]time.Time{"just": now.Add(-goneGrace), "long": now.Add(-time.Hour)}
	if diff := cmp.Diff(want, m.overdue(now)); diff != "" {
		t.Errorf("overdue (-want +got):\n%s", diff)
	}
}
