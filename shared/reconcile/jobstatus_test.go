package reconcile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/jobs"
)

func kjob(active int32, conds ...batchv1.JobConditionType) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Status: batchv1.JobStatus{Active: active}}
	for _, c := range conds {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "too many failures"})
	}
	return j
}

func pod(phase corev1.PodPhase) corev1.Pod { return corev1.Pod{Status: corev1.PodStatus{Phase: phase}} }

func TestFollow(t *testing.T) {
	tests := []struct {
		name    string
		current jobs.Status
		podless bool
		kjobs   []batchv1.Job
		pods    []corev1.Pod
		want    []Step
	}{
		{"created, not started", jobs.StatusPending, false, []batchv1.Job{kjob(0)}, []corev1.Pod{pod(corev1.PodPending)}, nil},
		{"started", jobs.StatusPending, false, []batchv1.Job{kjob(1)}, []corev1.Pod{pod(corev1.PodRunning)}, []Step{{To: jobs.StatusRunning}}},
		{"finished between beats", jobs.StatusPending, false, []batchv1.Job{kjob(0, batchv1.JobComplete)}, nil, []Step{{To: jobs.StatusRunning}, {To: jobs.StatusSucceeded}}},
		{"completed", jobs.StatusRunning, false, []batchv1.Job{kjob(0, batchv1.JobComplete)}, nil, []Step{{To: jobs.StatusSucceeded}}},
		{"failed", jobs.StatusRunning, false, []batchv1.Job{kjob(0, batchv1.JobFailed)}, nil, []Step{{To: jobs.StatusFailed, Reason: "Job train: BackoffLimitExceeded: too many failures"}}},
		{"one of two complete", jobs.StatusRunning, false, []batchv1.Job{kjob(0, batchv1.JobComplete), kjob(1)}, nil, nil},
		{"never backwards", jobs.StatusRunning, false, []batchv1.Job{kjob(0)}, []corev1.Pod{pod(corev1.PodPending)}, nil},
		{"terminal stays", jobs.StatusSucceeded, false, []batchv1.Job{kjob(0, batchv1.JobFailed)}, nil, nil},
		{"bare pod succeeded", jobs.StatusRunning, false, nil, []corev1.Pod{pod(corev1.PodSucceeded)}, []Step{{To: jobs.StatusSucceeded}}},
		{"bare pod failed", jobs.StatusPending, false, nil, []corev1.Pod{pod(corev1.PodFailed)}, []Step{{To: jobs.StatusRunning}, {To: jobs.StatusFailed, Reason: "a pod failed"}}},
		{"nothing there yet", jobs.StatusPending, false, nil, nil, nil},
		{"podless, applied", jobs.StatusPending, true, nil, nil, []Step{{To: jobs.StatusRunning}, {To: jobs.StatusSucceeded}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Follow(tt.current, tt.podless, tt.kjobs, tt.pods)); diff != "" {
				t.Errorf("Follow(%s) (-want +got):\n%s", tt.current, diff)
			}
		})
	}
}
