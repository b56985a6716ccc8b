package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// TestGangNotScheduledInTimeIsQueuedAgain: on the stand-ins' scheduler and kwok, a gang of 8 pods
// of 1 CPU each, on a node with room for 6, is queued again with pods_not_ready once its 3 s
// ready timeout passes, its Job deleted, and the timeout counted apart from its retry policy; a
// gang of 6 on a node of its own fits, is recorded ready, and is not timed out as the beats go on.
func TestGangNotScheduledInTimeIsQueuedAgain(t *testing.T) {
	r := newLeftRig(t)
	ctx := context.Background()
	// Each gang's own node: 6 CPUs, a label only its pods select and a taint only they bear, so
	// no other test's pod takes its room and its pods go nowhere else.
	r.gangNode(t, "big")
	r.gangNode(t, "fits")
	big := r.storeGang(t, "job-"+r.ns+"-big", "big", 8)
	fits := r.storeGang(t, "job-"+r.ns+"-fits", "fits", 6)

	h := r.instance()
	deadline := time.Now().Add(45 * time.Second) // 3 s of timeout; the rest a loaded machine's slack
	var bigJob, fitsJob jobs.Job
	for {
		r.beat(t, h, "gang")
		var err error
		if bigJob, err = r.store.Job(ctx, big.ID); err != nil {
			t.Fatal(err)
		}
		if fitsJob, err = r.store.Job(ctx, fits.ID); err != nil {
			t.Fatal(err)
		}
		if bigJob.Status == jobs.StatusQueued && fitsJob.PodsReady != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 45 s of beats: the gang of 8 is %s (%+v), the gang of 6 ready %+v; want queued, and ready",
				bigJob.Status, bigJob.StatusHistory, fitsJob.PodsReady)
		}
		time.Sleep(500 * time.Millisecond)
	}
	last := bigJob.StatusHistory[len(bigJob.StatusHistory)-1]
	if !strings.HasPrefix(last.Reason, "retrying: pods_not_ready: ") || bigJob.ReadyTimeouts != 1 || bigJob.Attempt != 2 || bigJob.NotBefore == nil {
		t.Errorf("the gang of 8 requeued with %q, ready_timeouts %d, attempt %d, not_before %v; want pods_not_ready, 1, 2, set",
			last.Reason, bigJob.ReadyTimeouts, bigJob.Attempt, bigJob.NotBefore)
	}
	if v := jobs.Decide(bigJob, jobs.Cause{Kind: jobs.CausePodFailure}, time.Now()); !v.Retry {
		t.Errorf("the gang of 8's retry policy after its ready timeout: %s; want its one retry still owed", v.Why)
	}
	went, err := gone(func() (bool, error) {
		_, err := r.kc.BatchV1().Jobs(r.ns).Get(ctx, "gang-big", metav1.GetOptions{})
		return !apierrors.IsNotFound(err), client(err)
	})
	if err != nil || !went {
		t.Errorf("the gang of 8's Job after its requeue: gone %v (%v); want deleted", went, err)
	}

	// Beats past the fitting gang's timeout do not time it out.
	until := time.Now().Add(4 * time.Second)
	for time.Now().Before(until) {
		r.beat(t, h, "gang-after")
		time.Sleep(500 * time.Millisecond)
	}
	if fitsJob, err = r.store.Job(ctx, fits.ID); err != nil {
		t.Fatal(err)
	}
	if fitsJob.Status == jobs.StatusQueued || fitsJob.ReadyTimeouts != 0 || fitsJob.PodsReady == nil || fitsJob.PodsReady.Attempt != 1 {
		t.Errorf("the gang of 6 is %s, ready_timeouts %d, pods_ready %+v; want dispatched, 0, attempt 1", fitsJob.Status, fitsJob.ReadyTimeouts, fitsJob.PodsReady)
	}
}

// client is err unless it is a NotFound, which answers the question asked.
func client(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// gangNode adds a kwok node of 6 CPUs that only the rig's gang named name schedules on, and
// deletes it when the test ends.
func (r leftRig) gangNode(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	node := r.ns + "-" + name
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("6"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        node,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": node, "type": "kwok", gangKey: node},
		},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: gangKey, Value: node, Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if _, err := r.kc.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", node, err)
	}
	t.Cleanup(func() { _ = r.kc.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	deadline := time.Now().Add(30 * time.Second) // the sandbox's own wait for a node (nodeReadyTimeout)
	for {
		got, err := r.kc.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err == nil {
			for _, c := range got.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s not Ready after 30 s (%v)", node, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gangKey is the label and taint of a gang's own node.
const gangKey = "tidegate.io/test-gang"

// storeGang stores, pending as dispatch leaves it with a ready timeout of 3 s and a retry policy
// of 2 attempts, a job of one batch Job of n pods at once of 1 CPU each, on the rig's node name,
// and creates the Job as dispatch would: the real Job controller makes its pods, the scheduler
// places what fits.
func (r leftRig) storeGang(t *testing.T, id, name string, n int32) jobs.Job {
	t.Helper()
	ctx := context.Background()
	node := r.ns + "-" + name
	no, uid := false, int64(1000)
	kj := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "gang-" + name},
		Spec: batchv1.JobSpec{
			Parallelism: &n, Completions: &n,
			// Running for longer than the test: kwok would otherwise end the pods that fit at
			// once, and the rest would take their room.
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{sandbox.CompleteDelayAnnotation: "10m"}}, Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector:  map[string]string{gangKey: node},
				Tolerations:   []corev1.Toleration{{Key: gangKey, Operator: corev1.TolerationOpEqual, Value: node, Effect: corev1.TaintEffectNoSchedule}},
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: aws.Bool(true), RunAsUser: &uid,
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{
					Name: "main", Image: "busybox:1.36",
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					},
					SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				}},
			}},
		},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(kj)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	j := jobs.New(id, "ml", r.ns, benchRegion, jobs.DefaultPriority, nil, []map[string]any{m}, now)
	j.ReadyTimeout = "3s"
	j.Demand = map[string]string{"cpu": resource.NewQuantity(int64(n), resource.DecimalSI).String(), "pods": resource.NewQuantity(int64(n), resource.DecimalSI).String()}
	j.Retry = &jobs.Retry{Attempts: 2, On: []string{jobs.RetryPodFailure}}
	for _, s := range []jobs.Status{jobs.StatusDispatching, jobs.StatusPending} {
		j.Status = s
		j.StatusHistory = append(j.StatusHistory, jobs.Transition{Status: s, At: now.UTC()})
	}
	if _, _, err := r.store.Create(ctx, j, jobs.Event(outbox.JobDispatched, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	obj := jobobjects.Owned(jobobjects.Stamped(m, j), leftStack)
	if _, err := r.dc.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}).Namespace(r.ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Job %s: %v", obj.GetName(), err)
	}
	return j
}
