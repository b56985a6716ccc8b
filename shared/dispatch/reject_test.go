package dispatch

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/unblock"
)

// storeJob creates queued job id of namespace ns running manifests.
func (r rig) storeJob(t *testing.T, id, ns string, priority int, manifests ...map[string]any) jobs.Job {
	t.Helper()
	now := r.clock.now()
	j := jobs.New(id, "ml", ns, region, priority, nil, manifests, now)
	if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	return j
}

func configMap(name string, data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": data}
}

// TestRejectedByClusterFailsAtOnce: manifests the API server refuses for good (an invalid object
// after a valid one; a namespace the cluster does not have) fail their jobs in the drain that
// applies them, with rejected_by_cluster and the server's message, the objects already made
// deleted, and their room free at once: in a region of capacity 1, a compliant job behind them
// runs.
func TestRejectedByClusterFailsAtOnce(t *testing.T) {
	r := newRig(t, 1)
	invalid := r.storeJob(t, "job-invalid", r.ns, 90,
		configMap("made-first", map[string]any{"k": "v"}), configMap("refused", map[string]any{"not a key!": "v"}))
	missing := r.storeJob(t, "job-missing-ns", "no-such-namespace-here", 80, configMap("x", map[string]any{"k": "v"}))
	fine := r.submit(t, "fine", 10, nil)

	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	got := r.job(t, invalid.ID)
	last := got.StatusHistory[len(got.StatusHistory)-1]
	if got.Status != jobs.StatusFailed || !strings.HasPrefix(last.Reason, jobs.ReasonRejectedByCluster+": ") || !strings.Contains(last.Reason, "not a key!") {
		t.Errorf("job with an invalid object after one drain = %s (%q), want failed, rejected_by_cluster with the server's message", got.Status, last.Reason)
	}
	r.run(t, []string{missing.ID, fine.ID}, allEnded(missing.ID, fine.ID))
	if got := r.job(t, missing.ID); got.Status != jobs.StatusFailed || !strings.HasPrefix(got.StatusHistory[len(got.StatusHistory)-1].Reason, jobs.ReasonRejectedByCluster) {
		t.Errorf("job in a namespace the cluster lacks = %s (%v), want failed, rejected_by_cluster", got.Status, got.StatusHistory)
	}
	if got := r.job(t, fine.ID); got.Status != jobs.StatusSucceeded {
		t.Errorf("the compliant job behind them = %s (%v), want succeeded: the refused jobs give their room back", got.Status, got.StatusHistory)
	}
	kc, err := r.clusters.Client(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err := kc.CoreV1().ConfigMaps(r.ns).Get(context.Background(), "made-first", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refused job's first object is still there (%v), want it deleted", err)
		}
	}
}

// flaky answers 503 to the first fail POSTs to the API server, then passes requests on.
type flaky struct {
	next http.RoundTripper
	fail atomic.Int32
}

func (f *flaky) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && f.fail.Add(-1) >= 0 {
		if req.Body != nil {
			req.Body.Close()
		}
		return synthetic(req, http.StatusServiceUnavailable, ""), nil
	}
	return f.next.RoundTrip(req)
}

// flakyClusters is the rig's cluster behind a flaky transport.
type flakyClusters struct{ dc dynamic.Interface }

func (c flakyClusters) Dynamic(context.Context, string) (dynamic.Interface, error) { return c.dc, nil }

func newFlaky(t *testing.T, r rig, fails int) *flaky {
	t.Helper()
	rc, err := r.clusters.Config(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	f := &flaky{}
	f.fail.Store(int32(fails))
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper { f.next = next; return f }
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	r.dispatch.Clusters = flakyClusters{dc}
	return f
}

// TestTransientApplyErrorsRetryThenFail: an apply the cluster answers with a server error waits
// out a backoff that doubles, its attempts counted on the record, and is applied again after it;
// past jobs.MaxDispatchAttempts the job fails with dispatch_failed rather than holding its room.
func TestTransientApplyErrorsRetryThenFail(t *testing.T) {
	r := newRig(t, 5)
	f := newFlaky(t, r, 1<<20)
	j := r.submit(t, "flaky", 50, nil)
	for attempt := 1; attempt <= 2; attempt++ {
		if attempt > 1 {
			r.clock.skip(retryBackoff << (attempt - 2)) // the backoff the last attempt set
		}
		start := r.clock.now()
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
		got := r.job(t, j.ID)
		if got.Status != jobs.StatusDispatching || got.DispatchAttempts != attempt || got.Claim == nil || !got.Claim.Parked ||
			got.Claim.Until.Before(start.Add(retryBackoff<<(attempt-1))) || !strings.Contains(got.DispatchError, "injected") {
			t.Fatalf("after drain %d against a failing cluster: %s, attempts %d, claim %+v, error %q; want dispatching, parked for %s, counted",
				attempt, got.Status, got.DispatchAttempts, got.Claim, got.DispatchError, retryBackoff<<(attempt-1))
		}
	}
	// The cluster mends: the next drain past the backoff applies it.
	f.fail.Store(0)
	before := r.job(t, j.ID)
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatal(err)
	}
	if got := r.job(t, j.ID); got.Status != jobs.StatusDispatching || got.DispatchAttempts != before.DispatchAttempts {
		t.Errorf("a drain before the backoff ran out: %s with %d attempts, want it left waiting", got.Status, got.DispatchAttempts)
	}
	r.clock.skip(retryBackoff << (before.DispatchAttempts - 1))
	r.run(t, []string{j.ID}, allEnded(j.ID))
	if got := r.job(t, j.ID); got.Status != jobs.StatusSucceeded || got.DispatchAttempts != before.DispatchAttempts {
		t.Errorf("once the cluster answers: %s with %d attempts (%v), want succeeded, the attempts kept", got.Status, got.DispatchAttempts, got.StatusHistory)
	}

	// A cluster that never mends: the job fails after its last attempt.
	f.fail.Store(1 << 20)
	stuck := r.submit(t, "stuck", 50, nil)
	for range jobs.MaxDispatchAttempts {
		if err := r.dispatch.Drain(context.Background(), region); err != nil {
			t.Fatal(err)
		}
		r.clock.skip(2 * time.Minute)
	}
	got := r.job(t, stuck.ID)
	if last := got.StatusHistory[len(got.StatusHistory)-1]; got.Status != jobs.StatusFailed || !strings.HasPrefix(last.Reason, jobs.ReasonDispatchFailed+": ") {
		t.Errorf("a job the cluster never takes = %s (%q, %d attempts), want failed, dispatch_failed", got.Status, last.Reason, got.DispatchAttempts)
	}
}

// TestRejectedReleasesItsDependents: a job the cluster refuses releases its dependents as its
// failure is recorded: the one waiting for its success is cancelled dependency_not_met, the one
// waiting for any end is queued.
func TestRejectedReleasesItsDependents(t *testing.T) {
	r := newRig(t, 1)
	r.dispatch.Releaser = &unblock.Releaser{Jobs: r.store, Now: r.clock.now}
	ctx := context.Background()
	refused := r.storeJob(t, "job-refused", r.ns, 90, configMap("refused", map[string]any{"not a key!": "v"}))
	waiting := func(id string, on jobs.Condition) {
		now := r.clock.now()
		j := jobs.New(id, "ml", r.ns, region, 50, nil, []map[string]any{configMap(id, nil)}, now)
		j.DependsOn = []jobs.Dependency{{Job: refused.ID, On: on}}
		j = jobs.Block(j, jobs.StatusBlocked, []string{refused.ID}, jobs.ReasonWaitingForDependencies, now)
		if _, _, err := r.store.Create(ctx, j, jobs.Event(outbox.JobBlocked, j, "", now), nil, now); err != nil {
			t.Fatal(err)
		}
	}
	waiting("job-on-success", jobs.OnSucceeded)
	waiting("job-on-end", jobs.OnEnded)
	if err := r.dispatch.Drain(ctx, region); err != nil {
		t.Fatal(err)
	}
	if got := r.job(t, refused.ID); got.Status != jobs.StatusFailed {
		t.Fatalf("the refused job = %s, want failed", got.Status)
	}
	if got := r.job(t, "job-on-success"); got.Status != jobs.StatusCancelled {
		t.Errorf("the job waiting for its success = %s, want cancelled at once", got.Status)
	}
	if got := r.job(t, "job-on-end"); got.Status != jobs.StatusQueued && got.Status != jobs.StatusDispatching && got.Status != jobs.StatusPending {
		t.Errorf("the job waiting for any end = %s, want released into the queue", got.Status)
	}
}
