package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Watchers gives each region's client for watches, one without the per-request timeout that
// would cut a watch off mid-stream; typed.Clusters is the real one. With Clusters that lack it,
// the beat watches through Client, and a watch cut off is resumed as any dropped one.
type Watchers interface {
	Watching(ctx context.Context, region string) (kubernetes.Interface, error)
}

const (
	// watchStop is how long before the invocation's deadline the watch ends, so that the lease is
	// let go and the function returns in time.
	watchStop = 2 * time.Second
	// resumePause is the least time between the fresh passes that resume dropped watches, so a
	// cluster that refuses every watch is LISTed once a second, not in a loop.
	resumePause = time.Second
	// watchBatch bounds the events taken at once into what the watch holds, under its lock.
	watchBatch = 100
)

// errDropped is a watch that ended before the beat's window did: closed by the API server, cut
// off, or answered with an error (410 Gone for a resourceVersion compacted away).
var errDropped = errors.New("the watch was dropped")

// window is a beat's watch of its regions, until Watch after the beat's start or shortly before
// its invocation's deadline; each region's is begun as soon as the pass has followed it. A nil
// window watches nothing.
type window struct {
	h      *Handler
	ctx    context.Context // what was begun when the window ends is finished under it
	window context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	watching map[string]bool
}

// openWindow is the watch of a beat that started at start, nil when the handler does not watch
// or no time is left for it.
func (h *Handler) openWindow(ctx context.Context, start time.Time) *window {
	if h.Watch <= 0 {
		return nil
	}
	until := start.Add(h.Watch)
	if d, ok := ctx.Deadline(); ok && d.Add(-watchStop).Before(until) {
		until = d.Add(-watchStop)
	}
	if !time.Now().Before(until) {
		return nil
	}
	w := &window{h: h, ctx: ctx, watching: map[string]bool{}}
	w.window, w.cancel = context.WithDeadline(ctx, until)
	// Where the last beat of this process left off, each region is watched at once, beside the
	// pass: what happened between the two beats comes as the events since, not after the pass.
	for _, r := range h.Regions {
		if l, ok := h.resumeFrom(r); ok {
			w.watch(r, l)
		}
	}
	return w
}

// watch watches region from l, what the pass LISTed of it or where the last beat's watch left
// off, until the window ends; a region watched already is left to that watch.
func (w *window) watch(region string, l owned) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watching[region] {
		return
	}
	w.watching[region] = true
	w.wg.Go(func() { w.h.watchRegion(w.ctx, w.window, region, l) })
}

// wait waits for every region's watch to end with the window.
func (w *window) wait() {
	if w == nil {
		return
	}
	w.wg.Wait()
	w.cancel()
}

// watchRegion watches region's Jobs and bare pods from l's LISTs until window ends, recording each
// job's steps as its objects move, under ctx, so that what was begun when the window ends is
// finished. A dropped watch is resumed by a fresh pass over the region, the beat's own, whose
// LISTs the next watch starts from: what happened in between is in them.
func (h *Handler) watchRegion(ctx, window context.Context, region string, l owned) {
	if h.Clusters == nil {
		return
	}
	kc, err := h.Clusters.Client(ctx, region)
	if err != nil {
		return // the pass has said why
	}
	wc := kc
	if w, ok := h.Clusters.(Watchers); ok {
		if wc, err = w.Watching(ctx, region); err != nil {
			h.Log.WarnContext(ctx, "no client to watch with; ends wait for the next beat", "region", region, "error", err)
			return
		}
	}
	for window.Err() == nil {
		began := time.Now()
		if l.jobsVersion != "" && l.podsVersion != "" && l.watchedVersion != "" {
			err = h.watchFrom(ctx, window, wc, kc, region, l)
		}
		if window.Err() != nil {
			return
		}
		h.Log.InfoContext(ctx, "resuming a dropped watch with a fresh pass", "region", region, "error", err)
		if wait := resumePause - time.Since(began); wait > 0 {
			sleep(window, wait)
		}
		var passErr error
		if l, passErr = h.region(window, region); passErr != nil && window.Err() == nil {
			h.Log.WarnContext(ctx, "a pass resuming the watch", "region", region, "error", passErr)
		}
	}
}

// watchFrom watches region's Jobs and bare pods through wc from l's resourceVersions until window
// ends (nil) or a watch drops, and follows each job whose objects an event moves, through kc and
// under ctx, as the pass does.
func (h *Handler) watchFrom(ctx, window context.Context, wc, kc kubernetes.Interface, region string, l owned) error {
	window, cancel := context.WithCancel(window)
	defer cancel()
	opts := func(selector, version string) metav1.ListOptions {
		// Bookmarks keep a quiet stream's resourceVersion current, for the next beat's resume.
		o := metav1.ListOptions{LabelSelector: selector, ResourceVersion: version, AllowWatchBookmarks: true}
		if d, ok := window.Deadline(); ok {
			secs := int64(time.Until(d)/time.Second) + 1
			o.TimeoutSeconds = &secs
		}
		return o
	}
	// The Jobs' pods are watched from the bare pods' LIST (the same resource, so the same
	// resourceVersion holds): the pass LISTs none of them, and needs none, since what one missed
	// only delays an end until its Job's own verdict.
	jobsWatch, podsWatch := wc.BatchV1().Jobs("").Watch, wc.CoreV1().Pods("").Watch
	streams := [watches]struct {
		what, selector, version string
		watch                   func(context.Context, metav1.ListOptions) (kwatch.Interface, error)
	}{
		ofJobs:    {"Jobs", jobs.IDKey, l.jobsVersion, jobsWatch},
		ofPods:    {"pods", unownedPods, l.podsVersion, podsWatch},
		ofWatched: {"retried jobs' pods", watchedPods, l.watchedVersion, podsWatch},
		ofJobPods: {"Jobs' pods", jobPods, cmp.Or(l.jobPodsVersion, l.podsVersion), podsWatch},
	}
	var events [watches]<-chan kwatch.Event
	for i, s := range streams {
		wi, err := s.watch(window, opts(s.selector, s.version))
		if err != nil {
			return fmt.Errorf("watching %s's %s: %w", region, s.what, err)
		}
		defer wi.Stop()
		events[i] = wi.ResultChan()
	}
	// What the watch follows a job with: its Jobs, bare pods and its Jobs' pods, kept current by
	// the events. Nodes are not watched: a pod's DisruptionTarget is seen as it comes, a node's
	// taint or loss by the next pass.
	w := owned{jobs: l.jobs, pods: l.pods, watched: l.watched, ran: l.ran,
		view: newNodeView(nil, h.CapacityLabel, h.recall(region).spot, h.now()), since: l.since}
	if w.watched == nil {
		w.watched = map[string][]corev1.Pod{}
	}
	if w.ran == nil || w.since.IsZero() {
		// A watch from a pass's LISTs: the Jobs' pods made from now on are all seen.
		w.ran, w.since = map[string][]corev1.Pod{}, time.Now()
	}
	f := h.newFollower(ctx, kc, region, w)
	for i, s := range streams {
		f.versions[i] = s.version
	}
	stop := make(chan struct{})
	running := make(chan struct{})
	go func() {
		defer close(running)
		f.run(stop)
	}()
	err := f.takeUntil(window, events)
	// What was taken is followed to its end, under ctx, before a pass may begin.
	close(stop)
	<-running
	f.wait()
	if err == nil {
		h.keepForResume(region, f.resumable())
	}
	return err
}

// jobPods selects the pods the Job controller made for a job's Jobs, whose end EndedByPods reads.
const jobPods = jobs.IDKey + "," + batchv1.JobNameLabel

// The watches a beat keeps on a region, by the index of their channels in take's events.
const (
	ofJobs = iota
	ofPods
	ofWatched
	ofJobPods
	watches
)

// keptFor is how long after a window ends the next beat may resume its watch from where it left
// off: the API server keeps a few minutes of events (a resourceVersion older than those is 410
// Gone, and the watch is resumed from a fresh pass instead).
const keptFor = 2 * time.Minute

// kept is where a region's watch left off: what it held, at the resourceVersions it had seen.
type kept struct {
	l  owned
	at time.Time
}

// keepForResume keeps l, where region's watch left off, for the next beat of this process.
func (h *Handler) keepForResume(region string, l owned) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.kept == nil {
		h.kept = map[string]kept{}
	}
	h.kept[region] = kept{l: l, at: time.Now()}
}

// resumeFrom is where region's last watch in this process left off, if it ended lately; it is
// taken, so that only one watch resumes from it.
func (h *Handler) resumeFrom(region string) (owned, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k, ok := h.kept[region]
	delete(h.kept, region)
	return k.l, ok && time.Since(k.at) < keptFor
}

// apply brings o up to date with one event of the watch of (ofJobs for a Job's), answering the id
// of the job whose object it is ("" for a bookmark, or an object without one).
func (o owned) apply(ev kwatch.Event, of int) (string, error) {
	switch obj := ev.Object.(type) {
	case *batchv1.Job:
		id := obj.Labels[jobs.IDKey]
		if id != "" {
			o.jobs[id] = replace(o.jobs[id], *obj, ev.Type == kwatch.Deleted, func(kj batchv1.Job) string { return kj.Namespace + "/" + kj.Name })
		}
		return id, nil
	case *corev1.Pod:
		id := obj.Labels[jobs.IDKey]
		group := o.pods
		switch of {
		case ofWatched:
			group = o.watched
		case ofJobPods:
			group = o.ran
		}
		if id != "" {
			group[id] = replace(group[id], *obj, ev.Type == kwatch.Deleted, func(p corev1.Pod) string { return p.Namespace + "/" + p.Name })
		}
		return id, nil
	}
	if ev.Type == kwatch.Error {
		return "", fmt.Errorf("%w: %w", errDropped, apierrors.FromObject(ev.Object))
	}
	return "", nil
}

// replace puts obj in objs in place of the one with its key, or adds it; deleted takes it out.
func replace[T any](objs []T, obj T, deleted bool, key func(T) string) []T {
	out := objs[:0:0]
	for _, o := range objs {
		if key(o) != key(obj) {
			out = append(out, o)
		}
	}
	if !deleted {
		out = append(out, obj)
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
