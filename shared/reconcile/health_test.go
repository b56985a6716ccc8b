package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tidegate/tidegate/shared/dynamo"
)

// TestBeatRecordsReach: a beat that cannot reach a region's cluster records it missed, counting
// the beats in a row, with why; the first beat that reaches it again records it reached and
// clears the count; how long it went unreached is measured from the first failure of the run (a
// success is written once a minute at most, so the last success on record may be a minute old).
func TestBeatRecordsReach(t *testing.T) {
	r := newFollowRig(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	down, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	beat := func(kc kubernetes.Interface) dynamo.RegionHealth {
		t.Helper()
		h := r.instance(r.store, &ringCounter{}, clock)
		h.Clusters, h.Health = oneClient{kc: kc}, r.store
		_ = h.HandleBeat(ctx, events.EventBridgeEvent{ID: "beat"})
		health, err := r.store.Health(ctx, []string{benchRegion})
		if err != nil {
			t.Fatal(err)
		}
		return health[benchRegion]
	}
	if got := beat(r.kc); got.Failures != 0 || got.LastSuccess == nil || !got.LastSuccess.Equal(now) {
		t.Fatalf("after a beat that reached it: %+v, want reached now", got)
	}
	var firstFailure time.Time
	for i := 1; i <= 2; i++ {
		now = now.Add(time.Minute)
		if i == 1 {
			firstFailure = now
		}
		got := beat(down)
		if got.Failures != i || got.LastError == "" || !strings.Contains(got.LastError, "127.0.0.1:1") {
			t.Errorf("after %d beats that could not reach it: %+v, want %d failures and why", i, got, i)
		}
		if u := got.Unreachable(now); u != now.Sub(firstFailure) {
			t.Errorf("unreachable for %s, want %s: since the first failure of the run", u, now.Sub(firstFailure))
		}
	}
	now = now.Add(time.Minute)
	if got := beat(r.kc); got.Failures != 0 || !got.LastSuccess.Equal(now) || got.LastError != "" || got.Unreachable(now) != 0 {
		t.Errorf("after it was reached again: %+v, want reached now, no failures", got)
	}
}
