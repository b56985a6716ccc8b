package jobobjects_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
)

// TestEventsBudget: a namespace busy with another job's events costs a request of the job's
// events no more than the budget: each call reads at most that many, answers the job's among them
// and a cursor, and reading on with it finds every one of the job's events once, and ends.
func TestEventsBudget(t *testing.T) {
	kube := testenv.Kube(t)
	ns, _ := testenv.Namespace(t)
	kc, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer jobobjects.SetEventsBudget(4, 8)()
	// 3 events about the job's Job "mine", among 17 about another job's objects, in creation order.
	var want []string
	for i := range 20 {
		about := fmt.Sprintf("noise-%02d", i)
		if i%7 == 3 {
			about = "mine"
		}
		e := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("ev-%02d", i), Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: about, Namespace: ns},
			Reason:         "Test", Message: fmt.Sprintf("event %02d", i), Type: corev1.EventTypeNormal,
		}
		if _, err := kc.CoreV1().Events(ns).Create(ctx, e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if about == "mine" {
			want = append(want, e.Name)
		}
	}
	j := jobs.Job{ID: "job-mine", Namespace: ns, Manifests: []map[string]any{{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "mine"}}}}
	var got []string
	cursor, calls := "", 0
	for {
		calls++
		if calls > 10 {
			t.Fatalf("Events did not end after 10 calls; got %v", got)
		}
		events, next, err := jobobjects.Events(ctx, kc.CoreV1().RESTClient(), j, nil, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			got = append(got, e.Name)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the job's events read on to the end = %v, want %v", got, want)
	}
	// 20 events at most 8 a call: at least 3 calls, each within the budget.
	if calls < 3 {
		t.Errorf("Events answered all 20 of the namespace's events in %d calls with a budget of 8: it read past the budget", calls)
	}
	if _, _, err := jobobjects.Events(ctx, kc.CoreV1().RESTClient(), j, nil, "not-a-continue-token"); err == nil {
		t.Errorf("Events with a cursor the cluster never gave: no error")
	}
}
