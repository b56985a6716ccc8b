package reconcile

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EndedByPods answers kjobs with each Job that its own pods show has succeeded marked Complete,
// so a job's end is seen as its pod ends rather than when the Job controller next syncs it, a
// second later (it batches a Job's pod updates for a second, syncJobBatchPeriod). Only where the
// pod's success decides the Job's exactly: one completion, at most one pod at a time, no deadline
// the controller could judge first, no success or pod failure policy, not suspended, no verdict
// or failure target yet, and every pod it made that the watch has seen succeeded. A pod counts
// only when the Job controls it by UID: a pod a tenant's manifest labels with the Job's name is
// not the Job's. Failures are always the Job's own verdict: a failed pod under backoffLimit is
// not a failed Job. pods are the Job pods the watch saw; the Jobs given are not changed.
func EndedByPods(kjobs []batchv1.Job, pods []corev1.Pod) []batchv1.Job {
	if len(pods) == 0 {
		return kjobs
	}
	out := kjobs
	for i, kj := range kjobs {
		if !endedByPods(kj, pods) {
			continue
		}
		if &out[0] == &kjobs[0] {
			out = append([]batchv1.Job(nil), kjobs...)
		}
		done := out[i].DeepCopy()
		// As the controller will have it a second later: its pod counted, its completion time
		// that of the pod's last container, the condition's reason saying who said so.
		finished := finishedAt(done.UID, pods)
		done.Status.Active, done.Status.Ready, done.Status.Succeeded = 0, nil, 1
		if !finished.IsZero() {
			done.Status.CompletionTime = &finished
		}
		done.Status.Conditions = append(done.Status.Conditions, batchv1.JobCondition{
			Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: podSucceededReason, LastTransitionTime: finished,
		})
		out[i] = *done
	}
	return out
}

// podSucceededReason marks a Complete condition EndedByPods made, not the Job controller.
const podSucceededReason = "PodSucceeded"

func endedByPods(kj batchv1.Job, pods []corev1.Pod) bool {
	s := kj.Spec
	if !atMostOne(s.Completions) || !atMostOne(s.Parallelism) || s.ActiveDeadlineSeconds != nil ||
		s.SuccessPolicy != nil || s.PodFailurePolicy != nil || s.Suspend != nil && *s.Suspend || kj.UID == "" {
		return false
	}
	for _, c := range kj.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			return false // a verdict, a failure target or a suspension: the Job's own word stands
		}
	}
	// A failure counted, or a pod still terminating (which may yet fail), could take the Job past
	// its backoffLimit in the very sync that sees the success; the watch may not have seen that
	// pod, made before it began, so the Job's own counts decide.
	if kj.Status.Failed > 0 || kj.Status.Terminating != nil && *kj.Status.Terminating > 0 {
		return false
	}
	succeeded := false
	for _, p := range pods {
		owner := metav1.GetControllerOf(&p)
		if owner == nil || owner.UID != kj.UID {
			continue
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return false
		}
		succeeded = true
	}
	return succeeded
}

func atMostOne(n *int32) bool { return n == nil || *n <= 1 }

// finishedAt is when the last container of the pods the Job of uid controls ended; zero when no
// container says.
func finishedAt(uid types.UID, pods []corev1.Pod) metav1.Time {
	var last metav1.Time
	for _, p := range pods {
		if owner := metav1.GetControllerOf(&p); owner == nil || owner.UID != uid {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			if t := c.State.Terminated; t != nil && last.Before(&t.FinishedAt) {
				last = t.FinishedAt
			}
		}
	}
	return last
}

// fromPods reports whether EndedByPods marked one of kjobs Complete.
func fromPods(kjobs []batchv1.Job) bool {
	for _, kj := range kjobs {
		for _, c := range kj.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Reason == podSucceededReason {
				return true
			}
		}
	}
	return false
}
