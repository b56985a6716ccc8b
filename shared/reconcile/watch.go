package reconcile

import (
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
	// watchBatch bounds the events taken together before their jobs are followed: enough that a
	// burst of ends rings dispatch once, few enough that the first end is not kept waiting.
	watchBatch = 100
	// followers is how many watched jobs are followed at once. Recording an end reads the record,
	// the Job, its pods, their nodes and log tails, some ten requests that take a second on a
	// busy machine: one at a time, ten ends a second would queue up behind each other.
	followers = 8
)

// errDropped is a watch that ended before the beat's window did: closed by the API server, cut
// off, or answered with an error (410 Gone for a resourceVersion compacted away).
var errDropped = errors.New("the watch was dropped")

// watchAll watches every region at once until Watch after start, or shortly before ctx's own
// deadline, from what the pass LISTed of each (listed, by the index of h.Regions).
func (h *Handler) watchAll(ctx context.Context, start time.Time, listed []owned) {
	until := start.Add(h.Watch)
	if d, ok := ctx.Deadline(); ok && d.Add(-watchStop).Before(until) {
		until = d.Add(-watchStop)
	}
	if !time.Now().Before(until) {
		return
	}
	window, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	var wg sync.WaitGroup
	for i, r := range h.Regions {
		wg.Go(func() { h.watchRegion(ctx, window, r, listed[i]) })
	}
	wg.Wait()
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
		o := metav1.ListOptions{LabelSelector: selector, ResourceVersion: version}
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
		ofJobPods: {"Jobs' pods", jobPods, l.podsVersion, podsWatch},
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
	w := owned{jobs: l.jobs, pods: l.pods, watched: l.watched, ran: map[string][]corev1.Pod{},
		view: newNodeView(nil, h.CapacityLabel, h.recall(region).spot, h.now())}
	if w.watched == nil {
		w.watched = map[string][]corev1.Pod{}
	}
	for {
		moved, err := w.take(window, events)
		if len(moved) > 0 {
			h.followMoved(ctx, kc, region, w, moved)
		}
		if err != nil || window.Err() != nil {
			return err
		}
	}
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

// take waits for the next event of any watch and takes it, with any others already waiting (up
// to watchBatch), into o. It answers the ids of the jobs whose objects they changed, in the order
// first seen, and errDropped (wrapped) when a watch ended or sent an error.
func (o owned) take(ctx context.Context, events [watches]<-chan kwatch.Event) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for n := 0; n < watchBatch; n++ {
		var ev kwatch.Event
		var open bool
		var of int
		if n == 0 {
			select {
			case <-ctx.Done():
				return nil, nil
			case ev, open = <-events[ofJobs]:
			case ev, open = <-events[ofPods]:
				of = ofPods
			case ev, open = <-events[ofWatched]:
				of = ofWatched
			case ev, open = <-events[ofJobPods]:
				of = ofJobPods
			}
		} else {
			select {
			case ev, open = <-events[ofJobs]:
			case ev, open = <-events[ofPods]:
				of = ofPods
			case ev, open = <-events[ofWatched]:
				of = ofWatched
			case ev, open = <-events[ofJobPods]:
				of = ofJobPods
			default:
				return ids, nil
			}
		}
		if !open {
			return ids, errDropped
		}
		id, err := o.apply(ev, of)
		if err != nil {
			return ids, err
		}
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
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

// followMoved follows, as the pass would, each job of ids whose objects show a step past the
// status remembered of it, reading its record first, followers at a time. Dispatch is rung as soon
// as the first of them has ended, so its room is used while the others are recorded, and once more
// after them if more ended since; the webhook function is rung once if any moved. The events wait
// meanwhile, so w is only read; while the jobs are slow to follow, the next batch grows.
func (h *Handler) followMoved(ctx context.Context, kc kubernetes.Interface, region string, w owned, ids []string) {
	var mu sync.Mutex
	endsSinceRing, moved := 0, false
	rung := false
	slots := make(chan struct{}, followers)
	var wg sync.WaitGroup
	for _, id := range ids {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			from, to, err := h.followWatched(ctx, kc, region, w, id)
			if err != nil {
				h.Log.WarnContext(ctx, "following a watched job; the next pass tries again", "job_id", id, "error", err)
			}
			if to == "" || to == from {
				return
			}
			mu.Lock()
			moved = true
			first := to.Terminal() && !rung
			if to.Terminal() {
				endsSinceRing++
			}
			if first {
				rung, endsSinceRing = true, 0
			}
			mu.Unlock()
			if first {
				h.ring(ctx, region)
			}
		})
	}
	wg.Wait()
	if endsSinceRing > 0 {
		h.ring(ctx, region)
	}
	if moved && h.Bell != nil {
		if err := h.Bell.RingDrain(ctx); err != nil {
			h.Log.WarnContext(ctx, "ringing the webhook queue after a step; the next beat's sweep rings again", "error", err)
		}
	}
}

// ring rings dispatch for region, whose room a watched job's end has freed.
func (h *Handler) ring(ctx context.Context, region string) {
	if h.Ringer == nil {
		return
	}
	if err := h.Ringer.Ring(ctx, region); err != nil {
		h.Log.WarnContext(ctx, "ringing dispatch after an end; the next beat's sweep rings again", "region", region, "error", err)
		return
	}
	h.Log.DebugContext(ctx, "rang dispatch", "region", region)
}

// followWatched follows job id of region, whose objects w holds, through settle, the pass's own
// path, when they show a step past the status remembered of it; it answers the status its record
// was read in and the status it is left in ("" for either when it was not read, or is not known).
// A job whose pods show an interruption is read too, as the pass reads it (flagged), for its
// retry. A long-running job is left to the pass, which lists its Deployments and StatefulSets.
func (h *Handler) followWatched(ctx context.Context, kc kubernetes.Interface, region string, w owned, id string) (from, to jobs.Status, err error) {
	s, known := h.recalled(region, id)
	_, interrupted := Interruption(w.podsOf(id), w.view, anyAttempt)
	if known && (!following(s) || !w.moved(id, s) && !interrupted) || !w.has(id) && !interrupted {
		return "", "", nil
	}
	read, err := h.Jobs.States(ctx, []string{id})
	if err != nil || len(read) == 0 {
		return "", "", err // no record: not a job of this deployment, or not yet
	}
	j := read[0]
	if j.LongRunning() {
		return "", "", nil
	}
	to, keep, err := h.settle(ctx, kc, region, j, w)
	h.note(region, id, to, keep)
	return j.Status, to, err
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
