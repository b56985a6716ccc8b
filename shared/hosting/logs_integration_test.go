package hosting_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/hosting"
	"github.com/tidegate/tidegate/shared/hostplan"
)

// TestLogsOfReleases: an app's logs are its live host's by default, also after a newer release
// failed; a failed release's lines stay readable by its number after a newer release; a revived
// host's last lines are kept on the app and read once its pod is gone; a release that never ran a
// host has none.
func TestLogsOfReleases(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	logs := func(rel int) (hosting.HostLines, error) {
		t.Helper()
		var r *apps.Release
		if rel != 0 {
			got, err := s.apps.Release(ctx, "acme", "web", rel)
			if err != nil {
				t.Fatal(err)
			}
			r = &got
		}
		return s.h.Logs(ctx, s.app(t, "web"), r, 10)
	}
	h1 := s.goLive(t, "web", 'a')

	// Release 2 fails before it registers; release 1 keeps serving, and its lines are the default.
	s.release(t, "web", 'b')
	s.beat(t)
	h2 := s.hostOf(t, s.app(t, "web"))
	s.running(t, h2)
	s.exit(t, h2, 137, "OOMKilled")
	s.beat(t)
	if a := s.app(t, "web"); a.State != apps.StateFailed {
		t.Fatalf("release 2 killed before registering: state %s, want failed", a.State)
	}
	got, err := logs(0)
	if err != nil || got.Host != h1 || got.Release != 1 || got.From != hosting.FromCluster || !holds(got.Lines, sandbox.FakePodLog) {
		t.Errorf("default logs after release 2 failed = %+v, %v; want live host %s's (release 1) from the cluster", got, err, h1)
	}

	// Once its pod is gone, and after a newer release cleared the app's failure, release 2's lines
	// are those its failure kept.
	waitGone(t, s, h2)
	s.release(t, "web", 'c') // release 3: never beaten, so it never runs a host
	s.release(t, "web", 'd') // release 4
	got, err = logs(2)
	if err != nil || got.Host != h2 || got.Release != 2 || got.From != hosting.FromRecord || !strings.HasPrefix(strings.Join(got.Lines, "\n"), string(hostplan.ReasonOOMKilled)) {
		t.Errorf("logs of failed release 2 after release 4 = %+v, %v; want its host %s's kept failure", got, err, h2)
	}
	if got, err := logs(3); !errors.Is(err, hosting.ErrNoLinesLeft) {
		t.Errorf("logs of release 3, which never ran = %+v, %v; want ErrNoLinesLeft", got, err)
	}

	// The live host crashes and is revived: its last lines are kept with the crash.
	s.exit(t, h1, 1, "Error")
	s.beat(t) // revives h1, starts release 4's host
	a := s.app(t, "web")
	if len(a.Revives) != 1 || a.Revives[0].Host != h1 || a.Revives[0].Release != 1 || !holds(a.Revives[0].Lines, sandbox.FakePodLog) {
		t.Fatalf("revives after %s crashed = %+v, want one of release 1 with its last lines", h1, a.Revives)
	}
	if got, err := logs(1); err != nil || got.From != hosting.FromCluster || got.Host != h1 {
		t.Errorf("logs of release 1 while its revived pod runs = %+v, %v; want its pod's", got, err)
	}
	// While the live host's pod is gone (being replaced) and no other runs, the default is the
	// lines its revive kept.
	h4 := s.hostOf(t, a)
	for _, pod := range []string{h1, h4} {
		if err := s.kc.CoreV1().Pods(s.ns).Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, s, pod)
	}
	if got, err := logs(0); err != nil || got.From != hosting.FromRevive || got.Host != h1 || got.Release != 1 {
		t.Errorf("default logs while the live host's pod is gone = %+v, %v; want its revive's lines", got, err)
	}
	s.beat(t) // starts the wanted host again

	// Release 4 goes live and release 1's host stops: its lines are the revive's.
	s.running(t, h4)
	s.register(t, h4)
	s.beat(t)
	waitGone(t, s, h1)
	got, err = logs(1)
	if err != nil || got.Host != h1 || got.From != hosting.FromRevive || !holds(got.Lines, sandbox.FakePodLog) {
		t.Errorf("logs of release 1 after its host stopped = %+v, %v; want the lines its revive kept", got, err)
	}
	if got, err := logs(0); err != nil || got.Host != h4 || got.Release != 4 {
		t.Errorf("default logs once release 4 is live = %+v, %v; want %s's", got, err, h4)
	}
}

// holds says lines hold line.
func holds(lines []string, line string) bool {
	for _, l := range lines {
		if strings.Contains(l, line) {
			return true
		}
	}
	return false
}
