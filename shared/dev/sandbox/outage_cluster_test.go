package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

// refusedWithin is how soon a call to a stopped API server must fail: loopback refuses a
// connection at once, so anything near a request timeout means the client waited on something.
const refusedWithin = 2 * time.Second

// TestAPIServerStopsAndComesBack is the outage helper's promise: with a cluster of the test's own,
// a Job completes; with its API server stopped, a call fails at once with the connection refused;
// started again, on the same port with the same credentials, the controller-manager, the
// scheduler and kwok, which ran on meanwhile, have reconnected, so a new Job's pod is scheduled,
// runs and the Job completes.
func TestAPIServerStopsAndComesBack(t *testing.T) {
	c := testenv.OwnCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, err := sandbox.KubeClient(c.Kubeconfig)
	if err != nil {
		t.Fatalf("KubeClient(%s): %v", c.Kubeconfig, err)
	}
	const ns = "outage"
	if err := sandbox.EnsureNamespace(ctx, c.Kubeconfig, ns); err != nil {
		t.Fatalf("EnsureNamespace(%s): %v", ns, err)
	}
	completeJob(ctx, t, cs, ns, "before")
	before := c.PIDs()

	if err := c.StopAPIServer(); err != nil {
		t.Fatalf("StopAPIServer: %v", err)
	}
	if err := c.StopAPIServer(); !errors.Is(err, sandbox.ErrAPIServerStopped) {
		t.Errorf("StopAPIServer a second time = %v, want ErrAPIServerStopped", err)
	}
	began := time.Now()
	_, err = cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if took := time.Since(began); !errors.Is(err, syscall.ECONNREFUSED) || took > refusedWithin {
		t.Errorf("getting namespace %s with the API server stopped = %v after %s; want the connection refused within %s", ns, err, took, refusedWithin)
	}
	for _, name := range []string{"etcd", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if got := c.PIDs()[name]; got == 0 || got != before[name] {
			t.Errorf("with the API server stopped, %s's pid = %d, want it still running as %d", name, got, before[name])
		}
	}

	began = time.Now()
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatalf("StartAPIServer: %v", err)
	}
	t.Logf("API server ready again %s after StartAPIServer", time.Since(began).Round(time.Millisecond))
	if err := c.StartAPIServer(ctx); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("StartAPIServer while it runs = %v, want an error saying it is already running", err)
	}
	if got := c.PIDs()["kube-apiserver"]; got == 0 || got == before["kube-apiserver"] {
		t.Errorf("kube-apiserver's pid after StartAPIServer = %d, want a new process (it was %d)", got, before["kube-apiserver"])
	}
	completeJob(ctx, t, cs, ns, "after")
}

// completeJob creates a one-pod Job name in ns and waits until it completes, its pod placed on a node.
func completeJob(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	began := time.Now()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				// Never pulled: kwok runs no containers.
				Containers: []corev1.Container{{Name: "main", Image: "busybox:1.37", Command: []string{"true"}}},
			}},
		},
	}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Job %s: %v", name, err)
	}
	// kwok completes a Job's pod in about a second; the minute is for controllers still backing
	// off after an outage.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		job = j
		return j.Status.Succeeded == 1, nil
	})
	if err != nil {
		t.Fatalf("Job %s did not complete: %v; status %+v", name, err, job.Status)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + name})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Spec.NodeName == "" {
		t.Fatalf("Job %s's pods: %d (%v), want 1 placed on a node", name, len(pods.Items), err)
	}
	t.Logf("Job %s complete %s after creation, its pod on %s", name, time.Since(began).Round(time.Millisecond), pods.Items[0].Spec.NodeName)
}
