package hosting

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/hostplan"
	"github.com/tidegate/tidegate/shared/podspec"
	"github.com/tidegate/tidegate/shared/records"
)

// sourcesSHAEnv is the install container's variable holding the sources' digest (podspec sets it).
const (
	sourcesSHAEnv = "TIDEGATE_SOURCES_SHA256"
	sourcesURLEnv = "TIDEGATE_SOURCES_URL"
)

// podRef is one host's pod as the LIST answered it.
type podRef struct{ p *corev1.Pod }

// container is the pod as the plan reads it, and what carrying out a step needs besides.
func (r podRef) container() (hostplan.Container, podInfo) {
	p := r.p
	key, ours := podspec.AppOf(p)
	c := hostplan.Container{Name: p.Name, UID: string(p.UID), App: key, Ours: ours, CreatedAt: p.CreationTimestamp.Time}
	info := podInfo{spec: r}
	for _, ic := range p.Spec.InitContainers {
		if ic.Name != podspec.InstallContainer {
			continue
		}
		for _, e := range ic.Env {
			if e.Name == sourcesSHAEnv {
				info.sourcesSHA256 = e.Value
			}
		}
	}
	c.Installing = true
	for _, s := range p.Status.InitContainerStatuses {
		if s.Name != podspec.InstallContainer {
			continue
		}
		if t := s.State.Terminated; t != nil {
			c.Installing = false
			if t.ExitCode != 0 {
				c.InstallFailed, c.ExitCode = true, t.ExitCode
			}
		}
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name != podspec.AppContainer {
			continue
		}
		switch {
		case s.State.Running != nil:
			c.Installing, c.StartedAt = false, s.State.Running.StartedAt.Time
		case s.State.Terminated != nil:
			t := s.State.Terminated
			c.Installing, c.StartedAt = false, t.StartedAt.Time
			c.OOMKilled = t.Reason == "OOMKilled"
			if !c.InstallFailed {
				c.ExitCode = t.ExitCode
			}
		}
	}
	c.Exited = p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	readiness(p, &c)
	return c, info
}

// readiness reads into c whether the app container has a readiness check and, if so, the pod's
// Ready condition: whether the check passes, and since when.
func readiness(p *corev1.Pod, c *hostplan.Container) {
	for _, ct := range p.Spec.Containers {
		if ct.Name == podspec.AppContainer && ct.ReadinessProbe != nil {
			c.Checked = true
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			c.Ready, c.ReadyChanged = cond.Status == corev1.ConditionTrue, cond.LastTransitionTime.Time
		}
	}
}

// again is the pod to create in the exited one's place: its spec, labels and annotations, with a
// fresh sources URL for the install.
func (r podRef) again(sourcesURL string) *corev1.Pod {
	old := r.p
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: old.Name, Namespace: old.Namespace, Labels: old.Labels, Annotations: old.Annotations,
		},
		Spec: *old.Spec.DeepCopy(),
	}
	p.Spec.NodeName = "" // the scheduler places it afresh
	for i := range p.Spec.InitContainers {
		for j := range p.Spec.InitContainers[i].Env {
			if p.Spec.InitContainers[i].Env[j].Name == sourcesURLEnv {
				p.Spec.InitContainers[i].Env[j].Value = sourcesURL
			}
		}
	}
	return p
}

// isStale tells a record that moved on since the beat read it: the step is dropped, and the next
// beat plans from the new state.
func isStale(err error) bool {
	return errors.Is(err, records.ErrStale) || errors.Is(err, records.ErrNotFound)
}
