package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/costing"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// Jobs is what following reads and writes of job records; dynamo.JobStore is the real one.
type Jobs interface {
	ActiveStates(ctx context.Context, region string) ([]jobs.Job, error)
	Unlisted(ctx context.Context, region string) ([]jobs.Job, error)
	States(ctx context.Context, ids []string) ([]jobs.Job, error)
	Records(ctx context.Context, ids []string) ([]jobs.Job, error)
	Job(ctx context.Context, id string) (jobs.Job, error)
	Apply(ctx context.Context, j jobs.Job, c jobs.Change) error
	// KeepDecisions writes the trail of what was decided about jobs: here, their retries.
	KeepDecisions(ctx context.Context, ds []jobs.JobDecision) error
}

// Clusters reaches each region's cluster: the typed client to follow jobs, the dynamic one to
// delete what a retried job's attempt left.
type Clusters interface {
	Client(ctx context.Context, region string) (kubernetes.Interface, error)
	Dynamic(ctx context.Context, region string) (dynamic.Interface, error)
}

const (
	// listPage is how many objects one LIST page holds: the apiserver's own default chunk size
	// for kubectl, large enough that 5,000 jobs take ten pages.
	listPage = 500
	// logTailLines are kept on a finished job's record, to outlive its pods.
	logTailLines = 50
)

// follow mirrors the cluster's view of region's dispatched jobs into their records. It LISTs the
// region's Jobs and pods and, at the same time, reads the few active records no LIST shows
// (claims and podless jobs; on an instance's first beat, all active records). Then it reads the
// records of the listed jobs it does not remember and of those whose objects moved past what it
// remembers, and records each one's steps: a beat where nothing changed reads no other record.
// A followed job whose objects have been gone from the LISTs for goneGrace is recorded failed
// (memory.go). It answers the records it read beside the LISTs, claims among them, for the sweep,
// the LISTs, which a watch resumes from (watch.go), and whether it rang dispatch for the ends it
// recorded.
func (h *Handler) follow(ctx context.Context, region string) (read []jobs.Job, l owned, rang bool, err error) {
	if h.Clusters == nil {
		read, err := h.statesWithoutCluster(ctx, region, errors.New("no cluster access configured"))
		return read, owned{}, false, err
	}
	kc, err := h.Clusters.Client(ctx, region)
	if err != nil {
		h.reach(ctx, region, err)
		read, err := h.statesWithoutCluster(ctx, region, err)
		return read, owned{}, false, err
	}

	last := h.recall(region)
	l, unlisted, err := h.look(ctx, kc, region, last)
	h.reach(ctx, region, l.err)
	if err != nil {
		return unlisted, owned{}, false, err
	}
	now := h.now()
	next := last.next(region, l, unlisted, now)
	unread, overdue := toRead(l, unlisted, last, next, now)
	next.spot = l.spotNodes(last.spot)
	for _, id := range slices.Concat(l.flagged(), last.stillAwaiting(l)) {
		if !slices.Contains(unread, id) && !slices.ContainsFunc(unlisted, func(j jobs.Job) bool { return j.ID == id }) {
			unread = append(unread, id)
		}
	}
	changed, err := h.Jobs.States(ctx, unread)
	if err != nil {
		return unlisted, l, false, fmt.Errorf("reading %s's changed jobs: %w", region, err)
	}

	l.ending = h.readEnding(ctx, kc, region, slices.Concat(unlisted, changed), l)
	errs, rang := h.settleAll(ctx, kc, region, slices.Concat(unlisted, changed), l, overdue, next)
	awaiting, err := h.awaitingPods(ctx, region, unlisted, changed, next, l)
	errs = append(errs, err)
	next.awaiting, err = h.judgeReady(ctx, kc, region, awaiting, next)
	errs = append(errs, err)
	h.remember(region, next)
	l.ending = nil // the pass's, not the watch's: ends seen later read their own
	return unlisted, l, rang, errors.Join(errs...)
}

// settleAll follows the jobs read, FollowDepth at once, as settle does, and records each overdue
// one's end (vanish); it keeps what to remember of each in next. The ends come first: dispatch is
// rung once they are all written (rang), and their details are added after, a few at a time.
func (h *Handler) settleAll(ctx context.Context, kc kubernetes.Interface, region string, read []jobs.Job, l owned, overdue map[string]time.Time, next memory) (errs []error, rang bool) {
	type result struct {
		s         jobs.Status
		keep      bool
		err       error
		later     []ending
		vanishing bool
	}
	out := make([]result, len(read))
	eachAtOnce(len(read), h.followDepth(), func(i int) {
		j, r := read[i], &out[i]
		if _, ok := overdue[j.ID]; ok {
			r.vanishing, r.err = true, h.vanish(ctx, region, j)
			return
		}
		r.s, r.keep, r.err = h.settle(ctx, kc, region, j, l, &r.later)
	})
	if rang = slices.ContainsFunc(out, func(r result) bool { return len(r.later) > 0 }); rang {
		h.ring(ctx, region) // the ends' room, before their details
	}
	eachAtOnce(len(read), detailDepth, func(i int) {
		if r := &out[i]; len(r.later) > 0 {
			if err := h.finishAll(ctx, kc, r.later); err != nil {
				r.err, r.keep = errors.Join(r.err, err), false
			}
		}
	})
	for i, j := range read {
		r := out[i]
		errs = append(errs, r.err)
		switch {
		case r.vanishing:
			if r.err != nil {
				next.gone[j.ID] = overdue[j.ID] // again next beat
			}
		case !l.has(j.ID):
		case r.keep:
			next.recorded[j.ID] = r.s
		default:
			delete(next.recorded, j.ID)
		}
	}
	return errs, rang
}

// eachAtOnce calls f(i) for each i below n, at most limit at once, and returns when all have.
func eachAtOnce(n, limit int, f func(i int)) {
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			f(i)
		})
	}
	wg.Wait()
}

// followDepth is FollowDepth, or DefaultFollowDepth when it is not set.
func (h *Handler) followDepth() int {
	if h.FollowDepth > 0 {
		return h.FollowDepth
	}
	return DefaultFollowDepth
}

// look LISTs region's Jobs and pods and, at the same time, reads the records no LIST shows or,
// on an instance's first beat (last remembers nothing), every active one.
func (h *Handler) look(ctx context.Context, kc kubernetes.Interface, region string, last memory) (owned, []jobs.Job, error) {
	listed := make(chan owned, 1)
	go func() {
		l := listOwned(ctx, kc)
		watch(ctx, kc, &l, h.CapacityLabel, last.spot, h.now())
		listed <- l
	}()
	read := h.Jobs.Unlisted
	if last.cold() {
		read = h.Jobs.ActiveStates
	}
	unlisted, err := read(ctx, region)
	// Let the LISTs finish rather than cut them off: a cancelled read mid-body is logged by
	// client-go as an error.
	l := <-listed
	if err != nil {
		return l, nil, err
	}
	if l.err != nil {
		return l, unlisted, fmt.Errorf("listing %s's jobs: %w", region, l.err)
	}
	return l, unlisted, nil
}

// toRead is which records a beat reads besides those read with the LISTs (unlisted): each listed
// job it does not remember, or whose objects moved past what it remembers, and each followed job
// gone from the LISTs for goneGrace (overdue, with when it went). It notes in next what it knows
// already, and takes the overdue ones out of next's gone: they are recorded, or have no record.
func toRead(l owned, unlisted []jobs.Job, last, next memory, now time.Time) (unread []string, overdue map[string]time.Time) {
	have := make(map[string]bool, len(unlisted)) // records read already
	for _, j := range unlisted {
		have[j.ID] = true
	}
	l.eachID(func(id string) {
		if have[id] {
			return
		}
		if s, ok := last.recorded[id]; ok && (!following(s) || !l.moved(id, s)) {
			next.recorded[id] = s
			return
		}
		unread = append(unread, id)
		next.recorded[id] = "" // no record, unless one is read below
	})
	overdue = next.overdue(now)
	for id := range overdue {
		if !have[id] {
			unread = append(unread, id)
		}
		delete(next.gone, id)
	}
	return unread, overdue
}

// settle follows job j, whose record this beat read, and answers what to remember of it: the
// status its record is left in ("" for another region's job, which a cluster shared between
// regions, as in dev, lists to both), or keep false to read it again next beat (dispatch's to
// finish, or it moved under us). An end it records leaves its details to later (record); an end
// whose details were left due by a beat that stopped before adding them gets them now.
func (h *Handler) settle(ctx context.Context, kc kubernetes.Interface, region string, j jobs.Job, l owned, later *[]ending) (s jobs.Status, keep bool, err error) {
	switch {
	case j.Region != region:
		return "", true, nil
	case j.Status == jobs.StatusQueued || j.Status == jobs.StatusDispatching:
		return "", false, nil
	case !following(j.Status) && j.DetailsDue && kc != nil:
		err := h.finishDue(ctx, kc, j, seen{pods: ofAttempt(l.pods[j.ID], j.AttemptOf())})
		return j.Status, err == nil, err
	case !following(j.Status):
		return j.Status, true, nil
	}
	if j.LongRunning() {
		s, err = h.record(ctx, kc, j, FollowLongRunning(j.Status, l.serving[j.ID]), seen{}, nil)
		return s, s != "", err
	}
	if _, done, err := h.retryInterrupted(ctx, kc, j, l); done {
		return "", false, err // retried (queued again): read afresh until its next attempt runs
	}
	kjobs := EndedByPods(ofAttempt(l.jobs[j.ID], j.AttemptOf()), l.ran[j.ID])
	pods := ofAttempt(l.pods[j.ID], j.AttemptOf())
	steps := Follow(j.Status, j.Podless, kjobs, pods)
	have := seen{pods: pods}
	if len(l.jobs[j.ID]) > 0 && j.Namespace != "" {
		// Its Jobs as listed or watched, which are what a read at its end would answer; an end
		// seen from its pod, before the Job controller says so, keeps them as the pod shows them,
		// not as a read a moment before the controller's sync would.
		have.kjobs = EndedByPods(inNamespace(l.jobs[j.ID], j.Namespace), l.ran[j.ID])
	}
	if ending, ok := l.ending[j.ID]; ok && len(pods) == 0 {
		// Its end's pods, as the pass read them for every job it saw end.
		have.pods = ending
	} else if len(pods) == 0 && l.sawEvery(j.ID) && allEnded(l.ran[j.ID]) {
		// Its Jobs' pods, every one of which the watch saw made and saw end: the pods' watch is
		// a stream of its own, which may show a pod's end after the Job's, and a pod not yet
		// seen ended would keep no exit code.
		have.pods = l.ran[j.ID]
	}
	s, err = h.record(ctx, kc, j, steps, have, later)
	return s, s != "" && s != jobs.StatusQueued, err
}

// seen is what a beat already holds of a job's objects when it records the job's steps, which
// its end keeps without reading them again: nil is read when the job ends.
type seen struct {
	pods  []corev1.Pod
	kjobs []batchv1.Job
}

// readEnding reads, with one LIST a namespace for each hundred jobs (jobobjects.PodsOf), the
// pods of the jobs among read, region's records this pass read, whose listed Jobs show their
// end: what each one's record keeps of its pods as the pass records it. One LIST a job would make
// a beat in which a hundredth of M jobs end cost M²/100 pods scanned by the API server. A job
// left out (its LIST failed, or it has no pod) reads its own when it ends, as in a watch.
func (h *Handler) readEnding(ctx context.Context, kc kubernetes.Interface, region string, read []jobs.Job, l owned) map[string][]corev1.Pod {
	byNamespace := map[string][]string{}
	for _, j := range read {
		if j.Region != region || j.Namespace == "" || !following(j.Status) || j.LongRunning() || len(l.pods[j.ID]) > 0 {
			continue
		}
		if s, _ := observed(ofAttempt(l.jobs[j.ID], j.AttemptOf()), nil); s.Terminal() {
			byNamespace[j.Namespace] = append(byNamespace[j.Namespace], j.ID)
		}
	}
	out := map[string][]corev1.Pod{}
	for ns, ids := range byNamespace {
		pods, err := jobobjects.PodsOf(ctx, kc.CoreV1().RESTClient(), ns, ids)
		if err != nil {
			h.Log.WarnContext(ctx, "reading the pods of jobs that ended; each reads its own", "region", region, "error", err)
		}
		maps.Copy(out, pods)
	}
	return out
}

// inNamespace are the Jobs of kjobs in namespace ns: a job's own, as jobobjects.BatchJobs reads
// them.
func inNamespace(kjobs []batchv1.Job, ns string) []batchv1.Job {
	out := make([]batchv1.Job, 0, len(kjobs))
	for _, kj := range kjobs {
		if kj.Namespace == ns {
			out = append(out, kj)
		}
	}
	return out
}

// vanishedReason is why a job whose objects disappeared before its end was seen failed.
const vanishedReason = "its Jobs and pods are gone from the cluster and no end was seen: deleted outside Tidegate " +
	"(kubectl, a namespace deleted, or a ttlSecondsAfterFinished shorter than a few minutes)"

// vanish records the end of job j, of region, whose objects the LISTs have not shown for
// goneGrace: deleted before any beat saw it end. Left as it was, it would stay active for good
// and hold a share of its region.
func (h *Handler) vanish(ctx context.Context, region string, j jobs.Job) error {
	if j.Region != region || !following(j.Status) {
		return nil // cancelled, say: cancelling deletes the objects too
	}
	_, err := h.record(ctx, nil, j, []Step{{To: jobs.StatusFailed, Reason: vanishedReason}}, seen{}, nil)
	return err
}

// record writes steps, in order, for the job whose state this beat read, each with its event,
// and answers the status its record is left in: "" when that is not known (it moved under us,
// or a step failed). An end is written first with its details due (jobs.Change.DetailsDue), so
// that the room it frees counts at once; its details (the placement, the last log lines, the
// failed containers and the cost of its pods) are read and added after, by finish, and then what
// the job applied is deleted (leave). With later nil they are added before record returns;
// otherwise record leaves them on later, for its caller to add once it has rung dispatch.
func (h *Handler) record(ctx context.Context, kc kubernetes.Interface, state jobs.Job, steps []Step, have seen, later *[]ending) (jobs.Status, error) {
	if len(steps) == 0 {
		return state.Status, nil
	}
	j, err := h.whole(ctx, state)
	if err != nil || j.Status != state.Status {
		return "", err // moved since the state was read; the next beat sees it afresh
	}
	for _, st := range steps {
		if st.To == jobs.StatusFailed && kc != nil && !st.NoRetry {
			if s, done, err := h.retryFailed(ctx, kc, j, st.Reason, have.pods); done {
				return s, err
			}
		}
		next, c, err := jobs.Move(j, st.To, st.Reason, h.now())
		if err != nil {
			return "", err
		}
		// An end whose objects can be read has its details added after it.
		c.DetailsDue = st.To.Terminal() && kc != nil
		if err := h.Jobs.Apply(ctx, j, c); err != nil {
			if errors.Is(err, records.ErrStale) {
				return "", nil // another beat recorded it, or the job was cancelled
			}
			return "", err
		}
		h.Log.DebugContext(ctx, "recorded", "job_id", j.ID, "status", st.To)
		if st.To == jobs.StatusRunning {
			h.started(ctx, j)
		}
		next.DetailsDue = c.DetailsDue
		if st.To.Terminal() && j.HasDependents {
			h.release(ctx, j.ID)
		}
		switch e := (ending{job: next, at: c.At, have: have}); {
		case !c.DetailsDue:
			if st.To.Terminal() {
				h.leave(ctx, j, st.To) // its end is kept on its record: what it applied may go
			}
		case later != nil:
			*later = append(*later, e)
		default:
			if err := h.finish(ctx, kc, e); err != nil {
				return "", err // its details are added by the next beat that reads it
			}
		}
		j = next
	}
	return j.Status, nil
}

// release releases the dependents of job id, whose end was just recorded, beside the beat's
// work, which waits for it. What fails is left to the beat's sweep.
func (h *Handler) release(ctx context.Context, id string) {
	if h.Releaser == nil {
		return
	}
	h.clearing.Go(func() {
		if _, err := h.Releaser.Release(ctx, id); err != nil {
			h.Log.WarnContext(ctx, "releasing an ended job's dependents; the beat's sweep will finish", "job_id", id, "err", err)
		}
	})
}

// whole is job state's whole record: state itself when it was read whole, else read afresh.
// States' projection leaves the tenant out, which every whole record has.
func (h *Handler) whole(ctx context.Context, state jobs.Job) (jobs.Job, error) {
	if state.Tenant != "" {
		return state, nil
	}
	return h.Jobs.Job(ctx, state.ID)
}

// ending is a job's end recorded with its details due, which finish adds: the job as the end
// left it, when it ended, and what the beat already holds of its objects.
type ending struct {
	job  jobs.Job
	at   time.Time
	have seen
}

// finish adds to an ended job the details of its end, reading what e.have does not hold, in
// one conditional write that holds only while they are due, and then deletes what the job
// applied (leave). Details another beat added meanwhile are left as they are. On an error the
// details stay due, and the objects in place, for the next beat that reads the job.
func (h *Handler) finish(ctx context.Context, kc kubernetes.Interface, e ending) error {
	c := jobs.Change{From: e.job.Status, To: e.job.Status, At: e.at, Detailed: true}
	h.keepEnd(ctx, kc, e.job, e.have, &c)
	if err := h.Jobs.Apply(ctx, e.job, c); err != nil && !errors.Is(err, records.ErrStale) {
		return fmt.Errorf("adding the details of job %s's end: %w", e.job.ID, err)
	}
	h.Log.DebugContext(ctx, "detailed", "job_id", e.job.ID, "status", e.job.Status)
	h.leave(ctx, e.job, e.job.Status)
	return nil
}

// finishAll adds the details of each end of later (finish), answering what failed.
func (h *Handler) finishAll(ctx context.Context, kc kubernetes.Interface, later []ending) error {
	var errs []error
	for _, e := range later {
		errs = append(errs, h.finish(ctx, kc, e))
	}
	return errors.Join(errs...)
}

// finishDue adds the details of ended job j's end that a beat left due and did not add (it
// stopped between the two writes, or the second failed), from have and what it reads.
func (h *Handler) finishDue(ctx context.Context, kc kubernetes.Interface, j jobs.Job, have seen) error {
	whole, err := h.whole(ctx, j)
	if err != nil {
		return err
	}
	return h.finish(ctx, kc, ending{job: whole, at: endedAt(whole), have: have})
}

// endedAt is when ended job j ended: its history's last move to its status, or its last update.
func endedAt(j jobs.Job) time.Time {
	if at, ok := j.LastAt(j.Status); ok {
		return at
	}
	return j.UpdatedAt
}

// keepEnd sets on c, the change that ends job j, its batch Jobs' last status and what its pods
// were, reading what have does not hold: their placement, last log lines, failed containers and
// cost. It answers the pods.
func (h *Handler) keepEnd(ctx context.Context, kc kubernetes.Interface, j jobs.Job, have seen, c *jobs.Change) []corev1.Pod {
	if have.kjobs != nil {
		c.ClusterJobs = jobobjects.ClusterJobs(have.kjobs)
	} else {
		c.ClusterJobs = jobobjects.EndClusterJobs(ctx, kc.BatchV1().RESTClient(), j)
	}
	pods := have.pods
	if len(pods) == 0 {
		pods = jobobjects.EndPods(ctx, kc.CoreV1().RESTClient(), j)
	}
	if len(pods) == 0 {
		return pods
	}
	nodes := h.nodes.of(ctx, kc, j.Region, pods, h.now()) // a node not read is left out of the placement
	c.Placement, c.LogTail = jobobjects.Placement(pods, nodes), jobobjects.LogTail(ctx, kc.CoreV1().RESTClient(), pods, logTailLines)
	c.Exits = jobobjects.Exits(pods)
	runs, costNodes := jobobjects.CostInputs(pods, nodes, c.At)
	cost := costing.Estimate(runs, costNodes, h.prices(ctx, j.Region, costNodes, c.At))
	c.Cost = &cost
	return pods
}

// prices are the prices nodes' cost is estimated at: the on-demand table, and the current spot
// price of each of their spot types in each zone of region.
func (h *Handler) prices(ctx context.Context, region string, nodes map[string]costing.Node, now time.Time) costing.Prices {
	p := costing.Prices{Spot: map[costing.Zoned]float64{}, OnDemand: h.OnDemand}
	types := costing.Types(nodes)
	if h.Prices == nil || len(types) == 0 {
		return p
	}
	for t, zones := range h.Prices.ZonePrices(ctx, region, types, now) {
		for zone, price := range zones {
			p.Spot[costing.Zoned{InstanceType: t, Zone: zone}] = price
		}
	}
	return p
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

// owned is a region's Jobs, pods, Deployments and StatefulSets carrying a job id, grouped by
// job id.
type owned struct {
	jobs    map[string][]batchv1.Job
	pods    map[string][]corev1.Pod
	serving map[string][]serving // Deployments and StatefulSets (longrunning.go)
	err     error
	// watched are the Job pods of jobs with a retry policy, and view the nodes, when any listed
	// pod is watched (retry.go).
	watched map[string][]corev1.Pod
	// ran are the Jobs' pods a watch saw (watch.go), from which EndedByPods sees a Job succeed
	// before its controller says so; the pass LISTs none.
	ran map[string][]corev1.Pod
	// ending are the pods of the jobs a pass saw end, read at once for all of them (readEnding);
	// nil outside the pass.
	ending map[string][]corev1.Pod
	view   nodeView
	// since is when the watch that keeps these objects current began (zero outside a watch): the
	// Jobs' pods made after it are all in ran.
	since time.Time
	// jobsVersion, podsVersion and watchedVersion are the resourceVersions the Jobs', the pods'
	// and the watched pods' LISTs were read at, which a watch resumes from; "" when a LIST failed.
	// jobPodsVersion is the Jobs' pods' watch's, where a beat's watch left off; "" after a pass,
	// whose watch of them starts from podsVersion.
	jobsVersion, podsVersion, watchedVersion, jobPodsVersion string
}

// sawEvery reports whether a watch saw every pod job id's Jobs made: the Jobs were made after it
// began (since, with clockSkew to spare between this machine and the API server's), so their
// pods were too.
func (o owned) sawEvery(id string) bool {
	if o.since.IsZero() || len(o.jobs[id]) == 0 || len(o.ran[id]) == 0 {
		return false
	}
	for _, kj := range o.jobs[id] {
		if !kj.CreationTimestamp.After(o.since.Add(clockSkew)) {
			return false
		}
	}
	return true
}

// allEnded reports whether every pod of pods has ended, Succeeded or Failed.
func allEnded(pods []corev1.Pod) bool {
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return false
		}
	}
	return true
}

// clockSkew is how far this machine's clock and an API server's may be apart.
const clockSkew = 2 * time.Second

// has reports whether job id has a Job, a pod, a Deployment or a StatefulSet.
func (o owned) has(id string) bool {
	_, j := o.jobs[id]
	_, p := o.pods[id]
	_, s := o.serving[id]
	return j || p || s
}

// moved reports whether job id's objects show a step past status s. Which kind the job is, its
// record says; a job with nothing but Deployments and StatefulSets listed is judged as either,
// since reading a record too many costs only the read.
func (o owned) moved(id string, s jobs.Status) bool {
	if len(Follow(s, false, EndedByPods(o.jobs[id], o.ran[id]), o.pods[id])) > 0 {
		return true
	}
	return len(o.jobs[id]) == 0 && len(o.pods[id]) == 0 && len(FollowLongRunning(s, o.serving[id])) > 0
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
	for id := range o.serving {
		_, job := o.jobs[id]
		if _, pod := o.pods[id]; !job && !pod {
			f(id)
		}
	}
}

// unownedPods selects the pods carrying a job id that no Job, Deployment or StatefulSet made: a
// job's bare pods (or a DaemonSet's, a ReplicaSet's). A Job's own pods are left out (the Job
// controller labels them with the Job's name): the Job's status says what they do, so a beat over
// 5,000 running Jobs does not read 5,000 pods as well. A Job's pods are read when it ends, for its
// placement (jobobjects.EndPods). So are a Deployment's (labelled with its pod template's hash)
// and a StatefulSet's (with their pod's name): their status says whether they are available.
const unownedPods = jobs.IDKey + ",!" + batchv1.JobNameLabel + ",!" + appsv1.DefaultDeploymentUniqueLabelKey + ",!" + appsv1.StatefulSetPodNameLabel

// listOwned LISTs every Job carrying a job id, every such pod no Job, Deployment or StatefulSet
// made, and every such Deployment and StatefulSet, page by page, all at once.
func listOwned(ctx context.Context, kc kubernetes.Interface) owned {
	var o owned
	var podErr, servingErr error
	served := make(chan struct{})
	go func() {
		defer close(served)
		o.serving, servingErr = listServing(ctx, kc)
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.pods, podErr = listPages(ctx, unownedPods, func(opts metav1.ListOptions) ([]corev1.Pod, string, error) {
			l, err := kc.CoreV1().Pods("").List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			// Every page of a LIST is read at its first page's resourceVersion.
			o.podsVersion = l.ResourceVersion
			return l.Items, l.Continue, nil
		}, func(p corev1.Pod) string { return p.Labels[jobs.IDKey] })
	}()
	var jobErr error
	o.jobs, jobErr = listPages(ctx, jobs.IDKey, func(opts metav1.ListOptions) ([]batchv1.Job, string, error) {
		l, err := kc.BatchV1().Jobs("").List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		o.jobsVersion = l.ResourceVersion
		return l.Items, l.Continue, nil
	}, func(kj batchv1.Job) string { return kj.Labels[jobs.IDKey] })
	<-done
	<-served
	o.err = errors.Join(jobErr, podErr, servingErr)
	if o.err != nil {
		o.jobsVersion, o.podsVersion = "", ""
	}
	return o
}

// listPages reads every page of a LIST by selector, grouping the items by key.
func listPages[T any](ctx context.Context, selector string, page func(metav1.ListOptions) ([]T, string, error), key func(T) string) (map[string][]T, error) {
	out := map[string][]T{}
	opts := metav1.ListOptions{LabelSelector: selector, Limit: listPage}
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
