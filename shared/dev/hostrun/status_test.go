package hostrun

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestStatusOf: each stage of the process shows as a kubelet would show it: the phase, and the
// install's and the app's states with their exit codes.
func TestStatusOf(t *testing.T) {
	pod, _ := hostPod(t, launch(nil), "u1")
	at := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name         string
		p            progress
		phase        corev1.PodPhase
		install, app state
	}{
		{"installing", progress{Stage: installing, Began: at}, corev1.PodPending, state{"running", 0}, state{"waiting", 0}},
		{"install failed", progress{Stage: installFailed, Began: at, Ended: at, ExitCode: 1}, corev1.PodFailed, state{"terminated", 1}, state{"waiting", 0}},
		{"running", progress{Stage: running, Began: at, Started: at}, corev1.PodRunning, state{"terminated", 0}, state{"running", 0}},
		{"exited 0", progress{Stage: exited, Began: at, Started: at, Ended: at}, corev1.PodSucceeded, state{"terminated", 0}, state{"terminated", 0}},
		{"exited 3", progress{Stage: exited, Began: at, Started: at, Ended: at, ExitCode: 3}, corev1.PodFailed, state{"terminated", 0}, state{"terminated", 3}},
	} {
		s := statusOf(pod, tc.p)
		got := []any{s.Phase, s.InitContainerStatuses[0].Name, stateOf(s.InitContainerStatuses[0].State), s.ContainerStatuses[0].Name, stateOf(s.ContainerStatuses[0].State)}
		want := []any{tc.phase, "install", tc.install, "app", tc.app}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(state{})); diff != "" {
			t.Errorf("statusOf(%s) (-want +got):\n%s", tc.name, diff)
		}
		if !shows(s, s) {
			t.Errorf("shows(statusOf(%s), itself) = false", tc.name)
		}
	}
}

// TestShows: a status kwok wrote before it saw the pod was played here (Running, the install
// done) does not show an install still running, nor an exit code another; times do not matter.
func TestShows(t *testing.T) {
	pod, _ := hostPod(t, launch(nil), "u1")
	at := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	installingNow := statusOf(pod, progress{Stage: installing, Began: at})
	kwoks := statusOf(pod, progress{Stage: running, Began: at, Started: at})
	if shows(kwoks, installingNow) {
		t.Errorf("shows(kwok's Running, installing) = true")
	}
	if shows(statusOf(pod, progress{Stage: exited, ExitCode: 1}), statusOf(pod, progress{Stage: exited, ExitCode: 2})) {
		t.Errorf("shows(exited 1, exited 2) = true")
	}
	if !shows(statusOf(pod, progress{Stage: running, Began: at, Started: at.Add(time.Hour)}), kwoks) {
		t.Errorf("shows(running later, running) = false; times must not matter")
	}
	if shows(corev1.PodStatus{Phase: corev1.PodRunning}, kwoks) {
		t.Errorf("shows(a status without containers, running) = true")
	}
}
