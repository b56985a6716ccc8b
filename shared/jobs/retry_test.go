package jobs

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/outbox"
)

func TestRetryCheck(t *testing.T) {
	for _, tc := range []struct {
		r    Retry
		want []string // the fields named
	}{
		{Retry{Attempts: 2, On: []string{"spot_interruption"}}, nil},
		{Retry{Attempts: 10, On: []string{"node_failure", "pod_failure", "exit:1", "exit:255"}, Backoff: "1h"}, nil},
		{Retry{Attempts: 1, On: []string{"exit:137"}, Backoff: "0s"}, nil},
		{Retry{Attempts: 0, On: []string{"pod_failure"}}, []string{"retry.attempts"}},
		{Retry{Attempts: 11, On: []string{"pod_failure"}}, []string{"retry.attempts"}},
		{Retry{Attempts: 1 << 30, On: []string{"pod_failure"}}, []string{"retry.attempts"}},
		{Retry{Attempts: 2}, []string{"retry.on"}},
		{Retry{Attempts: 2, On: []string{"spot"}}, []string{"retry.on[0]"}},
		{Retry{Attempts: 2, On: []string{"pod_failure", "exit:0", "exit:256", "exit:-1", "exit:01", "exit:"}}, []string{"retry.on[1]", "retry.on[2]", "retry.on[3]", "retry.on[4]", "retry.on[5]"}},
		{Retry{Attempts: 2, On: []string{"pod_failure"}, Backoff: "2h"}, []string{"retry.backoff"}},
		{Retry{Attempts: 2, On: []string{"pod_failure"}, Backoff: "-1s"}, []string{"retry.backoff"}},
		{Retry{Attempts: 2, On: []string{"pod_failure"}, Backoff: "soon"}, []string{"retry.backoff"}},
		{Retry{Attempts: 2, On: make([]string, 33)}, append([]string{"retry.on"}, func() []string {
			var out []string
			for i := range 33 {
				out = append(out, fmt.Sprintf("retry.on[%d]", i))
			}
			return out
		}()...)},
	} {
		var got []string
		for _, b := range tc.r.Check("retry") {
			got = append(got, b[0])
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Check(%+v) fields (-want +got):\n%s", tc.r, diff)
		}
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	spot := Cause{Kind: CauseSpotInterrupted}
	node := Cause{Kind: CauseNodeFailure}
	exit3 := Cause{Kind: CauseExit, ExitCode: 3}
	podFail := Cause{Kind: CausePodFailure}
	policy := func(attempts int, backoff string, countSpot bool, on ...string) *Retry {
		return &Retry{Attempts: attempts, On: on, Backoff: backoff, CountSpotInterruptions: countSpot}
	}
	for _, tc := range []struct {
		name              string
		retry             *Retry
		attempt, spotUsed int
		cause             Cause
		want              Verdict
	}{
		{"no policy", nil, 1, 0, spot, Verdict{Why: "no retry policy"}},
		{"not listed", policy(3, "", false, "pod_failure"), 1, 0, spot, Verdict{Why: "its retry policy does not retry spot_interrupted"}},
		{"node not listed", policy(3, "", false, "spot_interruption"), 1, 0, node, Verdict{Why: "its retry policy does not retry node_failure"}},
		{"spot, first", policy(2, "", false, "spot_interruption"), 1, 0, spot, Verdict{Retry: true, NotBefore: now}},
		// Uncounted: attempts 1 with spot interruptions still retries them.
		{"spot uncounted beyond attempts", policy(1, "", false, "spot_interruption"), 4, 3, spot, Verdict{Retry: true, NotBefore: now}},
		{"spot bounded", policy(1, "", false, "spot_interruption"), 11, 10, spot, Verdict{Why: "retried after 10 spot interruptions, the most a job is"}},
		{"spot counted", policy(2, "", true, "spot_interruption"), 1, 0, spot, Verdict{Retry: true, Counted: true, NotBefore: now}},
		{"spot counted, used up", policy(2, "", true, "spot_interruption"), 2, 0, spot, Verdict{Why: "attempts used up (2 of 2)"}},
		{"node", policy(2, "10s", false, "node_failure"), 1, 0, node, Verdict{Retry: true, Counted: true, NotBefore: now.Add(10 * time.Second)}},
		// The third attempt after one uncounted spot retry: two counted, one left.
		{"counted after spot", policy(3, "10s", false, "spot_interruption", "pod_failure"), 3, 1, podFail, Verdict{Retry: true, Counted: true, NotBefore: now.Add(40 * time.Second)}},
		{"used up after spot", policy(2, "", false, "spot_interruption", "pod_failure"), 3, 1, podFail, Verdict{Why: "attempts used up (2 of 2)"}},
		{"exit listed", policy(2, "", false, "exit:3"), 1, 0, exit3, Verdict{Retry: true, Counted: true, NotBefore: now}},
		{"exit other", policy(2, "", false, "exit:4"), 1, 0, exit3, Verdict{Why: "its retry policy does not retry exit:3"}},
		{"exit by pod_failure", policy(2, "", false, "pod_failure"), 1, 0, exit3, Verdict{Retry: true, Counted: true, NotBefore: now}},
		{"pod failure not by exit", policy(2, "", false, "exit:3"), 1, 0, podFail, Verdict{Why: "its retry policy does not retry pod_failure"}},
		{"backoff capped", policy(10, "40m", false, "pod_failure"), 3, 0, podFail, Verdict{Retry: true, Counted: true, NotBefore: now.Add(time.Hour)}},
	} {
		j := Job{ID: "job-1", Retry: tc.retry, Attempt: tc.attempt, SpotRetries: tc.spotUsed}
		if tc.want.Retry || strings.HasPrefix(tc.want.Why, "attempts used up") || strings.HasPrefix(tc.want.Why, "retried after") {
			tc.want.Rule = "on" // the policy's on decided: no rules
		}
		if got := Decide(j, tc.cause, now); got != tc.want {
			t.Errorf("%s: Decide(attempt %d, %d spot retries, %s) = %+v, want %+v", tc.name, tc.attempt, tc.spotUsed, tc.cause.Code(), got, tc.want)
		}
	}
}

// TestRetryingMovesBackToTheQueue: the move, its event and what it keeps, and the bound on the
// attempts kept.
func TestRetryingMovesBackToTheQueue(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	j := New("job-1", "ml", "team-a", "us-east-1", 70, nil, nil, at.Add(-time.Hour))
	j.Retry = &Retry{Attempts: 2, On: []string{RetrySpotInterruption}}
	for _, from := range []Status{StatusPending, StatusRunning} {
		j.Status = from
		c := Cause{Kind: CauseSpotInterrupted, Detail: "pod p: DisruptionTarget"}
		v := Decide(j, c, at)
		lines := make([]string, 30)
		for i := range lines {
			lines[i] = fmt.Sprint("line ", i)
		}
		moved, ch, err := Retrying(j, c, v, AttemptRecord{LogTail: lines, Placement: map[string]any{"node_name": "n1"}}, at)
		if err != nil {
			t.Fatalf("Retrying from %s: %v", from, err)
		}
		if moved.Status != StatusQueued || moved.Attempt != 2 || moved.SpotRetries != 1 || ch.Event == nil || ch.Event.Type != outbox.JobRetrying {
			t.Errorf("Retrying from %s: status %s, attempt %d, spot retries %d, event %+v", from, moved.Status, moved.Attempt, moved.SpotRetries, ch.Event)
		}
		last := moved.StatusHistory[len(moved.StatusHistory)-1]
		if last.Status != StatusQueued || last.Attempt != 2 || !strings.HasPrefix(last.Reason, "retrying: spot_interrupted: pod p") {
			t.Errorf("Retrying from %s: history entry %+v", from, last)
		}
		if ch.Retried == nil || ch.Retried.Attempt != 2 || len(ch.Retried.Attempts) != 1 || len(ch.Retried.Attempts[0].LogTail) != keptAttemptLines ||
			ch.Retried.Attempts[0].LogTail[0] != "line 10" || ch.Retried.Attempts[0].Attempt != 1 || ch.Retried.Attempts[0].Reason != c.Reason() {
			t.Errorf("Retrying from %s: retried %+v", from, ch.Retried)
		}
		if err := ch.Check(); err != nil {
			t.Errorf("Retrying from %s: Check: %v", from, err)
		}
	}
	j.Status = StatusRunning
	if _, _, err := Retrying(j, Cause{Kind: CausePodFailure}, Verdict{Why: "no"}, AttemptRecord{}, at); err == nil {
		t.Error("Retrying without a retry verdict: no error")
	}
	// The attempts kept are the newest MaxKeptAttempts.
	j.Retry = &Retry{Attempts: MaxAttempts, On: []string{RetryPodFailure}}
	for range MaxAttempts - 1 {
		j.Status = StatusRunning
		j, _, _ = Retrying(j, Cause{Kind: CausePodFailure}, Decide(j, Cause{Kind: CausePodFailure}, at), AttemptRecord{}, at)
	}
	if j.Attempt != MaxAttempts || len(j.Attempts) != MaxKeptAttempts || j.Attempts[0].Attempt != MaxAttempts-MaxKeptAttempts {
		t.Errorf("after %d retries: attempt %d, kept %d, oldest kept %d", MaxAttempts-1, j.Attempt, len(j.Attempts), j.Attempts[0].Attempt)
	}
	j.Status = StatusRunning
	if v := Decide(j, Cause{Kind: CausePodFailure}, at); v.Retry {
		t.Errorf("the last attempt retried: %+v", v)
	}
}

// TestPreempted: an eviction queues the job again as a new attempt, counted in Preemptions and
// not in its retry policy's attempts, with job.preempted and the reason, its shield dropped, and
// what the attempt left kept.
func TestPreempted(t *testing.T) {
	at := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	// Attempt 1 ended in a spot interruption, 2 was preempted, 3 runs.
	j := Job{ID: "job-1", Status: StatusRunning, Attempt: 3, SpotRetries: 1, Preemptions: 1,
		Retry: &Retry{Attempts: 2, On: []string{RetryPodFailure}}, Shield: &Shield{Tenant: "b", Until: at}}
	moved, c, err := Preempted(j, "reclaimed", AttemptRecord{LogTail: []string{"step 90"}}, at)
	if err != nil {
		t.Fatal(err)
	}
	if moved.Status != StatusQueued || moved.Attempt != 4 || moved.Preemptions != 2 || moved.SpotRetries != 1 || moved.Shield != nil {
		t.Errorf("moved = %s, attempt %d, preemptions %d, spot retries %d, shield %v; want queued, 4, 2, 1, none",
			moved.Status, moved.Attempt, moved.Preemptions, moved.SpotRetries, moved.Shield)
	}
	if c.Event == nil || c.Event.Type != "job.preempted" || c.Reason != "preempted: reclaimed" || c.From != StatusRunning {
		t.Errorf("change %+v; want running → queued with job.preempted, reason preempted: reclaimed", c)
	}
	if r := c.Retried; r == nil || r.Attempt != 4 || r.Preemptions != 2 || len(r.Attempts) != 1 || r.Attempts[0].Attempt != 3 || r.Attempts[0].LogTail[0] != "step 90" {
		t.Errorf("retried %+v; want attempt 4, preemptions 2, attempt 3 kept with its lines", r)
	}
	// Of four attempts only the fourth counts against the policy's two: a pod failure of it is
	// retried, and one of the attempt after that is not.
	if v := Decide(moved, Cause{Kind: CausePodFailure}, at); !v.Retry || !v.Counted {
		t.Errorf("a pod failure after a preemption: %+v; want a counted retry (one of two attempts used)", v)
	}
	moved.Attempt++
	if v := Decide(moved, Cause{Kind: CausePodFailure}, at); v.Retry {
		t.Errorf("a pod failure of the second counted attempt: %+v; want no retry", v)
	}
	if _, _, err := Preempted(Job{ID: "job-2", Status: StatusSucceeded}, "reclaimed", AttemptRecord{}, at); err == nil {
		t.Errorf("Preempted(a succeeded job) = nil error; want one")
	}
	if got := CheckpointURI("s3://ckpt/", "acme", "job-1"); got != "s3://ckpt/acme/job-1/" {
		t.Errorf("CheckpointURI = %q", got)
	}
	if got := CheckpointURI("", "acme", "job-1"); got != "" {
		t.Errorf("CheckpointURI without a bucket = %q, want none", got)
	}
}

// TestPreemptedTooOften: a job evicted as often as its max_preemptions allows fails
// preempted_too_often, with job.failed, rather than queue again.
func TestPreemptedTooOften(t *testing.T) {
	at := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	one := 1
	j := Job{ID: "job-1", Status: StatusRunning, Attempt: 2, Preemptions: 1, MaxPreemptions: &one}
	moved, c, err := Preempted(j, "reclaimed", AttemptRecord{}, at)
	if err != nil || moved.Status != StatusFailed || c.Event == nil || c.Event.Type != "job.failed" || !strings.HasPrefix(c.Reason, ReasonPreemptedTooOften+": ") {
		t.Errorf("Preempted(evicted once, max 1) = %s, %+v, %v; want failed preempted_too_often with job.failed", moved.Status, c, err)
	}
	j.Preemptions = 0
	if moved, _, err := Preempted(j, "reclaimed", AttemptRecord{}, at); err != nil || moved.Status != StatusQueued {
		t.Errorf("Preempted(never evicted, max 1) = %s, %v; want queued", moved.Status, err)
	}
}
