package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
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
	Unlisted(ctx context.Context, region string) ([]jobs.Job, error)
	States(ctx context.Context, ids []string) ([]jobs.Job, error)
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

// recorded is what a beat hands the next about one region: for each job its LIST showed, the
// status last seen on the job's record ("" for one it does not follow: no record, or another
// region's). A record moves only forward,
// and only a beat records a job's start and end, so a job whose objects show nothing past the
// status remembered has nothing to record, and its record need not be read. A new process (a
// cold start) remembers nothing and reads the records of every listed job once.
type recorded map[string]jobs.Status

// following reports whether a job remembered in status s may still move: a finished or
// cancelled job never does, and a retry is a job of its own.
func following(s jobs.Status) bool {
	return s == jobs.StatusPending || s == jobs.StatusRunning
}

// follow mirrors the cluster's view of region's dispatched jobs into their records. It LISTs the
// region's Jobs and pods and, at the same time, reads the few active records no LIST shows
// (claims and podless jobs; on an instance's first beat, all active records). Then it reads the
// records of the listed jobs it does not remember and of those whose objects moved past what it
// remembers, and records each one's steps: a beat where nothing changed reads no other record.
// It answers the records it read beside the LISTs, claims among them, for the sweep.
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
	known := h.recall(region)
	// Beside the LISTs: the records no LIST shows or, on an instance's first beat, every active one.
	read := h.Jobs.Unlisted
	if known == nil {
		read = h.Jobs.ActiveStates
	}
	unlisted, err := read(ctx, region)
	// Let the LISTs finish rather than cut them off: a cancelled read mid-body is logged by
	// client-go as an error.
	l := <-listed
	if err != nil {
		return nil, err
	}
	if l.err != nil {
		return unlisted, fmt.Errorf("listing %s's jobs: %w", region, l.err)
	}

	have := make(map[string]bool, len(unlisted)) // records read already
	for _, j := range unlisted {
		have[j.ID] = true
	}
	next := make(recorded, len(l.jobs))
	var unread []string
	l.eachID(func(id string) {
		if have[id] {
			next[id] = "" // set from its record below
			return
		}
		if s, ok := known[id]; ok && (!following(s) || len(Follow(s, false, l.jobs[id], l.pods[id])) == 0) {
			next[id] = s
			return
		}
		unread = append(unread, id)
		next[id] = "" // no record, unless one is read below
	})
	changed, err := h.Jobs.States(ctx, unread)
	if err != nil {
		return unlisted, fmt.Errorf("reading %s's changed jobs: %w", region, err)
	}

	var errs []error
	for _, j := range slices.Concat(unlisted, changed) {
		s, keep, err := h.settle(ctx, kc, region, j, l)
		errs = append(errs, err)
		if _, inList := next[j.ID]; !inList {
			continue
		}
		if keep {
			next[j.ID] = s
		} else {
			delete(next, j.ID)
		}
	}
	h.remember(region, next)
	return unlisted, errors.Join(errs...)
}

// settle follows job j, whose record this beat read, and answers what to remember of it: the
// status its record is left in ("" for another region's job, which a cluster shared between
// regions, as in dev, lists to both), or keep false to read it again next beat (dispatch's to
// finish, or it moved under us).
func (h *Handler) settle(ctx context.Context, kc kubernetes.Interface, region string, j jobs.Job, l owned) (s jobs.Status, keep bool, err error) {
	switch {
	case j.Region != region:
		return "", true, nil
	case j.Status == jobs.StatusQueued || j.Status == jobs.StatusDispatching:
		return "", false, nil
	case !following(j.Status):
		return j.Status, true, nil
	}
	s, err = h.followOne(ctx, kc, j, l.jobs[j.ID], l.pods[j.ID])
	return s, s != "", err
}

// followOne records state's steps, if its objects show any, and answers the status its record
// is left in: "" when that is not known (it moved under us, or a step failed).
func (h *Handler) followOne(ctx context.Context, kc kubernetes.Interface, state jobs.Job, kjobs []batchv1.Job, pods []corev1.Pod) (jobs.Status, error) {
	steps := Follow(state.Status, state.Podless, kjobs, pods)
	if len(steps) == 0 {
		return state.Status, nil
	}
	// Only a job that changes is read whole, for its event's data.
	j, err := h.Jobs.Job(ctx, state.ID)
	if err != nil {
		return "", err
	}
	if j.Status != state.Status {
		return "", nil // moved since the state was read; the next beat sees it afresh
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
				return "", nil // another beat recorded it, or the job was cancelled
			}
			return "", err
		}
		j = next
	}
	return j.Status, nil
}

// recall is what the last beat remembered of region; remember replaces it.
func (h *Handler) recall(region string) recorded {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.recorded[region]
}

func (h *Handler) remember(region string, r recorded) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.recorded == nil {
		h.recorded = map[string]recorded{}
	}
	h.recorded[region] = r
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

// eachID calls f once for each job id with a Job or a pod.
func (o owned) eachID(f func(id string)) {
	for id := range o.jobs {
		f(id)
	}
	for id := range o.pods {
		if _, seen := o.jobs[id]; !seen {
			f(id)
		}
	}
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
