package sandbox

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestPlanNodes: a wanted node missing is created, one whose labels or resources differ (however
// its quantities are written) is updated, one as wanted is left, and another node of the set is
// deleted only when pruning.
func TestPlanNodes(t *testing.T) {
	res := func(cpu string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}
	}
	node := func(region, flavor, cpu string, labels map[string]string) *corev1.Node {
		return FlavorNode{Region: region, Flavor: flavor, Labels: labels, Resources: res(cpu)}.node("s")
	}
	same, sameWritten := node("r", "same", "2", nil), node("r", "same", "2000m", nil)
	resized := node("r", "resized", "4", nil)
	relabelled := node("r", "relabelled", "2", map[string]string{"pool": "b"})
	missing := node("r", "missing", "2", nil)
	have := []corev1.Node{*sameWritten, *node("r", "resized", "2", nil), *node("r", "relabelled", "2", map[string]string{"pool": "a"}),
		*node("r", "stale", "2", nil)}
	want := []*corev1.Node{same, resized, relabelled, missing}
	opt := cmp.AllowUnexported(createNode{}, updateNode{}, deleteNode{})
	if diff := cmp.Diff([]nodeStep{updateNode{resized}, updateNode{relabelled}, createNode{missing}, deleteNode{"s-r-stale"}},
		planNodes(have, want, true), opt); diff != "" {
		t.Errorf("planNodes(prune) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]nodeStep{updateNode{resized}, updateNode{relabelled}, createNode{missing}},
		planNodes(have, want, false), opt); diff != "" {
		t.Errorf("planNodes(no prune) (-want +got):\n%s", diff)
	}
}

// TestFlavorNode: a flavor's node is labelled as the sandbox's own nodes are, in its region, with
// the flavor's labels over them and the set's mark; its capacity and allocatable are the flavor's.
func TestFlavorNode(t *testing.T) {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourcePods: resource.MustParse("110")}
	n := FlavorNode{Region: "us-west-2", Flavor: "on-demand", Labels: map[string]string{CapacityTypeLabel: "on-demand", "pool": "a"}, Resources: res}.node("tidegate")
	base := fakeNode("x", "spot")
	if n.Name != "tidegate-us-west-2-on-demand" || n.Annotations["kwok.x-k8s.io/node"] != "fake" {
		t.Errorf("node %s annotations %v; want tidegate-us-west-2-on-demand, kwok's", n.Name, n.Annotations)
	}
	want := map[string]string{}
	for k, v := range base.Labels {
		want[k] = v
	}
	want["kubernetes.io/hostname"] = n.Name
	want["topology.kubernetes.io/region"], want["topology.kubernetes.io/zone"] = "us-west-2", "us-west-2a"
	want[CapacityTypeLabel], want["pool"], want[FlavorNodeLabel] = "on-demand", "a", "tidegate"
	if diff := cmp.Diff(want, n.Labels); diff != "" {
		t.Errorf("node labels (-want +got):\n%s", diff)
	}
	if !sameResources(n.Status.Capacity, res) || !sameResources(n.Status.Allocatable, res) {
		t.Errorf("node capacity %v, allocatable %v; want both %v", n.Status.Capacity, n.Status.Allocatable, res)
	}
}

// TestSyncFlavorNodes gives a cluster of its own (deleting nodes from the shared one could take
// other tests' pods with them) the nodes of two flavors, checks their labels and resources, then
// syncs a second time with one flavor changed and the other gone: the changed node is updated,
// the other deleted, and the sandbox's own nodes are as they were.
func TestSyncFlavorNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := startTestKube(t, ctx)
	cs, err := KubeClient(s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]*corev1.Node{}
	for _, name := range []string{FakeNodeName, OnDemandNodeName} {
		if before[name], err = cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	spot, err := FlavorResources(map[string]string{"cpu": "16", "memory": "64Gi"})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := FlavorResources(map[string]string{"cpu": "16", "memory": "64Gi", "pods": "20", "nvidia.com/gpu": "8"})
	if err != nil {
		t.Fatal(err)
	}
	first := []FlavorNode{
		{Region: "us-east-1", Flavor: "spot", Labels: map[string]string{CapacityTypeLabel: "spot", "topology.kubernetes.io/region": "us-east-1"}, Resources: spot},
		{Region: "us-west-2", Flavor: "gpu", Labels: map[string]string{CapacityTypeLabel: "on-demand", "pool": "gpu"}, Resources: gpu},
	}
	if err := SyncFlavorNodes(ctx, cs, "dev", first, true); err != nil {
		t.Fatalf("SyncFlavorNodes(first) = %v", err)
	}
	checkFlavorNodes(t, ctx, cs, "dev", first)

	bigger, err := FlavorResources(map[string]string{"cpu": "32", "memory": "64Gi"})
	if err != nil {
		t.Fatal(err)
	}
	second := []FlavorNode{{Region: "us-east-1", Flavor: "spot", Labels: map[string]string{CapacityTypeLabel: "spot", "pool": "big"}, Resources: bigger}}
	if err := SyncFlavorNodes(ctx, cs, "dev", second, true); err != nil {
		t.Fatalf("SyncFlavorNodes(second) = %v", err)
	}
	checkFlavorNodes(t, ctx, cs, "dev", second)
	for name, was := range before {
		now, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil || now.UID != was.UID || !cmp.Equal(ownLabels(now), ownLabels(was)) || !sameResources(now.Status.Allocatable, was.Status.Allocatable) {
			t.Errorf("the sandbox's node %s after syncing flavor nodes: %v, uid %s, labels %v, allocatable %v; want it as it was: uid %s, labels %v, allocatable %v",
				name, err, now.UID, now.Labels, now.Status.Allocatable, was.UID, was.Labels, was.Status.Allocatable)
		}
	}
}

// ownLabels are n's labels but the deprecated beta.kubernetes.io/os and /arch, which the
// controller manager's node lifecycle controller copies from the GA labels a moment after a node
// is created: on a loaded machine a node read just after the sandbox starts may not have them yet.
func ownLabels(n *corev1.Node) map[string]string {
	out := maps.Clone(n.Labels)
	delete(out, "beta.kubernetes.io/os")
	delete(out, "beta.kubernetes.io/arch")
	return out
}

// checkFlavorNodes checks that set's nodes in the cluster are want's, with their labels, capacity
// and allocatable, and schedulable.
func checkFlavorNodes(t *testing.T, ctx context.Context, cs kubernetes.Interface, set string, want []FlavorNode) {
	t.Helper()
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: FlavorNodeLabel + "=" + set})
	if err != nil {
		t.Fatal(err)
	}
	var names, wantNames []string
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	for _, f := range want {
		wantNames = append(wantNames, f.Name(set))
		n, err := cs.CoreV1().Nodes().Get(ctx, f.Name(set), metav1.GetOptions{})
		if err != nil {
			t.Errorf("node %s: %v", f.Name(set), err)
			continue
		}
		for k, v := range f.Labels {
			if n.Labels[k] != v {
				t.Errorf("node %s label %s = %q, want %q", n.Name, k, n.Labels[k], v)
			}
		}
		if !sameResources(n.Status.Allocatable, f.Resources) || !sameResources(n.Status.Capacity, f.Resources) {
			t.Errorf("node %s allocatable %v, capacity %v; want both %v", n.Name, n.Status.Allocatable, n.Status.Capacity, f.Resources)
		}
		if !schedulable(n) {
			t.Errorf("node %s not schedulable: conditions %v, taints %v", n.Name, n.Status.Conditions, n.Spec.Taints)
		}
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("nodes of %s (-want +got):\n%s", set, diff)
	}
}
