package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/jobs"
)

// TestWatchRetriesAnInterruptedJob: a beat watching after its pass sees a running pod of a job
// with a retry policy get DisruptionTarget as it happens, and retries the job then, not at the
// next beat.
func TestWatchRetriesAnInterruptedJob(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	kc, err := r.clusters.Client(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	// The pod runs far longer than the test: only an interruption ends its attempt.
	j, err := r.createRetried("job-watched", "watched", &jobs.Retry{Attempts: 2, On: []string{jobs.RetrySpotInterruption}},
		podAnnotated("pod-complete.stage.kwok.x-k8s.io/delay", "10m"))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); r.job(t, j.ID).Status != jobs.StatusRunning; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job-watched is %s after 2 minutes, want running", r.job(t, j.ID).Status)
		}
		if err := r.dispatch.Drain(ctx, region); err != nil {
			t.Logf("Drain: %v", err)
		}
		if err := r.reconcile.HandleBeat(ctx, events.EventBridgeEvent{ID: "beat"}); err != nil {
			t.Logf("HandleBeat: %v", err)
		}
	}

	r.reconcile.Watch = 12 * time.Second
	done := make(chan error, 1)
	go func() { done <- r.reconcile.HandleBeat(ctx, events.EventBridgeEvent{ID: "watching"}) }()
	time.Sleep(3 * time.Second) // the pass is over; the watch is on
	at := time.Now()
	if n := interrupt(t, kc, r.ns, j.ID); n != 1 {
		t.Fatalf("interrupted %d pods of job-watched, want 1", n)
	}
	for {
		got := r.job(t, j.ID)
		if got.AttemptOf() == 2 {
			t.Logf("job-watched retried %s after its pod's interruption", time.Since(at).Round(10*time.Millisecond))
			last := got.StatusHistory[len(got.StatusHistory)-1]
			if got.Status != jobs.StatusQueued || !strings.HasPrefix(last.Reason, "retrying: spot_interrupted: ") {
				t.Errorf("job-watched after the retry: %s, last history %+v; want queued with retrying: spot_interrupted", got.Status, last)
			}
			break
		}
		if time.Since(at) > 6*time.Second {
			t.Fatalf("job-watched is %s on attempt %d %s after its pod's interruption; want it retried while the beat watches",
				got.Status, got.AttemptOf(), time.Since(at).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Errorf("the watching beat returned (%v) before its window was over", err)
	default:
	}
	if err := <-done; err != nil {
		t.Errorf("the watching beat: %v", err)
	}
}
