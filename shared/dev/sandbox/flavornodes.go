package sandbox

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// FlavorNodeLabel marks a node SyncFlavorNodes keeps; its value names the set the node belongs to,
// so that deleting one set's nodes touches no other set's, nor the sandbox's own FakeNodeName and
// OnDemandNodeName, which carry none.
const FlavorNodeLabel = "tidegate.io/dev-flavor-node"

// FlavorNode is a node standing for one flavor of one region; kwok plays its kubelet, as it plays
// the sandbox's own nodes'.
type FlavorNode struct {
	Region, Flavor string
	// Labels are the flavor's node labels. They are set over the labels every sandbox node has,
	// whose region and zone are Region's.
	Labels map[string]string
	// Resources are the node's capacity and allocatable alike.
	Resources corev1.ResourceList
}

// Name is n's node name in set.
func (n FlavorNode) Name(set string) string { return set + "-" + n.Region + "-" + n.Flavor }

// node is n as the Node SyncFlavorNodes keeps in set: labelled like FakeNodeName (spot unless the
// flavor's labels say otherwise), in n's region, with n's labels and resources.
func (n FlavorNode) node(set string) *corev1.Node {
	node := fakeNode(n.Name(set), "spot")
	node.Labels["topology.kubernetes.io/region"] = n.Region
	node.Labels["topology.kubernetes.io/zone"] = n.Region + "a"
	maps.Copy(node.Labels, n.Labels)
	node.Labels[FlavorNodeLabel] = set
	node.Status = corev1.NodeStatus{Capacity: n.Resources.DeepCopy(), Allocatable: n.Resources.DeepCopy()}
	return node
}

// A nodeStep is one change planNodes decides on.
type nodeStep interface{ nodeStep() }

// createNode creates a node of the set that is missing.
type createNode struct{ node *corev1.Node }

// updateNode sets a node's labels and resources to node's, where they differ.
type updateNode struct{ node *corev1.Node }

// deleteNode deletes a node of the set that is no longer wanted.
type deleteNode struct{ name string }

func (createNode) nodeStep() {}
func (updateNode) nodeStep() {}
func (deleteNode) nodeStep() {}

// planNodes is what brings have, the nodes of a set the cluster holds, to want: each wanted node
// missing is created, each whose labels or resources differ is updated and, when prune, each other
// node of the set is deleted. It touches nothing.
func planNodes(have []corev1.Node, want []*corev1.Node, prune bool) []nodeStep {
	found := map[string]corev1.Node{}
	for _, n := range have {
		found[n.Name] = n
	}
	var steps []nodeStep
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Name] = true
		h, ok := found[w.Name]
		switch {
		case !ok:
			steps = append(steps, createNode{w})
		case !maps.Equal(h.Labels, w.Labels) || !sameResources(h.Status.Capacity, w.Status.Capacity) ||
			!sameResources(h.Status.Allocatable, w.Status.Allocatable):
			steps = append(steps, updateNode{w})
		}
	}
	if prune {
		for _, name := range slices.Sorted(maps.Keys(found)) {
			if !wanted[name] {
				steps = append(steps, deleteNode{name})
			}
		}
	}
	return steps
}

// sameResources says whether a and b list the same resources in equal quantities, however each
// writes them ("1Gi" and "1024Mi" are the same).
func sameResources(a, b corev1.ResourceList) bool {
	return len(a) == len(b) && !slices.ContainsFunc(slices.Collect(maps.Keys(a)), func(name corev1.ResourceName) bool {
		q, ok := b[name]
		return !ok || q.Cmp(a[name]) != 0
	})
}

// SyncFlavorNodes makes the cluster's nodes of set (those labelled FlavorNodeLabel=set) be nodes:
// each missing is created, each whose labels or resources differ is updated and, when prune, each
// node of the set that nodes do not name is deleted, with the pods bound to it. It waits until
// every one of nodes is schedulable. Nodes without the label are never touched.
func SyncFlavorNodes(ctx context.Context, cs kubernetes.Interface, set string, nodes []FlavorNode, prune bool) error {
	have, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: FlavorNodeLabel + "=" + set})
	if err != nil {
		return fmt.Errorf("listing the nodes of %s: %w", set, err)
	}
	want := make([]*corev1.Node, len(nodes))
	for i, n := range nodes {
		want[i] = n.node(set)
	}
	for _, step := range planNodes(have.Items, want, prune) {
		if err := applyNodeStep(ctx, cs, step); err != nil {
			return err
		}
	}
	for _, w := range want {
		if err := waitSchedulable(ctx, cs, w.Name); err != nil {
			return err
		}
	}
	return nil
}

// applyNodeStep carries out one of planNodes' steps.
func applyNodeStep(ctx context.Context, cs kubernetes.Interface, step nodeStep) error {
	nodes := cs.CoreV1().Nodes()
	switch s := step.(type) {
	case createNode:
		// Another stack sharing the sandbox may have made the same node a moment ago.
		if _, err := nodes.Create(ctx, s.node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", s.node.Name, err)
		}
	case updateNode:
		// kwok renews the node's status meanwhile, so each write reads the node afresh.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := nodes.Get(ctx, s.node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Labels = s.node.Labels
			if n, err = nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				return err
			}
			n.Status.Capacity, n.Status.Allocatable = s.node.Status.Capacity, s.node.Status.Allocatable
			_, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("updating node %s: %w", s.node.Name, err)
		}
	case deleteNode:
		if err := nodes.Delete(ctx, s.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting node %s: %w", s.name, err)
		}
	default:
		return fmt.Errorf("node step %T unknown", step)
	}
	return nil
}

// FlavorResources are a flavor's resources as a node's: its quantities, and the pods, CPU and
// memory it does not count (and so does not bound) as much as the sandbox's own nodes have, since
// the scheduler reads a resource missing from a node as none of it.
func FlavorResources(quantities map[string]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name, v := range quantities {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not a quantity: %w", name, v, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	for name, q := range uncounted {
		if _, ok := out[name]; !ok {
			out[name] = q.DeepCopy()
		}
	}
	return out, nil
}

// uncounted are the quantities a flavor node has of the resources its flavor does not list.
var uncounted = corev1.ResourceList{
	// The kubelet's default maxPods.
	corev1.ResourcePods: resource.MustParse("110"),
	// As much as fakeNode gives the sandbox's own nodes.
	corev1.ResourceCPU:    resource.MustParse("64"),
	corev1.ResourceMemory: resource.MustParse("256Gi"),
}
