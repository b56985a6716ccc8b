package dispatch

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// summaryFresh is how long a drain trusts what another region's drain last said of its room and
// queue. While roaming jobs wait, the beat's sweep wakes every region each beat (a minute in
// AWS), so a region with work says it again well within this; one silent longer has had no drain
// lately, and is taken to have room: a roaming job sent there wakes it, and its drain says
// otherwise if it must.
const summaryFresh = 2 * time.Minute

// roaming is what one drain makes of the roaming jobs that allow its region.
type roaming struct {
	seen bool // some roaming job allows the region: its summary is worth keeping
	// mine are those this region takes up: candidates beside its own queue, each with the choice
	// that sent it here (choices), which its claim records.
	mine    []jobs.Job
	choices map[string]jobs.RegionChoice
	// waiting are those no allowed region can take now, with why (choices).
	waiting []jobs.Job
	// ring are the regions chosen for roaming jobs that this drain passed on: woken so that they
	// take them up now rather than at the next beat.
	ring map[string]bool
	// elsewhere is, for each of mine, the region it would go to were its tenant full here: where
	// it is sent if this drain holds it for its tenant's share or long-running limit.
	elsewhere map[string]string
}

// roam sorts the roaming jobs (all of them, as read) that allow region: the best region for each
// (admission.ChooseRegion) from the prices observed in each of its regions, this region's own
// room (its capacity less its active jobs) and queue, and other regions' summaries.
func (h *Handler) roam(ctx context.Context, region string, all, active []jobs.Job, queue int, closed map[string]admission.Reason) (roaming, error) {
	rm := roaming{choices: map[string]jobs.RegionChoice{}, ring: map[string]bool{}, elsewhere: map[string]string{}}
	var list []jobs.Job
	var others []string
	for _, j := range all {
		if j.Roaming() && slices.Contains(j.Regions, region) {
			list = append(list, j)
			for _, r := range j.Regions {
				if _, ok := h.Regions[r]; ok && r != region && !slices.Contains(others, r) {
					others = append(others, r)
				}
			}
		}
	}
	if len(list) == 0 {
		return rm, nil
	}
	rm.seen = true
	sums, err := h.Store.RegionSummaries(ctx, others)
	if err != nil {
		return rm, err
	}
	fr := h.flavorsOf(region)
	v := view{h: h, region: region, now: h.now(), sums: sums, closed: closed, prices: map[[2]string]spotgate.Observation{}, flavors: fr, free: fr.Free(active), queue: queue}
	for _, j := range list {
		states := v.states(ctx, j)
		c := admission.ChooseRegion(j.Spot, states, false)
		if c.Reason == string(admission.ReasonNoRegionOpen) && admission.Deadline(j.Spot, v.observe(ctx, region, j.Spot), v.now) != admission.Gated {
			// Its deadline passed with no region open: atDeadline fails it here, or it runs on
			// demand where room is best.
			if c = admission.ChooseRegion(j.Spot, states, true); j.Spot.OnDeadline != jobs.OnDeadlineOnDemand {
				c.Region = region
			}
		}
		switch c.Region {
		case region:
			rm.mine = append(rm.mine, j)
			rm.choices[j.ID] = c
			rm.elsewhere[j.ID] = admission.ChooseRegion(j.Spot, tenantFullHere(states, region), false).Region
		case "":
			rm.waiting = append(rm.waiting, j)
			rm.choices[j.ID] = c
		default:
			rm.ring[c.Region] = true
			rm.choices[j.ID] = c // what a what-if of it says (WhatIf); no drain writes it
		}
	}
	return rm, nil
}

// view is what one drain knows of the regions while it sorts roaming jobs: other regions'
// summaries, the prices observed so far (once per region and instance type), and its own
// region's active jobs and queue.
type view struct {
	h       *Handler
	region  string
	now     time.Time
	sums    map[string]jobs.RegionSummary
	prices  map[[2]string]spotgate.Observation
	flavors flavors.Region
	free    []admission.Vec // each flavor's room less the active jobs'
	queue   int
	closed  map[string]admission.Reason // the regions that admit nothing now, and why
}

func (v *view) observe(ctx context.Context, r string, s *jobs.Spot) spotgate.Observation {
	if s == nil {
		return spotgate.Observation{}
	}
	k := [2]string{r, s.InstanceType}
	if _, ok := v.prices[k]; !ok {
		v.prices[k] = v.h.Prices.Observe(ctx, r, s.InstanceType, v.now)
	}
	return v.prices[k]
}

// states are job j's configured regions as admission.ChooseRegion takes them: this region live,
// the others by a fresh summary, else unseen.
func (v *view) states(ctx context.Context, j jobs.Job) []admission.RegionState {
	var out []admission.RegionState
	for _, r := range j.Regions {
		if _, ok := v.h.Regions[r]; !ok {
			continue // no longer configured: no longer allowed
		}
		st := admission.RegionState{Region: r, Observed: v.observe(ctx, r, j.Spot), Room: true, Unseen: true, Closed: v.closed[r]}
		if r == v.region {
			st.Room, st.Queue, st.Unseen = v.flavors.Fits(v.free, v.flavors.Need(j)), v.queue, false
		} else if s, ok := v.sums[r]; ok && v.now.Sub(s.At) < summaryFresh {
			st.Room, st.Queue, st.Unseen = s.Room, s.Queue, false
			st.TenantFull = slices.Contains(s.TenantsFull, j.Tenant)
		}
		out = append(out, st)
	}
	return out
}

// tenantFullHere is states with region marked full for the job's tenant.
func tenantFullHere(states []admission.RegionState, region string) []admission.RegionState {
	out := slices.Clone(states)
	for i := range out {
		if out[i].Region == region {
			out[i].TenantFull = true
		}
	}
	return out
}

// settleRoaming records why each roaming job no region took waits, where it changed (or its
// choice is older than gateRefresh), keeps region's summary for other regions' drains, and wakes
// the regions it passed roaming jobs on to, and every other region of a roaming job that waits
// here for room: this drain has just said it has none.
//
// A region with no free room reads no roaming job (unread), so cannot know whether one allows
// it: it keeps its summary all the same, saying it has no room, one write a drain. roomLeft is
// the room (flavors.Region.Room) left after what d admits.
func (h *Handler) settleRoaming(ctx context.Context, region string, rm roaming, unread bool, roomLeft, queue int, d admission.FlavorDecision) error {
	if !rm.seen && !unread {
		return nil
	}
	now := h.now()
	var errs []error
	for _, j := range rm.waiting {
		c := rm.choices[j.ID]
		c.At = now.UTC()
		if j.PendingReason == c.Reason && j.RegionChoice != nil && sameChoice(*j.RegionChoice, c) &&
			(j.Spot == nil || now.Sub(j.RegionChoice.At) < gateRefresh) {
			continue
		}
		w := jobs.Wait(c.Reason, 0, nil, now)
		w.RegionChoice = &c
		if err := h.Store.Apply(ctx, j, w); err != nil && !errors.Is(err, records.ErrStale) {
			errs = append(errs, err)
		}
	}
	full := roomLeft <= 0
	var tenantsFull []string
	tenantOf := make(map[string]string, len(rm.mine))
	for _, j := range rm.mine {
		tenantOf[j.ID] = j.Tenant
	}
	for _, w := range d.Waiting {
		if t, ok := tenantOf[w.ID]; ok && admission.TenantReason(w.Reason) {
			tenantsFull = append(tenantsFull, t)
			if r := rm.elsewhere[w.ID]; r != "" {
				// It goes there, whose drain reads this summary saying its tenant is full here,
				// rather than wait for room its tenant has elsewhere.
				rm.ring[r] = true
			}
		}
		if w.Reason == admission.ReasonFlavorFull || w.Reason == admission.ReasonQueuedBehindHigherPriority {
			full = true
			for _, j := range rm.mine {
				if j.ID == w.ID {
					for _, r := range j.Regions {
						if r != region {
							rm.ring[r] = true
						}
					}
				}
			}
		}
	}
	slices.Sort(tenantsFull)
	sum := jobs.RegionSummary{Region: region, Room: !full, Queue: queue, At: now, TenantsFull: slices.Compact(tenantsFull)}
	errs = append(errs, h.Store.PutRegionSummary(ctx, sum))
	for r, ring := range rm.ring {
		if _, ok := h.Regions[r]; ring && ok && h.Ringer != nil && r != region {
			if err := h.Ringer.Ring(ctx, r); err != nil {
				// The beat's sweep rings every region while roaming jobs wait.
				h.Log.WarnContext(ctx, "ringing a region for a roaming job", "region", r, "err", err)
			}
		}
	}
	return errors.Join(errs...)
}

// sameChoice says whether a and b say the same of a job's regions: the region and reason, and
// for each region whether it is open, has room and why it was passed over. Queue lengths and
// prices move with every drain; a capped job's are written again every gateRefresh, as its
// spot_gate is, and an uncapped job's only when what they decide changes.
func sameChoice(a, b jobs.RegionChoice) bool {
	return a.Region == b.Region && a.Reason == b.Reason && slices.EqualFunc(a.Views, b.Views, func(x, y jobs.RegionOption) bool {
		return x.Region == y.Region && x.Open == y.Open && x.Room == y.Room && x.Wait == y.Wait && x.Unseen == y.Unseen
	})
}
