package hosting_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/hostplan"
)

// releaseChecked releases app (sources filled with c) with a tidegate.json readiness check.
func (s *stack) releaseChecked(t *testing.T, app string, c byte) {
	t.Helper()
	r := apps.Release{App: app, SHA256: strings.Repeat(string(c), 64), Bytes: 10, CreatedAt: s.now,
		Launch: &apps.Launch{Ready: &apps.Ready{Path: "/healthz", Port: 8080}}}
	if _, err := s.apps.CreateRelease(context.Background(), "acme", r); err != nil {
		t.Fatalf("CreateRelease: %v", err)
	}
}

// setReady makes host's pod's Ready condition ready as of the test's clock, as the kubelet
// reports its readiness probe, through the status subresource: kwok runs no probe.
func (s *stack) setReady(t *testing.T, host string, ready bool) {
	t.Helper()
	ctx := context.Background()
	p, err := s.kc.CoreV1().Pods(s.ns).Get(ctx, host, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	found := false
	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.LastTransitionTime = status, metav1.NewTime(s.now)
			found = found || c.Type == corev1.PodReady
		}
	}
	if !found {
		t.Fatalf("pod %s has no Ready condition to change: %+v", host, p.Status.Conditions)
	}
	if _, err := s.kc.CoreV1().Pods(s.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting %s's Ready condition: %v", host, err)
	}
}

// uidOf is host's pod's UID now.
func (s *stack) uidOf(t *testing.T, host string) string {
	t.Helper()
	p, ok := s.pods(t)[host]
	if !ok {
		t.Fatalf("host %s has no pod; pods: %v", host, keys(s.pods(t)))
	}
	return string(p.UID)
}

// TestUnhealthyHosts is the story on the stand-ins: release 2 declares a readiness check,
// which becomes its pod's readiness probe. Registered but not ready, it does not go live and
// release 1 keeps serving; once its check has failed for longer than the limit it is run again as
// unhealthy, a crash; after five such revivals in the window the release fails crash_looping and
// release 1 still serves. Release 3 goes live once registered and ready, and is run again as
// unhealthy when its check fails past the limit while it serves.
func TestUnhealthyHosts(t *testing.T) {
	s := newStack(t)
	s.h.UnreadyLimit = 40 * time.Second
	h1 := s.goLive(t, "web", 'a')
	serving := func(when string) {
		t.Helper()
		if a := s.app(t, "web"); a.LiveHost != h1 {
			t.Fatalf("%s: live host %q, want %s still", when, a.LiveHost, h1)
		}
		if _, ok := s.pods(t)[h1]; !ok {
			t.Fatalf("%s: the live host %s has no pod", when, h1)
		}
	}
	// The test's clock runs ahead of kwok's, so every start kwok stamps is before the clock.
	s.now = time.Now().UTC().Add(time.Minute).Truncate(time.Second)

	s.releaseChecked(t, "web", 'b')
	s.beat(t)
	h2 := s.hostOf(t, s.app(t, "web"))
	if p := s.pods(t)[h2].Spec.Containers[0].ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.IntValue() != 8080 {
		t.Fatalf("release 2's pod has readiness probe %+v, want GET /healthz on 8080", p)
	}
	for revival := 1; revival <= hostplan.MostCrashes+1; revival++ {
		s.running(t, h2)
		uid := s.uidOf(t, h2)
		s.setReady(t, h2, false)
		s.register(t, h2)
		s.now = s.now.Add(30 * time.Second)
		s.beat(t)
		serving("registered and not ready, within the limit")
		if s.uidOf(t, h2) != uid {
			t.Fatalf("revival %d: %s was run again within the limit", revival, h2)
		}
		s.now = s.now.Add(11 * time.Second)
		s.beat(t)
		serving("registered and not ready past the limit")
		a := s.app(t, "web")
		if revival > hostplan.MostCrashes {
			if a.State != apps.StateFailed || !strings.HasPrefix(a.FailedWhy, string(hostplan.ReasonCrashLooping)+": ") || a.FailedRelease != 2 {
				t.Fatalf("unhealthy once more after %d revivals: state %s, failed_why %q; want release 2 failed crash_looping", hostplan.MostCrashes, a.State, a.FailedWhy)
			}
			if _, ok := s.pods(t)[h2]; ok {
				t.Errorf("release 2's crash-looping host %s was not removed", h2)
			}
			break
		}
		if a.State == apps.StateFailed {
			t.Fatalf("revival %d: release failed %q, want it run again", revival, a.FailedWhy)
		}
		if got := len(a.Crashes[h2]); got != revival {
			t.Fatalf("revival %d: %d crashes recorded for %s, want %d", revival, got, h2, revival)
		}
		waitReplaced(t, s, h2, uid)
	}

	// Release 3 goes live once registered and ready; while it serves, its check failing past the
	// limit runs it again as unhealthy.
	s.now = s.now.Add(time.Minute)
	s.releaseChecked(t, "web", 'c')
	s.beat(t)
	h3 := s.hostOf(t, s.app(t, "web"))
	s.running(t, h3)
	s.setReady(t, h3, false)
	s.register(t, h3)
	s.beat(t)
	serving("release 3 registered, not ready")
	s.now = s.now.Add(5 * time.Second)
	s.setReady(t, h3, true)
	s.beat(t)
	if a := s.app(t, "web"); a.LiveHost != h3 || a.State != apps.StateLive {
		t.Fatalf("release 3 registered and ready: live host %q (%s), want %s", a.LiveHost, a.State, h3)
	}
	uid := s.uidOf(t, h3)
	s.setReady(t, h3, false)
	s.now = s.now.Add(41 * time.Second)
	s.beat(t)
	if a := s.app(t, "web"); len(a.Crashes[h3]) != 1 || a.LiveHost != h3 {
		t.Errorf("release 3 serving and unready past the limit: crashes %v, live host %q; want one crash, still %s", a.Crashes[h3], a.LiveHost, h3)
	}
	waitReplaced(t, s, h3, uid)
}

// waitReplaced waits until host's pod is another than the one of UID uid, and checks that the new
// pod is still there three seconds later: long past when kwok would have played a stage for the
// deletion of the one it replaced (the sandbox's pod-delete stage leaves a deletion with no grace
// period to the apiserver, so kwok never deletes a newer pod by the old one's name).
func waitReplaced(t *testing.T, s *stack, host, uid string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		p, ok := s.pods(t)[host]
		if !ok || string(p.UID) == uid {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		time.Sleep(3 * time.Second)
		if again, ok := s.pods(t)[host]; !ok || again.UID != p.UID {
			t.Fatalf("host %s's new pod %s vanished after its revival: something deleted it by name", host, p.UID)
		}
		return
	}
	t.Fatalf("host %s was not run again: its pod is still %s, or none", host, uid)
}
