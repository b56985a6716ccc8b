package hostrun

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// stage is where a pod's process is.
type stage int

const (
	installing    stage = iota // the install container's script runs
	installFailed              // it ended with a code other than 0; the app never ran
	running                    // the app container's command runs
	exited                     // it ended
)

// progress is a pod's process as its status is to show it.
type progress struct {
	Stage stage
	// Began is when the install began, Started when the app began, Ended when the last of them
	// ended.
	Began, Started, Ended time.Time
	// ExitCode is the install's when installFailed, the app's when exited.
	ExitCode int32
}

// statusOf is the status a kubelet would give pod at p: Pending while it installs, Running while
// the app runs, then Succeeded or Failed with the exit code, each container's state to match.
func statusOf(pod *corev1.Pod, p progress) corev1.PodStatus {
	began, started, ended := metav1.NewTime(p.Began), metav1.NewTime(p.Started), metav1.NewTime(p.Ended)
	s := corev1.PodStatus{StartTime: &began, HostIP: "127.0.0.1", PodIP: "127.0.0.1"}
	var install, app corev1.ContainerState
	switch p.Stage {
	case installing:
		s.Phase = corev1.PodPending
		install.Running = &corev1.ContainerStateRunning{StartedAt: began}
		app.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
	case installFailed:
		s.Phase = corev1.PodFailed
		install.Terminated = terminated(p.ExitCode, began, ended)
		app.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
	case running:
		s.Phase = corev1.PodRunning
		install.Terminated = terminated(0, began, started)
		app.Running = &corev1.ContainerStateRunning{StartedAt: started}
	case exited:
		s.Phase = corev1.PodSucceeded
		if p.ExitCode != 0 {
			s.Phase = corev1.PodFailed
		}
		install.Terminated = terminated(0, began, started)
		app.Terminated = terminated(p.ExitCode, started, ended)
	}
	ready := p.Stage == running
	s.Conditions = []corev1.PodCondition{
		condition(corev1.PodInitialized, p.Stage != installing, began),
		condition(corev1.PodReady, ready, began),
		condition(corev1.ContainersReady, ready, began),
	}
	for _, c := range pod.Spec.InitContainers {
		s.InitContainerStatuses = append(s.InitContainerStatuses, containerStatus(c, install))
	}
	for _, c := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, containerStatus(c, app))
	}
	return s
}

func terminated(code int32, started, ended metav1.Time) *corev1.ContainerStateTerminated {
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	return &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: ended}
}

func condition(t corev1.PodConditionType, ok bool, at metav1.Time) corev1.PodCondition {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	return corev1.PodCondition{Type: t, Status: status, LastTransitionTime: at}
}

func containerStatus(c corev1.Container, state corev1.ContainerState) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, State: state,
		Ready:   state.Running != nil,
		Started: ptr.To(state.Running != nil),
	}
}

// shows says the status s already says what want does: the same phase and each container in the
// same state with the same exit code. What else differs (times, kwok's addresses) is left be.
func shows(s, want corev1.PodStatus) bool {
	if s.Phase != want.Phase {
		return false
	}
	return sameStates(s.InitContainerStatuses, want.InitContainerStatuses) && sameStates(s.ContainerStatuses, want.ContainerStatuses)
}

func sameStates(have, want []corev1.ContainerStatus) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range want {
		if have[i].Name != want[i].Name || stateOf(have[i].State) != stateOf(want[i].State) {
			return false
		}
	}
	return true
}

// state is a container's state by kind, with its exit code once terminated: what two statuses
// must share to show the same thing.
type state struct {
	kind string
	code int32
}

func stateOf(s corev1.ContainerState) state {
	switch {
	case s.Running != nil:
		return state{"running", 0}
	case s.Terminated != nil:
		return state{"terminated", s.Terminated.ExitCode}
	case s.Waiting != nil:
		return state{"waiting", 0}
	}
	return state{}
}
