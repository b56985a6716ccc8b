package jobs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReady(t *testing.T) {
	dispatched := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	job := func(status Status, pods string, mod ...func(*Job)) Job {
		j := Job{
			ID: "job-1", Status: status, Attempt: 1, ReadyTimeout: "5m0s", Demand: map[string]string{"cpu": "8", "pods": pods},
			StatusHistory: []Transition{{Status: StatusQueued}, {Status: StatusDispatching}, {Status: StatusPending, At: dispatched}},
		}
		for _, m := range mod {
			m(&j)
		}
		return j
	}
	timeout := func(d string) func(*Job) { return func(j *Job) { j.ReadyTimeout = d } }
	timedOut := func(n int) func(*Job) { return func(j *Job) { j.ReadyTimeouts = n } }
	late := dispatched.Add(DefaultReadyTimeout)
	for _, tc := range []struct {
		name string
		job  Job
		seen PodsSeen
		now  time.Time
		want Readiness
	}{
		{"all 8 scheduled", job(StatusPending, "8"), PodsSeen{Exist: 8, Scheduled: 8}, dispatched.Add(time.Second), ReadyDone{}},
		{"all scheduled, running, long after the timeout", job(StatusRunning, "8"), PodsSeen{Exist: 8, Scheduled: 8}, late.Add(time.Hour), ReadyDone{}},
		{"6 of 8 within the timeout", job(StatusRunning, "8"), PodsSeen{Exist: 8, Scheduled: 6}, late.Add(-time.Nanosecond), ReadyWait{}},
		{"6 of 8 at the timeout", job(StatusRunning, "8"), PodsSeen{Exist: 8, Scheduled: 6}, late,
			ReadyRequeue{NotBefore: late.Add(readyBackoff), Detail: "6 of 8 pods scheduled 5m0s after dispatch"}},
		{"6 pods made of 8, all scheduled", job(StatusPending, "8"), PodsSeen{Exist: 6, Scheduled: 6}, late,
			ReadyRequeue{NotBefore: late.Add(readyBackoff), Detail: "6 of 8 pods scheduled 5m0s after dispatch"}},
		{"its own timeout", job(StatusPending, "8", timeout("3s")), PodsSeen{Exist: 8}, dispatched.Add(3 * time.Second),
			ReadyRequeue{NotBefore: dispatched.Add(3*time.Second + readyBackoff), Detail: "0 of 8 pods scheduled 3s after dispatch"}},
		{"backoff doubles with the second timeout", job(StatusPending, "8", timedOut(1)), PodsSeen{Exist: 8}, late,
			ReadyRequeue{NotBefore: late.Add(2 * readyBackoff), Detail: "0 of 8 pods scheduled 5m0s after dispatch"}},
		{"the third timeout fails it", job(StatusPending, "8", timedOut(2)), PodsSeen{Exist: 8, Scheduled: 7}, late,
			ReadyFail{Detail: "7 of 8 pods scheduled 5m0s after dispatch (timeout 3 of 3)"}},
		{"one pod never scheduled", job(StatusPending, "1"), PodsSeen{Exist: 1}, late,
			ReadyRequeue{NotBefore: late.Add(readyBackoff), Detail: "0 of 1 pods scheduled 5m0s after dispatch"}},
		{"no pod yet, no demand", job(StatusPending, "", func(j *Job) { j.Demand = nil }), PodsSeen{}, late,
			ReadyRequeue{NotBefore: late.Add(readyBackoff), Detail: "0 of 1 pods scheduled 5m0s after dispatch"}},
		{"no demand: the pods that exist", job(StatusPending, "", func(j *Job) { j.Demand = nil }), PodsSeen{Exist: 3, Scheduled: 3}, late, ReadyDone{}},
		{"this attempt seen ready once, a pod evicted since", job(StatusRunning, "8", func(j *Job) { j.PodsReady = &PodsReady{Attempt: 1} }),
			PodsSeen{Exist: 8, Scheduled: 7}, late.Add(time.Hour), ReadyWait{}},
		{"an earlier attempt seen ready", job(StatusPending, "8", func(j *Job) { j.Attempt, j.PodsReady = 2, &PodsReady{Attempt: 1} }),
			PodsSeen{Exist: 8, Scheduled: 8}, late, ReadyDone{}},
		{"the current attempt's dispatch counts", job(StatusPending, "2", func(j *Job) {
			j.StatusHistory = append(j.StatusHistory, Transition{Status: StatusQueued, At: late}, Transition{Status: StatusPending, At: late.Add(time.Minute)})
		}), PodsSeen{Exist: 2}, late.Add(time.Minute + DefaultReadyTimeout - time.Second), ReadyWait{}},
		{"a record from before ready_timeout", job(StatusPending, "8", timeout("")), PodsSeen{Exist: 8}, late.Add(time.Hour), ReadyWait{}},
		{"podless", job(StatusPending, "", func(j *Job) { j.Podless = true }), PodsSeen{}, late.Add(time.Hour), ReadyWait{}},
		{"long-running", job(StatusPending, "3", func(j *Job) { j.Kind = KindLongRunning }), PodsSeen{Exist: 3}, late.Add(time.Hour), ReadyWait{}},
		{"queued", job(StatusQueued, "3"), PodsSeen{}, late.Add(time.Hour), ReadyWait{}},
		{"succeeded", job(StatusSucceeded, "3"), PodsSeen{}, late.Add(time.Hour), ReadyWait{}},
		{"no dispatch in its history", job(StatusPending, "3", func(j *Job) { j.StatusHistory = nil }), PodsSeen{}, late.Add(time.Hour), ReadyWait{}},
	} {
		if diff := cmp.Diff(tc.want, tc.job.Ready(tc.seen, tc.now)); diff != "" {
			t.Errorf("Ready(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestNotReady(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 5, 0, 0, time.UTC)
	j := Job{ID: "job-1", Status: StatusRunning, Attempt: 2, SpotRetries: 1, Retry: &Retry{Attempts: 2, On: []string{RetryPodFailure}}}
	r := ReadyRequeue{NotBefore: at.Add(time.Minute), Detail: "6 of 8 pods scheduled 5m0s after dispatch"}
	moved, c, err := NotReady(j, r, AttemptRecord{LogTail: []string{"x"}}, at)
	if err != nil {
		t.Fatalf("NotReady: %v", err)
	}
	reason := "retrying: pods_not_ready: 6 of 8 pods scheduled 5m0s after dispatch"
	kept := []AttemptRecord{{Attempt: 2, Reason: "pods_not_ready: 6 of 8 pods scheduled 5m0s after dispatch", EndedAt: at, LogTail: []string{"x"}}}
	want := Retried{Attempt: 3, SpotRetries: 1, ReadyTimeouts: 1, NotBefore: at.Add(time.Minute), Attempts: kept}
	if diff := cmp.Diff(want, *c.Retried); diff != "" {
		t.Errorf("NotReady's change (-want +got):\n%s", diff)
	}
	if c.Reason != reason || c.Event == nil || c.Event.Type != "job.retrying" || moved.Status != StatusQueued {
		t.Errorf("NotReady moved to %s with %q and event %+v; want queued, %q, job.retrying", moved.Status, c.Reason, c.Event, reason)
	}
	// The timeout used up none of the retry policy's attempts: attempt 3, less a spot retry and a
	// ready timeout, is the policy's first of 2, so its pod failure is still retried.
	if v := Decide(moved, Cause{Kind: CausePodFailure}, at); !v.Retry {
		t.Errorf("Decide after a ready timeout = %+v; want a retry, the timeout counted apart", v)
	}
}
