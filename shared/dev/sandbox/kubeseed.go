package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidegate/tidegate/shared/capacitytype"
)

// FakeNodeName is the sandbox cluster's spot node, where pods run unless they ask for on-demand
// capacity; kwok plays its kubelet.
const FakeNodeName = "kwok-node-0"

// OnDemandNodeName is the sandbox cluster's on-demand node, where a job sent to on-demand capacity
// (capacitytype.OnDemand, past its spot deadline) runs; kwok plays its kubelet too.
const OnDemandNodeName = "kwok-node-on-demand"

// CapacityTypeLabel is the label telling the sandbox's spot node from its on-demand one: Karpenter's,
// with its values. The dev stack's TIDEGATE_CAPACITY_TYPE_LABEL names it.
const CapacityTypeLabel = capacitytype.Karpenter

// GVisorRuntimeClass is the RuntimeClass Tidegate's pods name. The sandbox creates it because the
// RuntimeClass admission plugin rejects a pod naming a missing one; nothing runs runsc here.
const GVisorRuntimeClass = "gvisor"

// FakePodLog is the one line `kubectl logs` shows for every sandbox pod: kwok runs no containers, so
// it serves this file instead.
const FakePodLog = "tidegate sandbox: kwok faked this pod; no container ran"

const (
	// kwok marks a node Ready in about 0.7 s and the node lifecycle controller lifts its not-ready
	// taint within a second after; 30 s allows for a loaded CI machine.
	nodeReadyTimeout = 30 * time.Second
	// The service-account controller makes a namespace's default account in well under a second.
	serviceAccountTimeout = 30 * time.Second
	// How often the waits above look again.
	kubePollInterval = 100 * time.Millisecond
	// client-go's default of 5 requests a second throttles a test creating dozens of objects; the
	// sandbox apiserver has no other tenants to protect.
	sandboxQPS, sandboxBurst = 100, 200
)

// KubeClient returns a clientset for the cluster kubeconfig names, e.g. a sandbox's Kubeconfig.
func KubeClient(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = sandboxQPS, sandboxBurst
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making a client for %s: %w", cfg.Host, err)
	}
	return cs, nil
}

// EnsureNamespace creates namespace name if it is missing and waits until its default
// ServiceAccount exists: until then the ServiceAccount admission plugin rejects every pod in it.
func EnsureNamespace(ctx context.Context, kubeconfig, name string) error {
	cs, err := KubeClient(kubeconfig)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, kubePollInterval, serviceAccountTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the default ServiceAccount in namespace %s (is kube-controller-manager running?): %w", name, err)
	}
	return nil
}

// seedCluster gives a fresh sandbox cluster what Tidegate expects of an EKS cluster: Ready GPU
// nodes, one spot and one on-demand, and the gvisor RuntimeClass.
func seedCluster(ctx context.Context, kubeconfig string) error {
	cs, err := KubeClient(kubeconfig)
	if err != nil {
		return err
	}
	// A sandbox started again over its kept --dir finds its nodes from last time.
	onDemand, _ := capacitytype.OnDemandValue(CapacityTypeLabel)
	for _, n := range []*corev1.Node{fakeNode(FakeNodeName, "spot"), fakeNode(OnDemandNodeName, onDemand)} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: GVisorRuntimeClass}, Handler: "runsc"}
	if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating RuntimeClass %s: %w", GVisorRuntimeClass, err)
	}
	for _, name := range []string{FakeNodeName, OnDemandNodeName} {
		if err := waitSchedulable(ctx, cs, name); err != nil {
			return err
		}
	}
	return nil
}

// nodePods is how many pods a sandbox node takes.
const nodePods = 1000

// AddNodes adds room for pods more pods to the sandbox cluster: as many spot nodes as that takes,
// named prefix-0, prefix-1…, each like FakeNodeName and schedulable when it returns. It answers
// a function that deletes them; the pods still bound to them go with them (the pod garbage
// collector deletes the pods of a node that is gone).
func AddNodes(ctx context.Context, cs kubernetes.Interface, prefix string, pods int) (remove func(), err error) {
	var names []string
	remove = func() {
		for _, name := range names {
			_ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	}
	for i := range (pods + nodePods - 1) / nodePods {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := cs.CoreV1().Nodes().Create(ctx, fakeNode(name, "spot"), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			remove()
			return nil, fmt.Errorf("creating node %s: %w", name, err)
		}
		names = append(names, name)
	}
	for _, name := range names {
		if err := waitSchedulable(ctx, cs, name); err != nil {
			remove()
			return nil, err
		}
	}
	return remove, nil
}

// waitSchedulable waits until node name is Ready and untainted.
func waitSchedulable(ctx context.Context, cs kubernetes.Interface, name string) error {
	var last *corev1.Node
	err := wait.PollUntilContextTimeout(ctx, kubePollInterval, nodeReadyTimeout, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = n
		return schedulable(n), nil
	})
	if err != nil {
		var conds []corev1.NodeCondition
		var taints []corev1.Taint
		if last != nil {
			conds, taints = last.Status.Conditions, last.Spec.Taints
		}
		return fmt.Errorf("node %s not Ready and untainted (conditions %v, taints %v; see kwok.log and kube-controller-manager.log): %w",
			name, conds, taints, err)
	}
	return nil
}

// schedulable reports whether n is Ready and free of the not-ready and unreachable taints, which
// the node lifecycle controller lifts only after it sees Ready.
func schedulable(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// fakeNode is node name, of capacityType (CapacityTypeLabel's value), labelled like a node
// Karpenter launched on EKS, so code reading instance type, topology and capacity type sees what
// production shows.
func fakeNode(name, capacityType string) *corev1.Node {
	// Far more than a real g5.xlarge (4 vCPU, 16 GiB, 1 GPU) so no test ever waits on capacity; a
	// kwok pod costs only an etcd object.
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   *resource.NewQuantity(nodePods, resource.DecimalSI),
		"nvidia.com/gpu":      resource.MustParse("8"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			// kwok's marker for a node it fakes; --manage-all-nodes takes it anyway.
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname":           name,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               "amd64",
				"node.kubernetes.io/instance-type": "g5.xlarge",
				"topology.kubernetes.io/region":    "us-east-1",
				"topology.kubernetes.io/zone":      "us-east-1a",
				CapacityTypeLabel:                  capacityType,
				"karpenter.sh/nodepool":            "default",
				"type":                             "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// writeKwokLogs writes the log every sandbox pod shows and a kwok ClusterLogs config that serves it,
// and returns the config's path. The log is in CRI format, which is what kwok reads.
func writeKwokLogs(dir string) (string, error) {
	logFile := filepath.Join(dir, "pod.log")
	line := time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + FakePodLog + "\n"
	if err := os.WriteFile(logFile, []byte(line), 0o644); err != nil {
		return "", fmt.Errorf("writing the sandbox pod log: %w", err)
	}
	// No selector and no container list: the one log answers for every container of every pod.
	config := fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: tidegate-sandbox
spec:
  logs:
  - logsFile: %q
`, logFile)
	path := filepath.Join(dir, "kwok-logs.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return "", fmt.Errorf("writing kwok's logs config: %w", err)
	}
	return path, nil
}
