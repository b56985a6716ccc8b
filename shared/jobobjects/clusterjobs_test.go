package jobobjects

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/jobs"
)

func TestClusterJobs(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	end := start.Add(90 * time.Second)
	two, six := int32(2), int32(6)
	in := []batchv1.Job{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "train"},
			Spec:       batchv1.JobSpec{Parallelism: &two, Completions: &six},
			Status: batchv1.JobStatus{
				Active: 1, Succeeded: 4, Failed: 1, StartTime: &metav1.Time{Time: start}, CompletionTime: &metav1.Time{Time: end},
				Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods", LastTransitionTime: metav1.Time{Time: end}}},
			},
		},
		{ObjectMeta: metav1.ObjectMeta{Name: "not-started"}},
	}
	startUTC, endUTC := start.UTC(), end.UTC()
	want := []jobs.ClusterJob{
		{
			Name: "train", Parallelism: &two, Completions: &six, Active: 1, Succeeded: 4, Failed: 1, StartTime: &startUTC, CompletionTime: &endUTC,
			Conditions: []jobs.ClusterJobCondition{{Type: "Complete", Status: "True", Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods", LastTransitionTime: &endUTC}},
		},
		{Name: "not-started", Conditions: []jobs.ClusterJobCondition{}},
	}
	if diff := cmp.Diff(want, ClusterJobs(in)); diff != "" {
		t.Errorf("ClusterJobs (-want +got):\n%s", diff)
	}
	if got := ClusterJobs(nil); got == nil || len(got) != 0 {
		t.Errorf("ClusterJobs(nil) = %#v, want an empty list", got)
	}
}
