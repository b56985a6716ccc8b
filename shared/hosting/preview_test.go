package hosting

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/hostplan"
	"github.com/tidegate/tidegate/shared/podspec"
)

var previewNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// previewPod is host's pod as the beat lists it: built as the beat builds it, of UID uid, its app
// process running since started ago, Ready as ready says since readyFor ago.
func previewPod(t *testing.T, host, uid string, ready *apps.Ready, started time.Duration, isReady bool, readyFor time.Duration) *corev1.Pod {
	t.Helper()
	p, err := podspec.Pod(podspec.Launch{
		Org: "acme", App: "web", Host: host, Release: 2, Namespace: "apps", Stack: "prod", Ready: ready,
		SourcesURL: "https://sources.example/x", SourcesSHA256: strings.Repeat("a", 64),
		HostToken: "tgh_x", RegisterURL: "https://api.example/api/v1/hosts/" + host + "/register",
	})
	if err != nil {
		t.Fatal(err)
	}
	p.UID = types.UID(uid)
	p.Status.Phase = corev1.PodRunning
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: podspec.InstallContainer,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: podspec.AppContainer,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(previewNow.Add(-started))}}}}
	status := corev1.ConditionFalse
	if isReady {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(previewNow.Add(-readyFor))}}
	return p
}

// preview plans app a over pods as the beat does, and explains each step as the preview does.
func preview(a apps.App, want hostplan.App, pods ...*corev1.Pod) []PlannedStep {
	w := &world{now: previewNow, crashes: map[string][]time.Time{}, podsByName: map[string]podInfo{}}
	refs := make([]podRef, len(pods))
	for i, p := range pods {
		refs[i] = podRef{p}
	}
	w.addPods(refs)
	var out []PlannedStep
	for _, st := range hostplan.Plan([]hostplan.App{want}, w.containers, w.crashes, w.now)[want.Key] {
		out = append(out, explain(st, a, true, want, w))
	}
	return out
}

// TestPreviewSaysWhatThePlanDoes: the preview's words match the steps of the same beat. When the
// wanted host goes live, the live one is stopped in that beat, not the next; a host with a
// readiness check goes live only once it passes, and one unready past the limit is run again as
// unhealthy.
func TestPreviewSaysWhatThePlanDoes(t *testing.T) {
	const h1, h2 = "web-r1-00000001", "web-r2-00000002"
	a := apps.App{Org: "acme", Name: "web", Release: 2, LiveRelease: 1, LiveHost: h1, State: apps.StateLive}
	want := hostplan.App{Key: "acme/web", Host: h2, LiveHost: h1, RegisteredPod: "uid-2", RegisteredAt: previewNow.Add(-time.Minute)}
	live := previewPod(t, h1, "uid-1", nil, time.Hour, true, time.Hour)

	steps := preview(a, want, previewPod(t, h2, "uid-2", nil, time.Minute, true, time.Minute), live)
	if len(steps) != 2 || steps[0].Step != "went_live" || steps[1].Step != "stop" || steps[1].Host != h1 {
		t.Fatalf("registered without a check: steps %+v, want went_live %s then stop %s in the same beat", steps, h2, h1)
	}
	if !strings.Contains(steps[0].Why, h1+" is stopped in the same beat") || strings.Contains(steps[0].Why, "next beat") {
		t.Errorf("went_live says %q; the plan stops %s in the same beat", steps[0].Why, h1)
	}
	if !strings.Contains(steps[1].Why, h2+" registered and replaces it in this beat") {
		t.Errorf("stop says %q, want that %s replaces it in this beat", steps[1].Why, h2)
	}

	check := &apps.Ready{Path: "/healthz", Port: 8080}
	steps = preview(a, want, previewPod(t, h2, "uid-2", check, 2*time.Minute, true, 5*time.Second), live)
	if len(steps) != 2 || !strings.HasPrefix(steps[0].Why, "it registered and its readiness check passes") {
		t.Errorf("registered and ready: steps %+v, want went_live saying its check passes", steps)
	}
	want.RegisteredAt = previewNow.Add(-90 * time.Second)
	if steps := preview(a, want, previewPod(t, h2, "uid-2", check, 2*time.Minute, false, 2*time.Minute), live); len(steps) != 1 ||
		steps[0].Step != "revive" || !strings.HasPrefix(steps[0].Why, "unhealthy: it registered and its readiness check has failed for over 60 s") ||
		!strings.Contains(steps[0].Why, "crash 1 of the 5") {
		t.Errorf("registered and unready past the limit: steps %+v, want revive saying unhealthy, crash 1 of 5", steps)
	}
}

// TestPreviewIdleSaysWhy: with nothing to do, the preview says what it waits for.
func TestPreviewIdleSaysWhy(t *testing.T) {
	const h2 = "web-r2-00000002"
	a := apps.App{Org: "acme", Name: "web", Release: 2, LiveHost: "web-r1-00000001", State: apps.StateLive}
	want := hostplan.App{Key: "acme/web", Host: h2, LiveHost: a.LiveHost, UnreadyLimit: 90 * time.Second}
	unready := hostplan.Container{Name: h2, Checked: true}
	for _, tt := range []struct {
		registered bool
		c          hostplan.Container
		says       string
	}{
		{false, unready, "waiting for " + h2 + " to register"},
		{true, unready, h2 + " registered; waiting for its readiness check to pass (it is run again once it has failed for over 90 s)"},
	} {
		if got := idle(a, want, tt.registered, tt.c); got != tt.says {
			t.Errorf("idle(registered %v, %+v) = %q, want %q", tt.registered, tt.c, got, tt.says)
		}
	}
}
