package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// How a watch follows its jobs. Events are taken as they come into what the watch holds of the
// region's objects, and each job they move is due. The due jobs are taken together (up to a
// read's hundred) and their records read in one BatchGetItem, one such read at a time: the jobs
// that come due while one is read, or while every slot is busy, are read together next. Each
// job read is then followed on its own, in one of FollowDepth slots, from a copy of its own
// objects, while the events go on. An end is written first (record), which gives its slot back
// and rings dispatch and the webhook queue, and then its details are read and added. A job is
// followed by one follower at a time: one its events move again meanwhile is due again once it
// is done. The conditional writes keep each step recorded once whatever overlaps (another beat,
// a pass resuming a watch).

const (
	// DefaultFollowDepth is how many watched jobs are followed at once in each region, each from
	// its record, read, to its steps written: set from bench/ends (BENCHMARKS.md, "Throughput that
	// grows with capacity": at capacity 100, eight kept ends waiting near 3 s for a slot; 32 and 64
	// did not, and 64 had the lower tail).
	DefaultFollowDepth = 64
	// detailDepth is how many ends' details are read and added at once in each region: each
	// reads a node and a log tail a pod, and the spot price, then writes once.
	detailDepth = 16
	// readBatch is the most jobs taken at once, their records read in one BatchGetItem.
	readBatch = 100
)

// follower follows the jobs a region's watch events move, as they come.
type follower struct {
	h      *Handler
	ctx    context.Context // what was taken is followed under it to the end, past the window
	kc     kubernetes.Interface
	region string
	// rings and bells coalesce the asks of a burst of ends into one ring of dispatch, and of the
	// webhook queue.
	rings, bells *coalescer

	mu sync.Mutex
	w  owned // the region's objects, kept current by the events
	// versions are the resourceVersions each watch has shown last, which the next beat's watch
	// resumes from.
	versions [watches]string
	due      []string
	mark     map[string]mark
	wake     chan struct{}

	// reading is held from a batch's take until each of its jobs has a slot; slots are the
	// jobs followed at once; details the ends whose details are added at once.
	reading, slots, details chan struct{}
	wg                      sync.WaitGroup
	// stopping is set once the window has ended: what fails then is left to the next pass.
	stopping atomic.Bool
}

// mark is where a job stands with the follower.
type mark int

const (
	isDue     mark = iota + 1 // to be taken
	isBusy                    // being followed
	isBusyDue                 // being followed, and moved again since it was taken
)

func (h *Handler) newFollower(ctx context.Context, kc kubernetes.Interface, region string, w owned) *follower {
	depth := h.followDepth()
	f := &follower{
		h: h, ctx: ctx, kc: kc, region: region, w: w,
		mark: map[string]mark{}, wake: make(chan struct{}, 1),
		reading: make(chan struct{}, 1), slots: make(chan struct{}, depth), details: make(chan struct{}, detailDepth),
	}
	f.rings = &coalescer{do: func() { h.ring(ctx, region) }, gap: ringGap}
	f.bells = &coalescer{do: func() { h.ringWebhooks(ctx) }, gap: bellGap}
	return f
}

// takeUntil takes the events as they come until ctx ends (nil) or a watch drops.
func (f *follower) takeUntil(ctx context.Context, events [watches]<-chan kwatch.Event) error {
	for {
		if err := f.take(ctx, events); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// resumable is what the follower holds, at the resourceVersions its watches showed last: where
// the next beat's watch may resume.
func (f *follower) resumable() owned {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.w
	l.jobsVersion, l.podsVersion, l.watchedVersion, l.jobPodsVersion = f.versions[ofJobs], f.versions[ofPods], f.versions[ofWatched], f.versions[ofJobPods]
	return l
}

// take waits for the next event of any watch and applies it, with any others already waiting
// (up to watchBatch), to what the follower holds, making due each job whose objects they
// changed. It answers errDropped (wrapped) when a watch ended or sent an error, and nil when ctx
// ends first.
func (f *follower) take(ctx context.Context, events [watches]<-chan kwatch.Event) error {
	ev, of, open, got := receive(ctx, events)
	if !got {
		return nil
	}
	f.mu.Lock()
	defer f.poke()
	defer f.mu.Unlock()
	for n := 1; ; n++ {
		if !open {
			return errDropped
		}
		id, err := f.w.apply(ev, of)
		if err != nil {
			return err
		}
		if m, ok := ev.Object.(metav1.Object); ok && m.GetResourceVersion() != "" {
			f.versions[of] = m.GetResourceVersion()
		}
		if id != "" {
			f.makeDue(id)
		}
		if n == watchBatch {
			return nil
		}
		if ev, of, open, got = receive(nil, events); !got {
			return nil
		}
	}
}

// receive takes the next event of any of events, and which watch sent it: one already waiting
// first; then, with ctx nil, none (got false), otherwise waiting for one until ctx ends (got
// false). The two selects are the same but for the default: Go's select has no other way to
// prefer a ready event to an ended context.
func receive(ctx context.Context, events [watches]<-chan kwatch.Event) (ev kwatch.Event, of int, open, got bool) {
	select {
	case ev, open = <-events[ofJobs]:
		return ev, ofJobs, open, true
	case ev, open = <-events[ofPods]:
		return ev, ofPods, open, true
	case ev, open = <-events[ofWatched]:
		return ev, ofWatched, open, true
	case ev, open = <-events[ofJobPods]:
		return ev, ofJobPods, open, true
	default:
		if ctx == nil {
			return ev, 0, false, false
		}
	}
	select {
	case ev, open = <-events[ofJobs]:
		return ev, ofJobs, open, true
	case ev, open = <-events[ofPods]:
		return ev, ofPods, open, true
	case ev, open = <-events[ofWatched]:
		return ev, ofWatched, open, true
	case ev, open = <-events[ofJobPods]:
		return ev, ofJobPods, open, true
	case <-ctx.Done():
		return ev, 0, false, false
	}
}

// makeDue makes job id due, unless it is already; under f.mu.
func (f *follower) makeDue(id string) {
	switch f.mark[id] {
	case 0:
		f.mark[id] = isDue
		f.due = append(f.due, id)
	case isBusy:
		f.mark[id] = isBusyDue
	}
}

// poke wakes run, if it sleeps.
func (f *follower) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// run takes the due jobs, a batch at a time, until stop is closed; then it goes on until no job
// is due or followed (one its events moved while it was followed is due again when it is done),
// so that none whose events were taken is left to the next pass, and returns.
func (f *follower) run(stop <-chan struct{}) {
	stopping := false
	for {
		select {
		case <-f.wake:
		case <-stop:
			stop, stopping = nil, true
			f.stopping.Store(true)
		}
		for {
			select {
			case f.reading <- struct{}{}:
			case <-f.ctx.Done():
				return
			}
			ids, w := f.takeDue()
			if len(ids) == 0 {
				<-f.reading
				break
			}
			f.wg.Go(func() { f.follow(ids, w) })
		}
		if stopping && f.idle() {
			return
		}
	}
}

// idle reports whether no job is due or followed.
func (f *follower) idle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.mark) == 0
}

// takeDue takes the jobs due, up to readBatch, marks them busy and answers a copy of their
// objects.
func (f *follower) takeDue() ([]string, owned) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := min(len(f.due), readBatch)
	ids := f.due[:n:n]
	f.due = f.due[n:]
	for _, id := range ids {
		f.mark[id] = isBusy
	}
	return ids, f.w.only(ids)
}

// done is the end of following job id: due again if its objects moved meanwhile, or if again
// (its read or its record failed, which a moment may mend: otherwise it would wait for the next
// pass, a minute on).
func (f *follower) done(id string, again bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.poke() // run, stopping, waits for the last job to be done
	if f.mark[id] == isBusyDue || again {
		f.mark[id] = isDue
		f.due = append(f.due, id)
		return
	}
	delete(f.mark, id)
}

// wait waits for every job taken to be followed, and the rings they asked for to be rung.
func (f *follower) wait() {
	f.wg.Wait()
	f.rings.wait()
	f.bells.wait()
}

// follow follows jobs ids, taken together, from w, a copy of their objects: it reads the records
// of those whose objects show a step past what is remembered of them, all in one read, and
// follows each on its own as a slot frees up. It gives the read back (f.reading) once each has
// its slot, so that the jobs due meanwhile are read together.
func (f *follower) follow(ids []string, w owned) {
	var read []string
	for _, id := range ids {
		if f.h.worthReading(f.region, w, id) {
			read = append(read, id)
		} else {
			f.done(id, false)
		}
	}
	var recs []jobs.Job
	if len(read) > 0 {
		var err error
		if recs, err = f.h.Jobs.Records(f.ctx, read); err != nil {
			f.h.Log.WarnContext(f.ctx, "reading watched jobs; trying again in a moment", "region", f.region, "jobs", len(read), "error", err)
			<-f.reading
			f.retry(read)
			return
		}
	}
	byID := make(map[string]jobs.Job, len(recs))
	for _, j := range recs {
		byID[j.ID] = j
	}
	var wg sync.WaitGroup
	for _, id := range read {
		j, ok := byID[id]
		if !ok || j.LongRunning() {
			// No record (not a job of this deployment, or not yet), or a job the pass follows:
			// it lists their Deployments and StatefulSets.
			f.done(id, false)
			continue
		}
		f.slots <- struct{}{}
		wg.Go(func() { f.followOne(j, w) })
	}
	<-f.reading
	wg.Wait()
}

// followOne follows job j, whose whole record was just read, in the slot follow took for it, as
// the pass would: the slot is given back as soon as its steps are written, dispatch rung for an
// end, and the end's details are added after, a few at a time.
func (f *follower) followOne(j jobs.Job, w owned) {
	h := f.h
	var later []ending
	to, keep, err := h.settle(f.ctx, f.kc, f.region, j, w, &later)
	if err != nil {
		h.Log.WarnContext(f.ctx, "following a watched job; trying again in a moment", "job_id", j.ID, "error", err)
	}
	moved := to != "" && to != j.Status
	<-f.slots
	if moved && to.Terminal() {
		f.rings.ask()
	}
	if moved {
		f.bells.ask()
	}
	if len(later) > 0 {
		f.details <- struct{}{}
		if err := h.finishAll(f.ctx, f.kc, later); err != nil {
			h.Log.WarnContext(f.ctx, "adding an end's details; the next pass adds them", "job_id", j.ID, "error", err)
			keep = false
		}
		<-f.details
	}
	h.note(f.region, j.ID, to, keep)
	if err != nil {
		f.retry([]string{j.ID})
		return
	}
	f.done(j.ID, false)
}

// retry makes ids due again after retryPause, unless the window or the invocation ends first
// (the next pass follows them then).
func (f *follower) retry(ids []string) {
	sleep(f.ctx, retryPause)
	again := f.ctx.Err() == nil && !f.stopping.Load()
	for _, id := range ids {
		f.done(id, again)
	}
}

// retryPause is how long a watched job whose read or record failed waits to be followed again.
const retryPause = time.Second

// worthReading reports whether job id of region, whose objects w holds, is to be read: its
// objects show a step past the status remembered of it (past pending, for a job not remembered:
// one dispatch has just applied has nothing to record until it runs), or its pods show an
// interruption (read as the pass reads it, flagged, for its retry).
func (h *Handler) worthReading(region string, w owned, id string) bool {
	s, known := h.recalled(region, id)
	_, interrupted := Interruption(w.podsOf(id), w.view, anyAttempt)
	if interrupted {
		return true
	}
	if !known {
		s = jobs.StatusPending
	}
	return w.has(id) && following(s) && w.moved(id, s)
}

// only is a copy of what o holds of the jobs ids: the followers' own, which the events do not
// change under them (an event replaces a job's slice, never changes it).
func (o owned) only(ids []string) owned {
	out := owned{jobs: map[string][]batchv1.Job{}, pods: map[string][]corev1.Pod{},
		watched: map[string][]corev1.Pod{}, ran: map[string][]corev1.Pod{}, view: o.view, since: o.since}
	for _, id := range ids {
		if v, ok := o.jobs[id]; ok {
			out.jobs[id] = v
		}
		if v, ok := o.pods[id]; ok {
			out.pods[id] = v
		}
		if v, ok := o.watched[id]; ok {
			out.watched[id] = v
		}
		if v, ok := o.ran[id]; ok {
			out.ran[id] = v
		}
	}
	return out
}

// ring rings dispatch for region, whose room a job's end has freed, unless the region's last
// drain found nothing waiting there and none has run since (a submission rings for itself): one
// read instead of a message and a drain that reads the region's lease, active jobs and queues.
func (h *Handler) ring(ctx context.Context, region string) {
	if h.Ringer == nil {
		return
	}
	if idle, err := h.Leases.Idle(ctx, dynamo.DrainLease(region)); err == nil && idle {
		h.Log.DebugContext(ctx, "not ringing dispatch: its last drain found nothing waiting", "region", region)
		return
	}
	if err := h.Ringer.Ring(ctx, region); err != nil {
		h.Log.WarnContext(ctx, "ringing dispatch after an end; the next beat's sweep rings again", "region", region, "error", err)
		return
	}
	h.Log.DebugContext(ctx, "rang dispatch", "region", region)
}

// ringWebhooks rings the webhook queue after a watched job's step, so its event goes out now.
func (h *Handler) ringWebhooks(ctx context.Context) {
	if h.Bell == nil {
		return
	}
	if err := h.Bell.RingDrain(ctx); err != nil {
		h.Log.WarnContext(ctx, "ringing the webhook queue after a step; the next beat's sweep rings again", "error", err)
	}
}

// ringGap and bellGap are the least times between two rings of dispatch, and of the webhook
// queue, by one watch: the first end of a burst rings at once, and the ends within the gap after
// it ring once more, together. Each ring is an invocation of the function it rings, which reads
// the region's lease, active jobs and queue (about ten calls), or knocks on the lease of the
// drain under way: a ring an end would cost more than the end itself (bench/calls). Dispatch's
// gap is short, since a slot waits for it (bench/ends); the webhook queue's events wait a second
// at most.
const (
	ringGap = 250 * time.Millisecond
	bellGap = time.Second
)

// coalescer runs do at most once at a time, and at most once a gap: asked while it runs, or
// within gap of its start, it runs once more after, so the asks of a burst cost one run or two,
// not one each.
type coalescer struct {
	do  func()
	gap time.Duration

	mu             sync.Mutex
	running, asked bool
	wg             sync.WaitGroup
}

// ask runs do now, in the background, or once more after the run under way.
func (c *coalescer) ask() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		c.asked = true
		return
	}
	c.running = true
	c.wg.Go(func() {
		for {
			began := time.Now()
			c.do()
			time.Sleep(c.gap - time.Since(began))
			c.mu.Lock()
			if !c.asked {
				c.running = false
				c.mu.Unlock()
				return
			}
			c.asked = false
			c.mu.Unlock()
		}
	})
}

// wait waits for the runs asked for; no ask may come meanwhile.
func (c *coalescer) wait() { c.wg.Wait() }
