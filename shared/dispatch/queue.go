package dispatch

import (
	"cmp"
	"context"
	"slices"
	"sync"
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
	read         int // jobs read
}

// DefaultReadBudget is how many queued jobs a drain reads past its room at most: ten pages. A
// tenant's jobs passed over (too large for the room left, past its quota, backing off) cost every
// drain of the region no more than this, and the drain after it goes on from where it stopped
// (resumeCache), so a job behind any number of them is reached within a few drains.
const DefaultReadBudget = 10 * maxPage

// readQueues reads region's queues as the package says, with fr its flavors and active its
// active jobs, and answers what it read and its judgement of the part of it that comes before
// anything unread. c is the region's last census: its queue length; the instance types its capped
// jobs wait for, whose held jobs (dynamo.HeldQueue) the price now allows are read too; the tenants
// with long-running jobs held at their limit, read too for a tenant below it now.
//
// It reads at most its room and the read budget (ReadBudget): the rest waits for the next drain,
// which reads the head of the queue and then goes on from where this one stopped.
//
// extra are jobs not stored, judged as if they were queued (WhatIf); a drain has none.
func (h *Handler) readQueues(ctx context.Context, region string, fr flavors.Region, active []jobs.Job, c dynamo.Census, extra ...jobs.Job) (plan, error) {
	queue := c.Jobs
	free := fr.Room(fr.Free(active), maxPage)
	budget := cmp.Or(h.ReadBudget, DefaultReadBudget)
	r := reading{keys: map[string]string{}}
	for _, j := range extra {
		r.keys[j.ID] = dynamo.DispatchSort(j)
		if j.Roaming() {
			r.roamers = append(r.roamers, j)
		} else {
			r.own = append(r.own, j)
		}
	}
	var main *source
	reclaim := false
	if free <= 0 {
		var err error
		if reclaim, err = h.mayReclaim(ctx, region, fr, active); err != nil {
			return plan{}, err
		}
	}
	if free > 0 || reclaim {
		main = &source{q: dynamo.RegionQueue(region)}
		r.sources = []*source{main, {q: dynamo.LongRunningQueue(region)}, {q: dynamo.RoamingQueue}}
		if err := h.readHeld(ctx, &r, region, c.Types, free+budget); err != nil {
			return plan{}, err
		}
		if err := h.readLongHeld(ctx, &r, region, c.LongHeld, active, free+budget); err != nil {
			return plan{}, err
		}
		if err := h.readBackedOff(ctx, &r, region, free+budget); err != nil {
			return plan{}, err
		}
	}
	resume := h.resume.from(region)
	for {
		for _, s := range r.sources {
			if !s.read {
				if err := h.readPage(ctx, &r, s, pageFor(free)); err != nil {
					return plan{}, err
				}
				if s == main && resume > s.next && !s.done {
					s.next = resume // the head read, on from where the last drain stopped
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
			h.resume.at(region, "")
			p.idle = len(r.sources) > 0 && s == nil && r.read == 0
			return p, nil
		}
		if r.read >= free+budget {
			// Its budget spent: the next drain reads the head again, then goes on from here.
			h.resume.at(region, main.next)
			p.stopped = true
			return p, nil
		}
		size := pageFor(left)
		if left <= 0 {
			size = maxPage // reading on for fairness only
		}
		if err := h.readPage(ctx, &r, s, min(size, free+budget-r.read)); err != nil {
			return plan{}, err
		}
	}
}

// readHeld reads, for each of types whose price is known, the held jobs of region that price
// allows (their cap at or above it), at most most in all: candidates beside the queues, their
// places in dispatch order kept so they merge with them. Held jobs whose price still holds them
// are never read.
func (h *Handler) readHeld(ctx context.Context, r *reading, region string, types []string, most int) error {
	for _, t := range types {
		o := h.Prices.Observe(ctx, region, t, h.now())
		if !o.Known {
			continue
		}
		err := r.apart(most, func(after string, limit int) (dynamo.QueuePage, error) {
			return h.Store.HeldPage(ctx, region, t, o.Price, after, limit)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readLongHeld reads, for each of tenants (those with long-running jobs held at their limit) that
// is below its limit now, as many of them as it may start, at most most jobs read in all.
func (h *Handler) readLongHeld(ctx context.Context, r *reading, region string, tenants []string, active []jobs.Job, most int) error {
	if h.LongRunningHoldsSlot || len(tenants) == 0 {
		return nil
	}
	inUse := admission.SlotlessUse(active, false)
	for _, t := range tenants {
		room := h.LongRunningPerTenant - inUse[t]
		if room <= 0 {
			continue
		}
		err := r.apart(min(most, r.read+room), func(after string, limit int) (dynamo.QueuePage, error) {
			return h.Store.LongHeldPage(ctx, region, t, after, limit)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readBackedOff reads region's jobs whose retry's backoff is over (dynamo.BackoffQueue), at most
// most jobs read in all, as readHeld reads held ones: those still backing off are never read.
func (h *Handler) readBackedOff(ctx context.Context, r *reading, region string, most int) error {
	now := h.now()
	return r.apart(most, func(after string, limit int) (dynamo.QueuePage, error) {
		return h.Store.BackoffPage(ctx, region, now, after, limit)
	})
}

// apart reads jobs waiting apart a page at a time (page, from the key after, at most limit),
// until there are no more or r has read most jobs in all: candidates beside the queues, their
// places in dispatch order kept so they merge with them.
func (r *reading) apart(most int, page func(after string, limit int) (dynamo.QueuePage, error)) error {
	for after := ""; r.read < most; {
		p, err := page(after, min(maxPage, most-r.read))
		if err != nil {
			return err
		}
		r.read += len(p.Jobs)
		for i, j := range p.Jobs {
			r.keys[j.ID] = p.Keys[i]
			r.own = append(r.own, j)
		}
		if after = p.Next; after == "" {
			return nil
		}
	}
	return nil
}

// resumeCache keeps, per process, where each region's last drain stopped reading its queue with
// its budget spent. Its zero value is ready. Another process's drain starts from the head; it
// reads no more for that.
type resumeCache struct {
	mu   sync.Mutex
	keys map[string]string
}

func (c *resumeCache) from(region string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keys[region]
}

func (c *resumeCache) at(region, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = map[string]string{}
	}
	c.keys[region] = key
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
	r.read += len(page.Jobs)
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
	rmErr    error            // reading other regions' summaries; the roaming jobs then wait
	closed   admission.Reason // why the region admits nothing now ("" while it admits)
	full     bool             // the region had no free room: no queue was read
	queued   []jobs.Job       // the region's own jobs and the roaming ones it takes up, less those failing
	failing  []jobs.Job       // at their spot deadline with the price still above their cap
	onDemand map[string]bool
	observed map[string]spotgate.Observation
	snap     snapshot
	backoff  []admission.FlavorWait
	decision admission.FlavorDecision
	// taken is the room (flavors.Region.Pods) the jobs admitted take; roomLeft what is left of
	// the region's after them.
	taken, roomLeft int
	// stopped: the read budget ran out before the queues did.
	stopped bool
	// idle: every queue (and what waits apart) was read to its end and held no job.
	idle bool
}

// judge decides what to do with own (the region's queued jobs read) and roamers (the roaming
// ones), with active the region's active jobs, writing nothing.
func (h *Handler) judge(ctx context.Context, region string, own, roamers, active []jobs.Job, queue int) (plan, error) {
	var p plan
	gates := h.gates(ctx)
	p.closed = gates[region]
	p.rm, p.rmErr = h.roam(ctx, region, roamers, active, queue, gates)
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
	cands, needs, held := h.holdTenants(cands, needs)
	decide := func() admission.FlavorDecision {
		if p.closed != "" {
			return shut(cands, p.closed)
		}
		return admission.DecideFlavors(cands, needs, p.snap.capacity, p.observed)
	}
	if p.decision, err = h.withinBudget(ctx, region, &p.snap.capacity, decide(), decide); err != nil {
		return p, err
	}
	p.decision.Waiting = append(p.decision.Waiting, held...)
	at := make(map[string]int, len(cands))
	for i, c := range cands {
		at[c.ID] = i
	}
	for _, a := range p.decision.Admit {
		p.taken += p.snap.region.Pods(needs[at[a.ID]])
	}
	return p, nil
}
