package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// TestLongRunningJobRunsOnceAvailable: a long-running job (a Deployment and a StatefulSet) is
// pending until the sandbox's controllers report both available (kwok runs their pods), then
// running, once, with one job.started; a quiet beat after that reads no record, and the job
// never succeeds however long its objects serve.
func TestLongRunningJobRunsOnceAvailable(t *testing.T) {
	ctx := context.Background()
	r := newFollowRig(t)
	id := storeJob(t, r.store, "job-"+r.ns+"-web", func(j *jobs.Job) { j.Kind = jobs.KindLongRunning }, jobs.StatusDispatching, jobs.StatusPending)
	spy := &readSpy{JobStore: r.store, prefix: id}
	h := r.instance(spy, &ringCounter{}, time.Now)
	beat := func(name string) {
		t.Helper()
		spy.reset()
		if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: name}); err != nil {
			t.Fatalf("beat %s: %v", name, err)
		}
	}

	// Objects no node can take first: listed, never available.
	createServing(t, r.kc, r.ns, id, map[string]string{"tidegate.io/no-such-node": "true"})
	beat("unavailable")
	if got := status(t, r.store, id); got != jobs.StatusPending {
		t.Fatalf("a long-running job whose pods cannot run is %s, want pending", got)
	}
	// Then pods the fake node takes.
	schedulable(t, r.kc, r.ns)
	deadline := time.Now().Add(90 * time.Second)
	for !available(t, r.kc, r.ns) {
		if time.Now().After(deadline) {
			t.Fatal("the Deployment and StatefulSet were not available within 90 s: is kube-controller-manager running in the sandbox?")
		}
		time.Sleep(time.Second)
	}
	beat("available")
	if got := status(t, r.store, id); got != jobs.StatusRunning {
		t.Fatalf("a long-running job whose Deployment and StatefulSet are available is %s, want running", got)
	}
	beat("quiet")
	if read := spy.ours(); len(read) != 0 {
		t.Errorf("a quiet beat over a running long-running job read %v, want nothing", read)
	}
	beat("again")
	if got := status(t, r.store, id); got != jobs.StatusRunning {
		t.Errorf("a serving long-running job is %s after more beats, want running", got)
	}
	if n := countEvents(t, r.db, r.tables, outbox.JobStarted, id); n != 1 {
		t.Errorf("%s has %d job.started events, want 1", id, n)
	}
}

// createServing creates job id's Deployment (two replicas) and StatefulSet (one) in ns, their
// pods selecting nodes by selector.
func createServing(t *testing.T, kc kubernetes.Interface, ns, id string, selector map[string]string) {
	t.Helper()
	ctx := context.Background()
	two := int32(2)
	labels := map[string]string{jobs.IDKey: id}
	template := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{jobs.IDKey: id, "app": app}},
			Spec: corev1.PodSpec{NodeSelector: selector,
				Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
		}
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: template("web")}}
	if _, err := kc.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns, Labels: labels},
		Spec: appsv1.StatefulSetSpec{ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, Template: template("db")}}
	if _, err := kc.AppsV1().StatefulSets(ns).Create(ctx, ss, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// schedulable drops the node selector of ns's Deployment and StatefulSet, so the fake node takes
// their pods: the Deployment rolls out a new ReplicaSet, and the StatefulSet's pod, which never
// became ready, is deleted for the controller to make again from the new template.
func schedulable(t *testing.T, kc kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	// The controllers write status meanwhile: read again on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep, err := kc.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		dep.Spec.Template.Spec.NodeSelector = nil
		_, err = kc.AppsV1().Deployments(ns).Update(ctx, dep, metav1.UpdateOptions{})
		return err
	})
	if err == nil {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ss, err := kc.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
			if err != nil {
				return err
			}
			ss.Spec.Template.Spec.NodeSelector = nil
			_, err = kc.AppsV1().StatefulSets(ns).Update(ctx, ss, metav1.UpdateOptions{})
			return err
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = kc.CoreV1().Pods(ns).Delete(ctx, "db-0", metav1.DeleteOptions{})
}

// available reports whether ns's Deployment has its Available condition and its StatefulSet its
// one replica available, each for its current spec.
func available(t *testing.T, kc kubernetes.Interface, ns string) bool {
	t.Helper()
	ctx := context.Background()
	dep, err := kc.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := kc.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	depOK := dep.Status.ObservedGeneration >= dep.Generation && dep.Status.AvailableReplicas == 2 && dep.Status.UpdatedReplicas == 2
	for _, c := range dep.Status.Conditions {
		depOK = depOK && (c.Type != appsv1.DeploymentAvailable || c.Status == corev1.ConditionTrue)
	}
	return depOK && ss.Status.ObservedGeneration >= ss.Generation && ss.Status.AvailableReplicas == 1
}
