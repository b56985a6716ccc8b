package sandbox

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// startTestKube starts only the Kubernetes part of a sandbox, so this test needs neither Java nor
// Node, and stops it when the test ends.
func startTestKube(t *testing.T, ctx context.Context) *Sandbox {
	t.Helper()
	s := &Sandbox{dir: t.TempDir()}
	t.Cleanup(s.Stop)
	start := time.Now()
	if err := startKube(ctx, s, 1, func(string) {}); err != nil {
		if errors.Is(err, errNotInstalled) {
			t.Skipf("skipping: %v", err)
		}
		t.Fatalf("startKube: %v", err)
	}
	t.Logf("Kubernetes sandbox up in %s at %s", time.Since(start).Round(time.Millisecond), s.KubeServer)
	return s
}

func TestKubeSandboxRunsRestrictedJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := startTestKube(t, ctx)
	if !strings.HasPrefix(s.KubeServer, "https://127.0.0.1:") {
		t.Errorf("KubeServer = %q, want https://127.0.0.1:<port>", s.KubeServer)
	}
	cs, err := KubeClient(s.Kubeconfig)
	if err != nil {
		t.Fatalf("KubeClient(%s): %v", s.Kubeconfig, err)
	}

	node, err := cs.CoreV1().Nodes().Get(ctx, FakeNodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node %s: %v", FakeNodeName, err)
	}
	if !schedulable(node) {
		t.Errorf("node %s not Ready and untainted: conditions %v, taints %v", FakeNodeName, node.Status.Conditions, node.Spec.Taints)
	}
	if got := node.Labels["node.kubernetes.io/instance-type"]; got != "g5.xlarge" {
		t.Errorf("node %s instance-type label = %q, want g5.xlarge", FakeNodeName, got)
	}
	rc, err := cs.NodeV1().RuntimeClasses().Get(ctx, GVisorRuntimeClass, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting RuntimeClass %s: %v", GVisorRuntimeClass, err)
	}
	if rc.Handler != "runsc" {
		t.Errorf("RuntimeClass %s handler = %q, want runsc", GVisorRuntimeClass, rc.Handler)
	}

	const ns = "tidegate-test"
	if err := EnsureNamespace(ctx, s.Kubeconfig, ns); err != nil {
		t.Fatalf("EnsureNamespace(%s): %v", ns, err)
	}
	// Enforce the restricted profile, as Tidegate's tenant namespaces do, so a pod spec that
	// drifts from it fails here rather than on EKS.
	nsObj, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting namespace %s: %v", ns, err)
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if _, err := cs.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("labelling namespace %s restricted: %v", ns, err)
	}

	start := time.Now()
	job, err := cs.BatchV1().Jobs(ns).Create(ctx, restrictedJob("hello"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Job hello: %v", err)
	}
	// kwok completes a Job pod in about 1.2 s.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		job, err = cs.BatchV1().Jobs(ns).Get(ctx, "hello", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range job.Status.Conditions {
			if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobFailed || c.Type == batchv1.JobComplete) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("Job hello did not finish: %v; status %+v", err, job.Status)
	}
	if job.Status.Succeeded != 1 {
		t.Fatalf("Job hello finished with status %+v, want 1 succeeded", job.Status)
	}
	t.Logf("Job complete %s after creation", time.Since(start).Round(time.Millisecond))

	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=hello"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("listing Job hello's pods: %d pods, err %v; want 1", len(pods.Items), err)
	}
	pod := pods.Items[0]
	if pod.Spec.NodeName != FakeNodeName {
		t.Errorf("pod %s ran on node %q, want %s", pod.Name, pod.Spec.NodeName, FakeNodeName)
	}
	rd, err := cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).Stream(ctx)
	if err != nil {
		t.Fatalf("getting logs of pod %s: %v", pod.Name, err)
	}
	defer rd.Close()
	logs, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("reading logs of pod %s: %v", pod.Name, err)
	}
	if !strings.Contains(string(logs), FakePodLog) {
		t.Errorf("logs of pod %s = %q, want %q", pod.Name, logs, FakePodLog)
	}
}

// restrictedJob is a one-pod Job whose pod passes the restricted Pod Security profile and names
// the gvisor RuntimeClass, as Tidegate's own Jobs do.
func restrictedJob(name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy:    corev1.RestartPolicyNever,
					RuntimeClassName: ptr.To(GVisorRuntimeClass),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](65532), // distroless "nonroot"
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    "main",
						Image:   "busybox:1.37", // never pulled: kwok runs no containers
						Command: []string{"echo", "hello"},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}
