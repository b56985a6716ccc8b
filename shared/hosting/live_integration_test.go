package hosting_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/podspec"
)

// releaseLaunch releases app with sources filled with c, started by start.
func (s *stack) releaseLaunch(t *testing.T, app string, c byte, start ...string) apps.Release {
	t.Helper()
	r, err := s.apps.CreateRelease(context.Background(), "acme", apps.Release{
		App: app, SHA256: strings.Repeat(string(c), 64), Bytes: 10, CreatedAt: s.now, Launch: &apps.Launch{Start: start},
	})
	if err != nil {
		t.Fatalf("CreateRelease: %v", err)
	}
	return r
}

// runs says which sources and command host's pod installs and starts: the digest its install
// checks, and the app container's command after the start script.
func runs(t *testing.T, p corev1.Pod) (sha string, start []string) {
	t.Helper()
	for _, ic := range p.Spec.InitContainers {
		for _, e := range ic.Env {
			if e.Name == "TIDEGATE_SOURCES_SHA256" {
				sha = e.Value
			}
		}
	}
	for _, c := range p.Spec.Containers {
		if c.Name == podspec.AppContainer && len(c.Command) > 4 {
			start = c.Command[4:]
		}
	}
	return sha, start
}

// TestLostLiveHostServesUntilTheWantedRegisters: release 1 is live and release 2 wanted, its host
// started and not registered, when release 1's pod is lost. The next beat starts release 1's host
// again, from release 1's own sources and start command beside the Secret it ran with, and
// counts a crash of it; the app stays live on it, later beats leave it be, and its process
// cannot register in the wanted release's place. Release 2's host
// still registers with its own token, goes live, and only then is release 1's host stopped.
func TestLostLiveHostServesUntilTheWantedRegisters(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	s.releaseLaunch(t, "web", 'a', "node", "v1.js")
	s.beat(t)
	h1 := s.hostOf(t, s.app(t, "web"))
	s.running(t, h1)
	s.register(t, h1)
	s.beat(t)
	if a := s.app(t, "web"); a.LiveHost != h1 {
		t.Fatalf("release 1 did not go live on %s: live host %q", h1, a.LiveHost)
	}
	secretBefore, err := s.kc.CoreV1().Secrets(s.ns).Get(ctx, podspec.SecretName(h1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	s.releaseLaunch(t, "web", 'b', "node", "v2.js")
	s.beat(t)
	h2 := s.hostOf(t, s.app(t, "web"))
	s.running(t, h2)
	lost := s.pods(t)[h1]
	zero := int64(0)
	if err := s.kc.CoreV1().Pods(s.ns).Delete(ctx, h1, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, s, h1)

	s.beat(t) // the live host's pod is lost: started again
	p, ok := s.pods(t)[h1]
	if !ok {
		t.Fatalf("the beat after the live host %s lost its pod did not start it again: pods %v", h1, keys(s.pods(t)))
	}
	if p.UID == lost.UID {
		t.Fatalf("the live host's pod has the lost pod's UID %s", lost.UID)
	}
	if sha, start := runs(t, p); sha != strings.Repeat("a", 64) || !slices.Equal(start, []string{"node", "v1.js"}) {
		t.Errorf("the live host started again installs %q and starts %q; want release 1's sources and start command", sha, start)
	}
	if p.Labels[podspec.ReleaseLabel] != "1" {
		t.Errorf("the live host started again is labelled release %q, want 1", p.Labels[podspec.ReleaseLabel])
	}
	secretAfter, err := s.kc.CoreV1().Secrets(s.ns).Get(ctx, podspec.SecretName(h1), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the live host's Secret after it was started again: %v", err)
	}
	if secretAfter.UID != secretBefore.UID {
		t.Errorf("the live host's Secret was written again; want the one it ran with kept")
	}
	a := s.app(t, "web")
	if a.LiveHost != h1 || a.State != apps.StateDeploying {
		t.Fatalf("after the live host was started again: state %s, live on %q; want release 2 still deploying and %s live", a.State, a.LiveHost, h1)
	}
	if len(a.Crashes[h1]) != 1 {
		t.Errorf("crashes of %s after its lost pod was started again = %v, want one", h1, a.Crashes[h1])
	}

	// The old release's process, started again, cannot register over the wanted release: its
	// token is not the app's current one, and a registration of it would change nothing.
	_, _, err = s.apps.Register(ctx, h1, string(p.UID), string(secretAfter.Data[podspec.EnvHostToken]), s.now)
	if !errors.Is(err, dynamo.ErrHostNotWanted) {
		t.Errorf("registering the live host started again with its own token: %v, want %v", err, dynamo.ErrHostNotWanted)
	}

	s.running(t, h1)
	s.beat(t)
	if got := s.pods(t)[h1]; got.UID != p.UID {
		t.Errorf("a beat with the live host running replaced its pod %s with %s", p.UID, got.UID)
	}
	if got := s.app(t, "web").Crashes[h1]; len(got) != 1 {
		t.Errorf("crashes of %s after a quiet beat = %v, want still one", h1, got)
	}

	s.register(t, h2) // the wanted host's token is still its own
	s.beat(t)
	if a := s.app(t, "web"); a.LiveHost != h2 {
		t.Fatalf("after release 2's host registered: live host %q, want %s", a.LiveHost, h2)
	}
	pods := s.pods(t)
	if _, ok := pods[h1]; ok {
		t.Errorf("release 1's host %s still runs after %s went live", h1, h2)
	}
	if _, ok := pods[h2]; !ok {
		t.Errorf("the new live host %s has no pod", h2)
	}
}
