package reconcile_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/reconcile"
)

func ptr[T any](v T) *T { return &v }

// kjob is a Job of UID uid as dispatch applies one: one completion, no other setting.
func kjob(uid string, spec func(*batchv1.JobSpec)) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "main", UID: types.UID(uid)}}
	if spec != nil {
		spec(&j.Spec)
	}
	return j
}

// podOf is a pod in phase that the Job of UID owner controls ("" for none).
func podOf(name, owner string, phase corev1.PodPhase) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{batchv1.JobNameLabel: "main"}},
		Status: corev1.PodStatus{Phase: phase}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "main", UID: types.UID(owner), Controller: ptr(true)}}
	}
	return p
}

// TestEndedByPods: a Job whose one pod succeeded is seen complete before its controller says so,
// only where that pod's success decides the Job's; a failed pod never fails a Job, and a pod the
// Job does not control (a tenant's bare pod labelled with its Job's name) decides nothing.
func TestEndedByPods(t *testing.T) {
	complete := func(kj batchv1.Job) batchv1.Job {
		kj.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		return kj
	}
	failedBefore, terminating := kjob("u1", nil), kjob("u1", nil)
	failedBefore.Status.Failed = 1
	terminating.Status.Terminating = ptr[int32](1)
	failureTarget := kjob("u1", nil)
	failureTarget.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}}
	for _, tc := range []struct {
		name string
		kj   batchv1.Job
		pods []corev1.Pod
		want jobs.Status
	}{
		{"its one pod succeeded", kjob("u1", nil), []corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusSucceeded},
		{"one completion asked", kjob("u1", func(s *batchv1.JobSpec) { s.Completions = ptr[int32](1) }),
			[]corev1.Pod{podOf("p1", "u1", corev1.PodSucceeded)}, jobs.StatusSucceeded},
		{"a pod failed before one succeeded: left to the controller", kjob("u1", nil),
			[]corev1.Pod{podOf("p0", "u1", corev1.PodFailed), podOf("p1", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"its pod still runs", kjob("u1", nil), []corev1.Pod{podOf("p", "u1", corev1.PodRunning)}, jobs.StatusRunning},
		{"its pod failed, under backoffLimit", kjob("u1", nil), []corev1.Pod{podOf("p", "u1", corev1.PodFailed)}, jobs.StatusRunning},
		{"one pod succeeded, a later one runs", kjob("u1", nil),
			[]corev1.Pod{podOf("p1", "u1", corev1.PodSucceeded), podOf("p2", "u1", corev1.PodRunning)}, jobs.StatusRunning},
		{"hostile: a bare pod labelled with the Job's name", kjob("u1", nil), []corev1.Pod{podOf("fake", "", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"hostile: a pod of another Job", kjob("u1", nil), []corev1.Pod{podOf("other", "u2", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"two completions", kjob("u1", func(s *batchv1.JobSpec) { s.Completions = ptr[int32](2) }),
			[]corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"parallelism two", kjob("u1", func(s *batchv1.JobSpec) { s.Parallelism = ptr[int32](2) }),
			[]corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"a deadline the controller may judge first", kjob("u1", func(s *batchv1.JobSpec) { s.ActiveDeadlineSeconds = ptr[int64](1) }),
			[]corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"a pod failure policy", kjob("u1", func(s *batchv1.JobSpec) { s.PodFailurePolicy = &batchv1.PodFailurePolicy{} }),
			[]corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"a success policy", kjob("u1", func(s *batchv1.JobSpec) { s.SuccessPolicy = &batchv1.SuccessPolicy{} }),
			[]corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"suspended", kjob("u1", func(s *batchv1.JobSpec) { s.Suspend = ptr(true) }),
			[]corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"a failed pod counted, which the watch never saw", failedBefore, []corev1.Pod{podOf("p1", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"a pod terminating, which may yet fail", terminating, []corev1.Pod{podOf("p1", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"a failure target already", failureTarget, []corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusRunning},
		{"complete already", complete(kjob("u1", nil)), []corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}, jobs.StatusSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kjobs := []batchv1.Job{tc.kj}
			before := len(tc.kj.Status.Conditions)
			got := reconcile.Follow(jobs.StatusRunning, false, reconcile.EndedByPods(kjobs, tc.pods), nil)
			status := jobs.StatusRunning
			if len(got) > 0 {
				status = got[len(got)-1].To
			}
			if status != tc.want {
				t.Errorf("EndedByPods then Follow from running = %v, want %s", got, tc.want)
			}
			if len(kjobs[0].Status.Conditions) != before {
				t.Errorf("EndedByPods changed the Job it was given: %+v", kjobs[0].Status.Conditions)
			}
		})
	}
}

// TestEndedByPodsJudgesEachJob: of a job's two Jobs, only the one whose pod succeeded is seen
// complete, so the job still runs.
func TestEndedByPodsJudgesEachJob(t *testing.T) {
	kjobs := []batchv1.Job{kjob("u1", nil), kjob("u2", nil)}
	kjobs[1].Name = "second"
	got := reconcile.Follow(jobs.StatusRunning, false, reconcile.EndedByPods(kjobs, []corev1.Pod{podOf("p", "u1", corev1.PodSucceeded)}), nil)
	if len(got) != 0 {
		t.Errorf("one of two Jobs' pods succeeded: Follow = %v, want no step", got)
	}
	both := []corev1.Pod{podOf("p", "u1", corev1.PodSucceeded), podOf("q", "u2", corev1.PodSucceeded)}
	if got := reconcile.Follow(jobs.StatusRunning, false, reconcile.EndedByPods(kjobs, both), nil); len(got) != 1 || got[0].To != jobs.StatusSucceeded {
		t.Errorf("both Jobs' pods succeeded: Follow = %v, want succeeded", got)
	}
}

// TestEndedByPodsKeepsTheJobAsItsPodShowsIt: the Job EndedByPods answers, which a record keeps
// as it ends, counts the pod, is complete when its pod's container finished, and says who said
// so; the Job given is not changed.
func TestEndedByPodsKeepsTheJobAsItsPodShowsIt(t *testing.T) {
	finished := metav1.NewTime(metav1.Now().Rfc3339Copy().Time)
	pod := podOf("p", "u1", corev1.PodSucceeded)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: finished}}}}
	given := kjob("u1", nil)
	given.Status.Active = 1
	got := reconcile.EndedByPods([]batchv1.Job{given}, []corev1.Pod{pod})[0]
	st := got.Status
	if st.Active != 0 || st.Succeeded != 1 || st.CompletionTime == nil || !st.CompletionTime.Equal(&finished) ||
		len(st.Conditions) != 1 || st.Conditions[0].Type != batchv1.JobComplete || st.Conditions[0].Reason != "PodSucceeded" {
		t.Errorf("the Job ended by its pod = %+v; want 0 active, 1 succeeded, completed at %s, Complete by PodSucceeded", st, finished)
	}
	if given.Status.Active != 1 || given.Status.Succeeded != 0 || len(given.Status.Conditions) != 0 {
		t.Errorf("EndedByPods changed the Job it was given: %+v", given.Status)
	}
}
