package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// judgeReady carries out jobs.Ready for region's dispatched jobs whose current attempt's pods were
// never seen all scheduled (awaiting, read this pass with their ready fields; ids to read those
// of again), and answers the ones still waiting, to read again next beat. Their pods are read
// with one LIST a namespace for each hundred jobs: the beat LISTs no Job's pods otherwise, and a
// job is judged only for its first minutes. A job seen ready is recorded so, once: a cold start
// then never takes it for waiting, nor times it out because a pod was evicted since.
func (h *Handler) judgeReady(ctx context.Context, kc kubernetes.Interface, region string, awaiting []jobs.Job, next memory) (map[string]bool, error) {
	out := map[string]bool{}
	if len(awaiting) == 0 {
		return out, nil
	}
	byNamespace := map[string][]string{}
	for _, j := range awaiting {
		byNamespace[j.Namespace] = append(byNamespace[j.Namespace], j.ID)
	}
	pods := map[string][]corev1.Pod{}
	for ns, ids := range byNamespace {
		got, err := jobobjects.PodsOf(ctx, kc.CoreV1().RESTClient(), ns, ids)
		if err != nil {
			// Judged on pods not read, a job would look unscheduled: wait for the next beat.
			for _, id := range ids {
				out[id] = true
			}
			h.Log.WarnContext(ctx, "reading the pods of jobs awaiting their pods; judged next beat", "region", region, "error", err)
			continue
		}
		for id, ps := range got {
			pods[id] = ps
		}
		for _, id := range ids {
			if _, ok := got[id]; !ok {
				pods[id] = nil
			}
		}
	}
	var errs []error
	now := h.now()
	for _, j := range awaiting {
		ps, ok := pods[j.ID]
		if !ok {
			continue // its namespace's pods were not read
		}
		ps = ofAttempt(ps, j.AttemptOf())
		switch r := j.Ready(podsSeen(ps), now).(type) {
		case jobs.ReadyWait:
			out[j.ID] = true
		case jobs.ReadyDone:
			next.settled[j.ID] = true
			if err := h.Jobs.Apply(ctx, j, jobs.AllScheduled(j, now)); err != nil {
				delete(next.settled, j.ID)
				out[j.ID] = true // moved under us, or not written: judged again next beat
				if !errors.Is(err, records.ErrStale) {
					errs = append(errs, fmt.Errorf("recording job %s's pods all scheduled: %w", j.ID, err))
				}
			}
		case jobs.ReadyRequeue:
			errs = append(errs, h.requeueNotReady(ctx, kc, j, r, ps))
			delete(next.recorded, j.ID) // queued again: read afresh until its next attempt runs
		case jobs.ReadyFail:
			s, err := h.record(ctx, kc, j, []Step{{To: jobs.StatusFailed, Reason: jobs.ReasonPodsNeverReady + ": " + r.Detail, NoRetry: true}}, seen{pods: ps}, nil)
			errs = append(errs, err)
			if s == "" {
				delete(next.recorded, j.ID)
			} else {
				next.recorded[j.ID] = s
			}
		default:
			errs = append(errs, fmt.Errorf("job %s: readiness %T has no executor", j.ID, r))
		}
	}
	return out, errors.Join(errs...)
}

// podsSeen counts pods, those being deleted left out, and those of them scheduled: bound to a
// node, or with PodScheduled true a moment before the binding shows.
func podsSeen(pods []corev1.Pod) jobs.PodsSeen {
	var s jobs.PodsSeen
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		s.Exist++
		if p.Spec.NodeName != "" || slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue
		}) {
			s.Scheduled++
		}
	}
	return s
}

// requeueNotReady queues job state again, its pods not all scheduled in time (r): what its
// attempt left is kept on the record, the job goes back to the queue with job.retrying, and then
// the attempt's objects are deleted and dispatch rung, in the order retry keeps and for its reason.
func (h *Handler) requeueNotReady(ctx context.Context, kc kubernetes.Interface, state jobs.Job, r jobs.ReadyRequeue, pods []corev1.Pod) error {
	j, err := h.Jobs.Job(ctx, state.ID)
	if err != nil {
		return err
	}
	if j.Status != state.Status || j.AttemptOf() != state.AttemptOf() || !j.AwaitsPods() {
		return nil // moved since the state was read; the next beat sees it afresh
	}
	now := h.now()
	_, change, err := jobs.NotReady(j, r, h.keepAttempt(ctx, kc, j, pods), now)
	if err != nil {
		return err
	}
	if err := h.Jobs.Apply(ctx, j, change); err != nil {
		if errors.Is(err, records.ErrStale) {
			return nil // another beat recorded it, or the job was cancelled
		}
		return err
	}
	h.Log.InfoContext(ctx, "retrying", "job_id", j.ID, "attempt", change.Retried.Attempt, "cause", jobs.ReasonPodsNotReady, "not_before", r.NotBefore)
	if err := h.clearAttempt(ctx, j); err != nil {
		h.Log.WarnContext(ctx, "an ended attempt's objects not deleted; its next apply replaces them", "job_id", j.ID, "error", err)
	}
	return nil
}

// stillAwaiting are the jobs the last beat left awaiting their pods that the LISTs still show:
// their records are read this beat whether or not their objects moved.
func (m memory) stillAwaiting(l owned) []string {
	var out []string
	for id := range m.awaiting {
		if l.has(id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// awaitingPods are the jobs of region this pass read, listed and left pending or running
// (next), whose current attempt's pods are still to be judged. Records read with the LISTs
// (unlisted: on a cold start, every active one) hold no ready fields, so those that may await
// are read again by id; changed were read with them.
func (h *Handler) awaitingPods(ctx context.Context, region string, unlisted, changed []jobs.Job, next memory, l owned) ([]jobs.Job, error) {
	candidate := func(j jobs.Job) (jobs.Job, bool) {
		s := next.recorded[j.ID]
		if j.Region != region || !following(s) || !l.has(j.ID) {
			return j, false
		}
		j.Status = s // as the pass left it
		return j, true
	}
	var out []jobs.Job
	judge := func(j jobs.Job) {
		if j, ok := candidate(j); ok {
			if j.AwaitsPods() {
				out = append(out, j)
			} else {
				next.settled[j.ID] = true
			}
		}
	}
	for _, j := range changed {
		judge(j)
	}
	var again []string
	for _, j := range unlisted {
		if _, ok := candidate(j); ok && !next.settled[j.ID] && !slices.ContainsFunc(changed, func(c jobs.Job) bool { return c.ID == j.ID }) {
			again = append(again, j.ID)
		}
	}
	if len(again) == 0 {
		return out, nil
	}
	read, err := h.Jobs.States(ctx, again)
	if err != nil {
		return out, fmt.Errorf("reading %s's jobs awaiting their pods: %w", region, err)
	}
	for _, j := range read {
		judge(j)
	}
	return out, nil
}
