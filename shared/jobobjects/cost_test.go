package jobobjects

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/costing"
)

// TestCostInputs: a pod runs from its start to its last container's end, or the job's end for a
// container still running; a pod never scheduled or never started has no run; nodes give their
// type, capacity type (Karpenter's or EKS's label) and zone.
func TestCostInputs(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	end := t0.Add(time.Hour)
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(t0.Add(d)); return &m }
	done := func(name string, d time.Duration) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: *at(d)}}}
	}
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "finished"}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{
			StartTime: at(0), ContainerStatuses: []corev1.ContainerStatus{done("a", 10*time.Minute), done("b", 20*time.Minute)}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "running"}, Spec: corev1.PodSpec{NodeName: "n2"}, Status: corev1.PodStatus{
			StartTime: at(5 * time.Minute), ContainerStatuses: []corev1.ContainerStatus{done("a", 10*time.Minute), {Name: "b"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unscheduled"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "not-started"}, Spec: corev1.PodSpec{NodeName: "n1"}},
	}
	nodes := map[string]corev1.Node{
		"n1": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"node.kubernetes.io/instance-type": "g5.xlarge",
			"karpenter.sh/capacity-type": "spot", "topology.kubernetes.io/zone": "us-east-1a"}}},
		"n2": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"node.kubernetes.io/instance-type": "m5.large",
			"eks.amazonaws.com/capacityType": "ON_DEMAND", "topology.kubernetes.io/zone": "us-east-1b"}}},
	}
	runs, cn := CostInputs(pods, nodes, end)
	wantRuns := []costing.Run{
		{Pod: "finished", Node: "n1", Start: t0, End: t0.Add(20 * time.Minute)},
		{Pod: "running", Node: "n2", Start: t0.Add(5 * time.Minute), End: end},
	}
	if diff := cmp.Diff(wantRuns, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	wantNodes := map[string]costing.Node{
		"n1": {InstanceType: "g5.xlarge", CapacityType: "spot", Zone: "us-east-1a"},
		"n2": {InstanceType: "m5.large", CapacityType: "on-demand", Zone: "us-east-1b"},
	}
	if diff := cmp.Diff(wantNodes, cn); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
}
