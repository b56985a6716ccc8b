package hostrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/podspec"
)

// TestPodLeavesWhenItsProcessEnded: a played pod that is deleted stays, Terminating, while its
// process drains on SIGTERM (the line it writes then is in its logs, read through kwok as a
// kubelet's are), and leaves once the process ended; a process that ignores SIGTERM is killed
// once the pod's grace period has passed, and only then does its pod leave.
func TestPodLeavesWhenItsProcessEnded(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not on PATH: scripts/tools-hostrun.sh installs bubblewrap")
	}
	ns, kube := testenv.Namespace(t)
	stack := fmt.Sprintf("hostrun-%d", os.Getpid())
	cs, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Kubeconfig: kube.Kubeconfig, Namespace: ns, Stack: podspec.StackValue(stack), Every: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { r.Run(ctx); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran })

	drains := shPod(t, ns, stack, "web-r1-0a1b2c3d", 30, `trap 'echo draining on TERM; sleep 2; exit 0' TERM; echo up; while :; do sleep 0.1; done`)
	stubborn := shPod(t, ns, stack, "web-r2-0a1b2c3d", 3, `trap '' TERM; echo up; while :; do sleep 0.1; done`)
	for _, p := range []*corev1.Pod{drains, stubborn} {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s: %v", p.Name, err)
		}
		waitPodLog(t, cs, ns, p.Name, "up")
	}

	if err := cs.CoreV1().Pods(ns).Delete(ctx, drains.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if log := waitPodLog(t, cs, ns, drains.Name, "draining on TERM"); !strings.Contains(log, "up") {
		t.Errorf("pod %s's log = %q, want its first line too", drains.Name, log)
	}
	if gone := waitPodGone(t, cs, ns, drains.Name); gone > 20*time.Second {
		t.Errorf("pod %s left %s after its process was told to drain in 2 s", drains.Name, gone)
	}

	deleted := time.Now()
	if err := cs.CoreV1().Pods(ns).Delete(ctx, stubborn.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := waitPodGone(t, cs, ns, stubborn.Name)
	if took := time.Since(deleted); took < 3*time.Second || gone > 15*time.Second {
		t.Errorf("pod %s, whose process ignores TERM, left %s after its delete; want after its 3 s grace period, and soon after", stubborn.Name, took)
	}
}

// shPod is a host's pod of stack in ns whose install does nothing and whose app runs script under
// sh, with grace seconds to end, bound to the sandbox's node.
func shPod(t *testing.T, ns, stack, host string, grace int64, script string) *corev1.Pod {
	t.Helper()
	l := launch(nil)
	l.Namespace, l.Stack, l.Host = ns, stack, host
	p, err := podspec.Pod(l)
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.NodeName, p.Spec.RuntimeClassName = sandbox.FakeNodeName, nil
	p.Spec.TerminationGracePeriodSeconds = ptr.To(grace)
	p.Spec.InitContainers[0].Command, p.Spec.InitContainers[0].Args = []string{"true"}, nil
	app := &p.Spec.Containers[0]
	app.Command, app.Args, app.Env, app.EnvFrom = []string{"sh", "-c", script}, nil, nil, nil
	return p
}

// waitPodLog waits until pod's app container's log, read through the apiserver, holds want.
func waitPodLog(t *testing.T, cs kubernetes.Interface, ns, pod, want string) string {
	t.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		b, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: "app"}).DoRaw(context.Background())
		if last = string(b); err == nil && strings.Contains(last, want) {
			return last
		}
	}
	t.Fatalf("pod %s's log did not show %q within 30 s; last: %q", pod, want, last)
	return ""
}

// waitPodGone waits until pod is gone, checking meanwhile that it stays Terminating until then,
// and answers how long it took.
func waitPodGone(t *testing.T, cs kubernetes.Interface, ns, pod string) time.Duration {
	t.Helper()
	began := time.Now()
	for time.Since(began) < 60*time.Second {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return time.Since(began)
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.DeletionTimestamp == nil {
			t.Fatalf("pod %s is not being deleted", pod)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pod %s was still there 60 s after its delete", pod)
	return 0
}
