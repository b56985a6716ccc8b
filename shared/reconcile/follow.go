package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// Jobs is what following reads and writes of job records; dynamo.JobStore is the real one.
type Jobs interface {
	ActiveStates(ctx context.Context, region string) ([]jobs.Job, error)
	Job(ctx context.Context, id string) (jobs.Job, error)
	Apply(ctx context.Context, j jobs.Job, c dynamo.Change) error
}

// Clusters reaches each region's cluster.
type Clusters interface {
	Client(ctx context.Context, region string) (kubernetes.Interface, error)
}

const (
	// jobIDLabel is what dispatch stamps on every object of a job.
	jobIDLabel = "tidegate.io/job-id"
	// listPage is how many objects one LIST page holds: the apiserver's own default chunk size
	// for kubectl, large enough that 5,000 jobs take ten pages.
	listPage = 500
	// logTailLines are kept on a finished job's record, to outlive its pods.
	logTailLines = 50
)

var eventOf = map[jobs.Status]outbox.Type{
	jobs.StatusRunning:   outbox.JobStarted,
	jobs.StatusSucceeded: outbox.JobCompleted,
	jobs.StatusFailed:    outbox.JobFailed,
}

// follow mirrors the cluster's view of region's dispatched jobs into their records: the records'
// states and the label-selected LISTs of Jobs and of pods, read at the same time (a no-op beat
// costs the slower of the two, not their sum), then each changed job's steps in order. It
// answers the active jobs' states, for the sweep; with no active job, the LISTs are not looked at.
func (h *Handler) follow(ctx context.Context, region string) ([]jobs.Job, error) {
	if h.Clusters == nil {
		return h.statesWithoutCluster(ctx, region, errors.New("no cluster access configured"))
	}
	kc, err := h.Clusters.Client(ctx, region)
	if err != nil {
		return h.statesWithoutCluster(ctx, region, err)
	}

	listed := make(chan owned, 1)
	go func() { listed <- listOwned(ctx, kc) }()
	active, err := h.Jobs.ActiveStates(ctx, region)
	if err != nil || len(active) == 0 {
		// Let the LISTs finish rather than cut them off: a cancelled read mid-body is logged by
		// client-go as an error, and they cost no more than the read of the states.
		<-listed
		return active, err
	}
	l := <-listed
	if l.err != nil {
		return active, fmt.Errorf("listing %s's jobs: %w", region, l.err)
	}
	var errs []error
	for _, j := range active {
		if j.Status == jobs.StatusDispatching {
			continue // dispatch's to finish, or to adopt
		}
		if err := h.followOne(ctx, kc, j, l.jobs[j.ID], l.pods[j.ID]); err != nil {
			errs = append(errs, err)
		}
	}
	return active, errors.Join(errs...)
}

func (h *Handler) followOne(ctx context.Context, kc kubernetes.Interface, state jobs.Job, kjobs []batchv1.Job, pods []corev1.Pod) error {
	steps := Follow(state.Status, state.Podless, kjobs, pods)
	if len(steps) == 0 {
		return nil
	}
	// Only a job that changes is read whole, for its event's data.
	j, err := h.Jobs.Job(ctx, state.ID)
	if err != nil {
		return err
	}
	if j.Status != state.Status {
		return nil // moved since the states were read; the next beat sees it afresh
	}
	for _, st := range steps {
		now := h.now()
		next := j
		next.Status = st.To
		ev := outbox.ForJob(eventOf[st.To], next, st.Reason, now)
		c := dynamo.Change{From: j.Status, To: st.To, Reason: st.Reason, At: now, Event: &ev}
		if st.To.Terminal() {
			c.Set = map[string]any{"placement": Placement(pods, nodesOf(ctx, kc, pods)), "log_tail": logTail(ctx, kc, pods)}
		}
		if err := h.Jobs.Apply(ctx, j, c); err != nil {
			if errors.Is(err, dynamo.ErrStale) {
				return nil // another beat recorded it, or the job was cancelled
			}
			return err
		}
		j = next
	}
	return nil
}

// statesWithoutCluster reads region's active jobs for the sweep when its cluster cannot be
// reached: that is an error only if some job there needs following.
func (h *Handler) statesWithoutCluster(ctx context.Context, region string, reach error) ([]jobs.Job, error) {
	active, err := h.Jobs.ActiveStates(ctx, region)
	if err != nil || len(active) == 0 {
		return active, err
	}
	return active, fmt.Errorf("reaching %s's cluster: %w", region, reach)
}

// owned is a region's Jobs and pods carrying a job id, grouped by job id.
type owned struct {
	jobs map[string][]batchv1.Job
	pods map[string][]corev1.Pod
	err  error
}

// listOwned LISTs every Job and every pod carrying a job id, page by page, the two at once.
func listOwned(ctx context.Context, kc kubernetes.Interface) owned {
	var o owned
	var podErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.pods, podErr = listPages(ctx, func(opts metav1.ListOptions) ([]corev1.Pod, string, error) {
			l, err := kc.CoreV1().Pods("").List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		}, func(p corev1.Pod) string { return p.Labels[jobIDLabel] })
	}()
	var jobErr error
	o.jobs, jobErr = listPages(ctx, func(opts metav1.ListOptions) ([]batchv1.Job, string, error) {
		l, err := kc.BatchV1().Jobs("").List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	}, func(kj batchv1.Job) string { return kj.Labels[jobIDLabel] })
	<-done
	o.err = errors.Join(jobErr, podErr)
	return o
}

// listPages reads every page of a label-selected LIST, grouping the items by key.
func listPages[T any](ctx context.Context, page func(metav1.ListOptions) ([]T, string, error), key func(T) string) (map[string][]T, error) {
	out := map[string][]T{}
	opts := metav1.ListOptions{LabelSelector: jobIDLabel, Limit: listPage}
	for {
		items, next, err := page(opts)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out[key(it)] = append(out[key(it)], it)
		}
		if opts.Continue = next; next == "" {
			return out, nil
		}
	}
}

// logTail is the last lines of the job's newest pod's first container, or nothing if the logs
// cannot be read: a missing tail never holds a job's end.
func logTail(ctx context.Context, kc kubernetes.Interface, pods []corev1.Pod) []string {
	if len(pods) == 0 || len(pods[0].Spec.Containers) == 0 {
		return nil
	}
	p := pods[0]
	for _, q := range pods[1:] {
		if q.CreationTimestamp.After(p.CreationTimestamp.Time) {
			p = q
		}
	}
	tail := int64(logTailLines)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rc, err := kc.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: p.Spec.Containers[0].Name, TailLines: &tail}).Stream(ctx)
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<10))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// nodesOf reads the nodes the pods ran on, for their labels; a node that cannot be read is left out.
func nodesOf(ctx context.Context, kc kubernetes.Interface, pods []corev1.Pod) map[string]corev1.Node {
	out := map[string]corev1.Node{}
	for _, p := range pods {
		if _, done := out[p.Spec.NodeName]; done || p.Spec.NodeName == "" {
			continue
		}
		if n, err := kc.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{}); err == nil {
			out[p.Spec.NodeName] = *n
		}
	}
	return out
}
