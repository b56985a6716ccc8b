package reconcile

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
)

func TestInterruption(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	const label = "karpenter.sh/capacity-type"
	node := func(name, capacity string, mod func(*corev1.Node)) corev1.Node {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if capacity != "" {
			n.Labels[label] = capacity
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if mod != nil {
			mod(&n)
		}
		return n
	}
	taint := func(key string) func(*corev1.Node) {
		return func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: key, Effect: corev1.TaintEffectNoSchedule}} }
	}
	notReady := func(since time.Duration) func(*corev1.Node) {
		return func(n *corev1.Node) {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, LastTransitionTime: metav1.NewTime(now.Add(-since))}}
		}
	}
	pod := func(nodeName string, attempt string, mod func(*corev1.Pod)) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{}}, Spec: corev1.PodSpec{NodeName: nodeName}}
		p.Status.Phase = corev1.PodRunning
		if attempt != "" {
			p.Annotations[jobobjects.AttemptKey] = attempt
		}
		if mod != nil {
			mod(&p)
		}
		return p
	}
	disrupted := func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet"})
	}
	for _, tc := range []struct {
		name    string
		pods    []corev1.Pod
		nodes   []corev1.Node // nil: not listed
		wasSpot map[string]bool
		attempt int
		want    jobs.CauseKind // "" for none
	}{
		{"healthy", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "spot", nil)}, nil, 1, ""},
		{"DisruptionTarget on spot", []corev1.Pod{pod("n1", "", disrupted)}, []corev1.Node{node("n1", "spot", nil)}, nil, 1, jobs.CauseSpotInterrupted},
		{"DisruptionTarget, nodes not read", []corev1.Pod{pod("n1", "", disrupted)}, nil, nil, 1, jobs.CauseSpotInterrupted},
		{"DisruptionTarget on demand", []corev1.Pod{pod("n1", "", disrupted)}, []corev1.Node{node("n1", "on-demand", nil)}, nil, 1, jobs.CauseNodeFailure},
		{"DisruptionTarget False", []corev1.Pod{pod("n1", "", func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse}}
		})}, []corev1.Node{node("n1", "spot", nil)}, nil, 1, ""},
		{"earlier attempt's pod", []corev1.Pod{pod("n1", "", disrupted)}, []corev1.Node{node("n1", "spot", nil)}, nil, 2, ""},
		{"this attempt's pod", []corev1.Pod{pod("n1", "2", disrupted)}, []corev1.Node{node("n1", "spot", nil)}, nil, 2, jobs.CauseSpotInterrupted},
		{"any attempt", []corev1.Pod{pod("n1", "3", disrupted)}, []corev1.Node{node("n1", "spot", nil)}, nil, anyAttempt, jobs.CauseSpotInterrupted},
		{"succeeded pod lost nothing", []corev1.Pod{pod("n1", "", func(p *corev1.Pod) { disrupted(p); p.Status.Phase = corev1.PodSucceeded })}, []corev1.Node{node("n1", "spot", nil)}, nil, 1, ""},
		{"NTH spot notice", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "", taint("aws-node-termination-handler/spot-itn"))}, nil, 1, jobs.CauseSpotInterrupted},
		{"karpenter disrupted spot", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "spot", taint("karpenter.sh/disrupted"))}, nil, 1, jobs.CauseSpotInterrupted},
		{"karpenter disruption on demand", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "on-demand", taint("karpenter.sh/disruption"))}, nil, 1, jobs.CauseNodeFailure},
		{"out of service", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "on-demand", taint("node.kubernetes.io/out-of-service"))}, nil, 1, jobs.CauseNodeFailure},
		{"cordoned only", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "spot", taint("node.kubernetes.io/unschedulable"))}, nil, 1, ""},
		{"spot node gone, seen before", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n2", "spot", nil)}, map[string]bool{"n1": true}, 1, jobs.CauseSpotInterrupted},
		{"spot node gone, asked for spot", []corev1.Pod{pod("n1", "", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{label: "spot"} })}, []corev1.Node{}, nil, 1, jobs.CauseSpotInterrupted},
		{"node gone, capacity unknown", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{}, nil, 1, jobs.CauseNodeFailure},
		{"node gone, nodes not read", []corev1.Pod{pod("n1", "", nil)}, nil, nil, 1, ""},
		{"unscheduled pod", []corev1.Pod{pod("", "", nil)}, []corev1.Node{}, nil, 1, ""},
		{"not ready a while", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "on-demand", notReady(3*time.Minute))}, nil, 1, jobs.CauseNodeFailure},
		{"spot not ready a while", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "spot", notReady(3*time.Minute))}, nil, 1, jobs.CauseSpotInterrupted},
		{"not ready a moment", []corev1.Pod{pod("n1", "", nil)}, []corev1.Node{node("n1", "on-demand", notReady(30*time.Second))}, nil, 1, ""},
	} {
		c, ok := Interruption(tc.pods, newNodeView(tc.nodes, label, tc.wasSpot, now), tc.attempt)
		if got := map[bool]jobs.CauseKind{true: c.Kind}[ok]; got != tc.want {
			t.Errorf("%s: Interruption = %q (%v, %q), want %q", tc.name, got, ok, c.Detail, tc.want)
		}
	}
}

func TestEndCause(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v := newNodeView([]corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}, "", nil, now)
	failed := func(code int32, attempt string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{}}, Spec: corev1.PodSpec{NodeName: "n1"}}
		if attempt != "" {
			p.Annotations[jobobjects.AttemptKey] = attempt
		}
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}}}
		return p
	}
	for _, tc := range []struct {
		name    string
		pods    []corev1.Pod
		attempt int
		want    string
	}{
		{"exit code", []corev1.Pod{failed(3, "")}, 1, "exit:3"},
		{"oom", []corev1.Pod{failed(137, "")}, 1, "exit:137"},
		{"no exit code", []corev1.Pod{failed(0, "")}, 1, "pod_failure"},
		{"no pods", nil, 1, "pod_failure"},
		{"earlier attempt's exit", []corev1.Pod{failed(3, "")}, 2, "pod_failure"},
		{"this attempt's exit", []corev1.Pod{failed(4, "2")}, 2, "exit:4"},
	} {
		if got := EndCause(tc.pods, v, tc.attempt, "Job j: BackoffLimitExceeded").Code(); got != tc.want {
			t.Errorf("%s: EndCause = %s, want %s", tc.name, got, tc.want)
		}
	}
}
