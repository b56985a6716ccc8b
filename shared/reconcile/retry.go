package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// watchedPods selects the pods a Job made for a job with a retry policy (jobobjects.WatchKey):
// the only Job pods a beat LISTs, to see their interruptions while they run. A job's own pods,
// which unownedPods selects, carry the label too.
const watchedPods = jobs.IDKey + "," + jobobjects.WatchKey + "," + batchv1.JobNameLabel

// attemptTailLines are kept of an attempt that is retried (jobs.AttemptRecord bounds them too).
const attemptTailLines = 20

// watch LISTs, into l, the watched pods of Jobs and, when any listed pod is watched, the nodes, so
// that Interruption can judge them. A failed LIST leaves that part out: interruptions are then
// seen a beat later, or when the job ends.
func watch(ctx context.Context, kc kubernetes.Interface, l *owned, label string, wasSpot map[string]bool, now time.Time) {
	var version string
	watched, err := listPages(ctx, watchedPods, func(opts metav1.ListOptions) ([]corev1.Pod, string, error) {
		pl, err := kc.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		version = pl.ResourceVersion
		return pl.Items, pl.Continue, nil
	}, func(p corev1.Pod) string { return p.Labels[jobs.IDKey] })
	if err == nil {
		l.watched, l.watchedVersion = watched, version
	}
	watching := len(l.watched) > 0
	for _, ps := range l.pods {
		watching = watching || slices.ContainsFunc(ps, func(p corev1.Pod) bool { return p.Labels[jobobjects.WatchKey] != "" })
	}
	var nodes []corev1.Node
	if watching {
		if nl, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
			nodes = nl.Items
			if nodes == nil {
				nodes = []corev1.Node{}
			}
		}
	}
	l.view = newNodeView(nodes, label, wasSpot, now)
}

// flagged are the listed jobs whose pods show an interruption, of whatever attempt: their records
// are read even when their objects show no other change.
func (o owned) flagged() []string {
	var out []string
	seen := map[string]bool{}
	for _, group := range []map[string][]corev1.Pod{o.pods, o.watched} {
		for id, pods := range group {
			if seen[id] {
				continue
			}
			if _, ok := Interruption(pods, o.view, anyAttempt); ok {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// spotNodes are the nodes to remember as spot capacity: those listed on it now, and those last
// remembered that a listed pod still names (gone since, say).
func (o owned) spotNodes(last map[string]bool) map[string]bool {
	out := o.view.spotNodes()
	for _, group := range []map[string][]corev1.Pod{o.pods, o.watched} {
		for _, pods := range group {
			for _, p := range pods {
				if last[p.Spec.NodeName] {
					out[p.Spec.NodeName] = true
				}
			}
		}
	}
	return out
}

// podsOf are the listed pods of job id: its own and, for a watched job, its Jobs'.
func (o owned) podsOf(id string) []corev1.Pod {
	return slices.Concat(o.pods[id], o.watched[id])
}

// retryInterrupted retries job state, whose pods show an interruption of its current attempt, if
// its retry policy owes it one: done says it did (or the job moved under us), with the status
// the record is left in. Otherwise the job is followed as any other.
func (h *Handler) retryInterrupted(ctx context.Context, kc kubernetes.Interface, state jobs.Job, l owned) (jobs.Status, bool, error) {
	pods := l.podsOf(state.ID)
	c, ok := Interruption(pods, l.view, state.AttemptOf())
	if !ok {
		return "", false, nil
	}
	j, err := h.Jobs.Job(ctx, state.ID)
	if err != nil {
		return "", true, err
	}
	if j.Status != state.Status || j.AttemptOf() != state.AttemptOf() {
		return "", true, nil // moved since the state was read; the next beat sees it afresh
	}
	return h.retry(ctx, kc, j, c, pods)
}

// retryFailed retries job j (read whole), whose objects show it failed (why), if its retry policy
// owes it one for how the attempt ended: its pods and nodes are read to tell.
func (h *Handler) retryFailed(ctx context.Context, kc kubernetes.Interface, j jobs.Job, why string, pods []corev1.Pod) (jobs.Status, bool, error) {
	if j.Retry == nil {
		return "", false, nil
	}
	if len(pods) == 0 {
		pods = jobobjects.EndPods(ctx, kc.CoreV1().RESTClient(), j)
	}
	var nodes []corev1.Node
	if nl, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		nodes = append([]corev1.Node{}, nl.Items...)
	}
	c := EndCause(pods, newNodeView(nodes, h.CapacityLabel, nil, h.now()), j.AttemptOf(), why)
	return h.retry(ctx, kc, j, c, pods)
}

// retry records job j's retry after cause c, if its policy owes one (done false otherwise): what
// its attempt left is kept on the record, the job goes back to the queue with job.retrying, and
// then the attempt's objects are deleted and dispatch rung. Recording first is what keeps a crash
// from losing the retry: objects a crash leaves behind are replaced by the next attempt's apply
// (jobobjects.Apply), and the beat reads only the current attempt's pods.
func (h *Handler) retry(ctx context.Context, kc kubernetes.Interface, j jobs.Job, c jobs.Cause, pods []corev1.Pod) (jobs.Status, bool, error) {
	now := h.now()
	v := jobs.Decide(j, c, now)
	if !v.Retry {
		if v.Rule != "" { // its policy spoke to this end: say why it is not retried
			h.keepDecision(ctx, j.ID, jobs.Decision{At: now, Kind: jobs.DecisionRetry, Reason: c.Code() + ": not retried: " + v.Why, Attempt: j.AttemptOf(), Region: j.Region, Rule: v.Rule})
		}
		return "", false, nil
	}
	_, change, err := jobs.Retrying(j, c, v, h.keepAttempt(ctx, kc, j, pods), now)
	if err != nil {
		return "", true, err
	}
	if err := h.Jobs.Apply(ctx, j, change); err != nil {
		if errors.Is(err, records.ErrStale) {
			return "", true, nil // another beat recorded it, or the job was cancelled
		}
		return "", true, err
	}
	h.Log.InfoContext(ctx, "retrying", "job_id", j.ID, "attempt", change.Retried.Attempt, "cause", c.Code(), "not_before", v.NotBefore)
	reason := c.Code() + ": retried"
	if v.MemoryFactor > 1 {
		reason += fmt.Sprintf(" with %g× the memory", change.Retried.MemoryFactor)
	}
	h.keepDecision(ctx, j.ID, jobs.Decision{At: now, Kind: jobs.DecisionRetry, Reason: reason, Attempt: j.AttemptOf(), Region: j.Region, Rule: v.Rule})
	if err := h.clearAttempt(ctx, j); err != nil {
		h.Log.WarnContext(ctx, "an ended attempt's objects not deleted; its next apply replaces them", "job_id", j.ID, "error", err)
	}
	return jobs.StatusQueued, true, nil
}

// keepAttempt is what is kept of job j's ended attempt: its pods' placement, last lines and
// failed containers, reading the pods when none were listed.
func (h *Handler) keepAttempt(ctx context.Context, kc kubernetes.Interface, j jobs.Job, pods []corev1.Pod) jobs.AttemptRecord {
	if len(pods) == 0 {
		pods = jobobjects.EndPods(ctx, kc.CoreV1().RESTClient(), j)
	}
	pods = slices.DeleteFunc(slices.Clone(pods), func(p corev1.Pod) bool { return jobobjects.AttemptOf(p.Annotations) != j.AttemptOf() })
	if len(pods) == 0 {
		return jobs.AttemptRecord{}
	}
	nodes, _ := jobobjects.Nodes(ctx, kc.CoreV1().RESTClient(), pods)
	return jobs.AttemptRecord{
		Placement: jobobjects.Placement(pods, nodes),
		LogTail:   jobobjects.LogTail(ctx, kc.CoreV1().RESTClient(), pods, attemptTailLines),
		Exits:     jobobjects.Exits(pods),
	}
}

// clearAttempt deletes what job j's ended attempt made, and rings dispatch for its next.
func (h *Handler) clearAttempt(ctx context.Context, j jobs.Job) error {
	var errs []error
	dc, err := h.Clusters.Dynamic(ctx, j.Region)
	if err == nil {
		err = jobobjects.DeleteAttempt(ctx, dc, j, j.AttemptOf())
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("deleting attempt %d of job %s: %w", j.AttemptOf(), j.ID, err))
	}
	if h.Ringer != nil {
		errs = append(errs, h.Ringer.Ring(ctx, j.Region))
	}
	return errors.Join(errs...)
}

// ofAttempt are the objects of objs that attempt made: what an earlier attempt left while it is
// deleted says nothing of this one.
func ofAttempt[T any, P interface {
	*T
	GetAnnotations() map[string]string
}](objs []T, attempt int) []T {
	out := objs[:0:0]
	for i := range objs {
		if jobobjects.AttemptOf(P(&objs[i]).GetAnnotations()) == attempt {
			out = append(out, objs[i])
		}
	}
	return out
}

// keepDecision writes decision d about job id to its trail; a failure is logged, never the beat's.
func (h *Handler) keepDecision(ctx context.Context, id string, d jobs.Decision) {
	if err := h.Jobs.KeepDecisions(ctx, []jobs.JobDecision{{JobID: id, Decision: d}}); err != nil {
		h.Log.WarnContext(ctx, "decision not kept; the job's record is as it was", "job_id", id, "err", err)
	}
}
