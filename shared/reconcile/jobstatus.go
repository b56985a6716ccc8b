package reconcile

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Step is one status change reconcile records for a job, with the event it writes.
type Step struct {
	To     jobs.Status
	Reason string
	// NoRetry fails the job whatever its retry policy says: its pods never all scheduled
	// (ready.go), which no retry policy covers.
	NoRetry bool
}

// Follow decides a dispatched job's next statuses from what its cluster objects show: numbers in,
// steps out. A job moves only forward (pending → running → succeeded | failed); one that finished
// between two beats still passes through running, so its webhooks see started before completed.
// A job with no Kubernetes Job among its objects follows its pods; with neither, it stays where it
// is, unless it is podless (only ConfigMaps, Services and the like): that one is done once applied.
func Follow(current jobs.Status, podless bool, kjobs []batchv1.Job, pods []corev1.Pod) []Step {
	next, reason := observed(kjobs, pods)
	if podless {
		next, reason = jobs.StatusSucceeded, ""
	}
	var steps []Step
	if rank(next) <= rank(current) {
		return nil
	}
	if current == jobs.StatusPending && next.Terminal() {
		steps = append(steps, Step{To: jobs.StatusRunning})
	}
	return append(steps, Step{To: next, Reason: reason})
}

func rank(s jobs.Status) int {
	switch s {
	case jobs.StatusPending:
		return 1
	case jobs.StatusRunning:
		return 2
	case jobs.StatusSucceeded, jobs.StatusFailed:
		return 3
	}
	return 0
}

// observed is the status the objects show, with why when it failed.
func observed(kjobs []batchv1.Job, pods []corev1.Pod) (jobs.Status, string) {
	if len(kjobs) > 0 {
		complete, running := 0, false
		for _, kj := range kjobs {
			for _, c := range kj.Status.Conditions {
				if c.Status != corev1.ConditionTrue {
					continue
				}
				switch c.Type {
				case batchv1.JobFailed:
					return jobs.StatusFailed, "Job " + kj.Name + ": " + c.Reason + ": " + c.Message
				case batchv1.JobComplete:
					complete++
				}
			}
			if kj.Status.Active > 0 && (kj.Status.Ready == nil || *kj.Status.Ready > 0) {
				running = true
			}
		}
		switch {
		case complete == len(kjobs):
			return jobs.StatusSucceeded, ""
		case running || anyPod(pods, corev1.PodRunning):
			return jobs.StatusRunning, ""
		}
		return jobs.StatusPending, ""
	}
	switch {
	case anyPod(pods, corev1.PodFailed):
		return jobs.StatusFailed, "a pod failed"
	case len(pods) > 0 && allPods(pods, corev1.PodSucceeded):
		return jobs.StatusSucceeded, ""
	case anyPod(pods, corev1.PodRunning):
		return jobs.StatusRunning, ""
	}
	return jobs.StatusPending, ""
}

func anyPod(pods []corev1.Pod, phase corev1.PodPhase) bool {
	for _, p := range pods {
		if p.Status.Phase == phase {
			return true
		}
	}
	return false
}

func allPods(pods []corev1.Pod, phase corev1.PodPhase) bool {
	for _, p := range pods {
		if p.Status.Phase != phase {
			return false
		}
	}
	return true
}
