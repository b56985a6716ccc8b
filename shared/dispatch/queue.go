package dispatch

import (
	"context"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// A drain reads its region's queues only as far as it needs: in dispatch order, a page at a
// time, judging what it has read after each page, until the jobs admitted fill the region's free
// room or the queues end. So its reads follow its room and the jobs it passes over (held by
// their price, too large for the room left, backing off), not the queue's length; a region whose
// flavors are full reads none of its queues. Room is counted in pods (flavors.Region.Room): the
// region's batch queue, its long-running queue and the roaming queue are merged in dispatch
// order, each read a page at a time.
const (
	// minPage and maxPage bound a page: the free pods left, so a region with room for one pod
	// reads ten jobs, and one with room for a thousand reads a hundred at a time (each page a
	// DynamoDB call of under 100 KB, within its 1 MB).
	minPage = 10
	maxPage = 100
	// fairWindow is how many jobs beyond its free room a drain reads when tenants share the
	// region by quotas: the fair order can only put a tenant's job first if the drain has read
	// it, so a tenant whose first job lies deeper than this in dispatch order waits for the
	// queue ahead of it to thin. Five pages; fairness past them would cost the whole queue.
	fairWindow = 5 * maxPage
	// censusEvery is how often a drain counts its region's whole queue for the queue's gauges
	// and the summary other regions read: a read that grows with the queue, once a minute.
	censusEvery = time.Minute
)

// source is one queue a drain reads, and how far it has.
type source struct {
	q    dynamo.Queue
	next string // the last key read
	read bool   // a page has been read
	done bool   // read to its end
}

// reading is what one drain has read of its region's queues, and its judgement of it.
type reading struct {
	own, roamers []jobs.Job
	keys         map[string]string // each job's place in dispatch order
	sources      []*source
	pages        int
}

// readQueues reads region's queues as the package says, with fr its flavors and active its
// active jobs, and answers what it read and its judgement of the part of it that comes before
// anything unread. queue is the region's queue length, as the last census found it.
func (h *Handler) readQueues(ctx context.Context, region string, fr flavors.Region, active []jobs.Job, queue int) (plan, error) {
	free := fr.Room(fr.Free(active), maxPage)
	r := reading{keys: map[string]string{}}
	if free > 0 {
		r.sources = []*source{{q: dynamo.RegionQueue(region)}, {q: dynamo.LongRunningQueue(region)}, {q: dynamo.RoamingQueue}}
	}
	for {
		for _, s := range r.sources {
			if !s.read {
				if err := h.readPage(ctx, &r, s, pageFor(free)); err != nil {
					return plan{}, err
				}
			}
		}
		own, roamers := r.judged()
		p, err := h.judge(ctx, region, own, roamers, active, queue)
		if err != nil {
			return p, err
		}
		p.full = free <= 0
		s := r.frontier()
		left := free - p.taken
		p.roomLeft = left
		quotas := p.snap.capacity.Quotas != nil || p.snap.capacity.DefaultQuota != nil
		if s == nil || left <= 0 && (!quotas || len(own)+len(roamers) >= free+fairWindow) {
			return p, nil
		}
		size := pageFor(left)
		if left <= 0 {
			size = maxPage // reading on for fairness only
		}
		if err := h.readPage(ctx, &r, s, size); err != nil {
			return plan{}, err
		}
	}
}

// pageFor is the page size for room free slots.
func pageFor(free int) int { return min(max(free, minPage), maxPage) }

// readPage reads the next page of s into r.
func (h *Handler) readPage(ctx context.Context, r *reading, s *source, size int) error {
	page, err := h.Store.QueuePage(ctx, s.q, s.next, size)
	if err != nil {
		return err
	}
	r.pages++
	s.read, s.next, s.done = true, page.Next, page.Next == ""
	for i, j := range page.Jobs {
		r.keys[j.ID] = page.Keys[i]
		if s.q == dynamo.RoamingQueue {
			r.roamers = append(r.roamers, j)
		} else {
			r.own = append(r.own, j)
		}
	}
	return nil
}

// frontier is the source to read next, the one whose last key read comes first in dispatch
// order, since every job it has not read may come before jobs another source has; nil when every
// source is read to its end.
func (r *reading) frontier() *source {
	var out *source
	for _, s := range r.sources {
		if !s.done && (out == nil || s.next < out.next) {
			out = s
		}
	}
	return out
}

// judged are the jobs read that come no later in dispatch order than the frontier: those before
// which nothing unread can come.
func (r *reading) judged() (own, roamers []jobs.Job) {
	f := r.frontier()
	keep := func(j jobs.Job) bool {
		return f == nil || r.keys[j.ID] <= f.next
	}
	for _, j := range r.own {
		if keep(j) {
			own = append(own, j)
		}
	}
	for _, j := range r.roamers {
		if keep(j) {
			roamers = append(roamers, j)
		}
	}
	return own, roamers
}

// plan is a drain's judgement of the jobs it read: what it admits, what waits and why.
type plan struct {
	rm       roaming
	rmErr    error      // reading other regions' summaries; the roaming jobs then wait
	full     bool       // the region had no free room: no queue was read
	queued   []jobs.Job // the region's own jobs and the roaming ones it takes up, less those failing
	failing  []jobs.Job // at their spot deadline with the price still above their cap
	onDemand map[string]bool
	observed map[string]spotgate.Observation
	snap     snapshot
	backoff  []admission.FlavorWait
	decision admission.FlavorDecision
	// taken is the room (flavors.Region.Pods) the jobs admitted take; roomLeft what is left of
	// the region's after them.
	taken, roomLeft int
}

// judge decides what to do with own (the region's queued jobs read) and roamers (the roaming
// ones), with active the region's active jobs, writing nothing.
func (h *Handler) judge(ctx context.Context, region string, own, roamers, active []jobs.Job, queue int) (plan, error) {
	var p plan
	p.rm, p.rmErr = h.roam(ctx, region, roamers, active, queue)
	if p.rmErr != nil {
		p.rm = roaming{}
	}
	queued := slices.Concat(own, p.rm.mine)
	var err error
	if p.snap, err = h.capacity(ctx, region, queued, active); err != nil {
		return p, err
	}
	p.observed = h.observe(ctx, region, queued)
	p.queued, p.failing, p.onDemand = atDeadline(queued, p.observed, h.now())
	var ready []jobs.Job
	ready, p.backoff = backingOff(p.queued, h.now())
	cands, needs := h.candidates(p.snap.region, ready, p.onDemand)
	p.decision = admission.DecideFlavors(cands, needs, p.snap.capacity, p.observed)
	at := make(map[string]int, len(cands))
	for i, c := range cands {
		at[c.ID] = i
	}
	for _, a := range p.decision.Admit {
		p.taken += p.snap.region.Pods(needs[at[a.ID]])
	}
	return p, nil
}
