package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

// deleteRounds is how many times each way of deleting is tried: before the pod-delete stage
// selected only graceful deletions, about one round in a few lost the pod created again.
const deleteRounds = 12

// survives is how long a pod created again under a deleted one's name must last: kwok's stage
// jobs for the deleted pod play within about two seconds of its deletion.
const survives = 3 * time.Second

// TestKwokDeletesOnlyThePodItWasMeantFor deletes a Running pod, at once (grace 0, as the hosting
// beat replaces a host) or gracefully (as it stops one, kwok finishing the deletion), creates a
// pod of the same name as soon as the name is free, and checks that the new pod is still there
// a while later: kwok's pod-delete stage deletes by name, with no UID precondition, so it must
// never act on a deletion the apiserver finishes itself, which the new pod could then inherit.
func TestKwokDeletesOnlyThePodItWasMeantFor(t *testing.T) {
	ns, st := testenv.Namespace(t)
	cs, err := sandbox.KubeClient(st.Kubeconfig)
	if err != nil {
		t.Fatalf("KubeClient(%s): %v", st.Kubeconfig, err)
	}
	for _, tc := range []struct {
		name  string
		grace int64
	}{{"at-once", 0}, {"graceful", 30}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			name := "again-" + tc.name
			uid := createRunning(ctx, t, cs, ns, name)
			for round := range deleteRounds {
				if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &tc.grace}); err != nil {
					t.Fatalf("round %d: deleting pod %s with grace %d: %v", round, name, tc.grace, err)
				}
				waitNameFree(ctx, t, cs, ns, name, uid)
				uid = createRunning(ctx, t, cs, ns, name)
				time.Sleep(survives)
				p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
					t.Fatalf("round %d: pod %s created again after a deletion with grace %d was gone %s later: a deletion meant for the earlier pod removed it", round, name, tc.grace, survives)
				case err != nil:
					t.Fatalf("round %d: reading pod %s: %v", round, name, err)
				case p.UID != uid || p.DeletionTimestamp != nil:
					t.Fatalf("round %d: pod %s is UID %s, deleting %v; want UID %s, not being deleted", round, name, p.UID, p.DeletionTimestamp != nil, uid)
				}
			}
		})
	}
}

// createRunning creates a bare pod and waits until kwok reports it Running; it answers its UID.
func createRunning(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) types.UID {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			// Never pulled: kwok runs no containers.
			Containers: []corev1.Container{{Name: "main", Image: "busybox:1.37", Command: []string{"sleep", "infinity"}}},
		},
	}
	created, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	var last *corev1.Pod
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, pollEvery, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || (err == nil && p.UID != created.UID):
			return false, fmt.Errorf("pod %s (UID %s) was deleted before it ran: a deletion meant for the earlier pod of the name removed it; last seen %s", name, created.UID, brief(last))
		case err != nil:
			return false, nil // unreadable for now: the deadline decides
		}
		last = p
		return p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("pod %s (UID %s) was not Running within a minute: %v; last seen %s", name, created.UID, err, brief(last))
	}
	return created.UID
}

// waitNameFree waits until no pod of UID uid holds name.
func waitNameFree(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, uid types.UID) {
	t.Helper()
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || (err == nil && p.UID != uid), nil
	})
	if err != nil {
		t.Fatalf("pod %s (UID %s) was not deleted in time: %v", name, uid, err)
	}
}

// brief is what a failure says of p: its incarnation, node, phase and deletion.
func brief(p *corev1.Pod) string {
	if p == nil {
		return "never"
	}
	return fmt.Sprintf("UID %s on node %q, phase %s, deletion %v (grace %v), conditions %v", p.UID, p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp, ptr.Deref(p.DeletionGracePeriodSeconds, -1), p.Status.Conditions)
}
