package admission

import (
	"cmp"
	"slices"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// RegionState is one of a roaming job's allowed regions as a drain sees it: the spot price of the
// job's instance type there (a zero Observation for a job without a cap), whether the region has
// room for another job, and how many jobs its own queue holds. Unseen marks a region whose room
// and queue are not known (its drain has said nothing lately): it is taken to have room, so that
// a job cheaper there is sent there (whose drain then says otherwise if it must), but at equal
// prices a region seen goes first, so two drains that each know only their own region never
// pass a job to each other.
//
// TenantFull marks a region where the job's own tenant has no room, though others may: its last
// drain held a job of that tenant there for the tenant's share or its long-running limit
// (TenantReason). The job is not sent there while another region has room for it.
type RegionState struct {
	Region     string
	Observed   spotgate.Observation
	Room       bool
	Queue      int
	Unseen     bool
	TenantFull bool
	// Closed, when set, is why the region admits nothing now (a RegionClosed reason): the job is
	// not sent there, whatever its price or room.
	Closed Reason
}

// Why a region admits nothing now, whatever its room: the reason its own queued jobs wait, and a
// roaming job's view of it (RegionOption.Wait).
const (
	// ReasonRegionCordoned: an operator cordoned it (`tidegate admin regions cordon`).
	ReasonRegionCordoned Reason = "region_cordoned"
	// ReasonRegionDraining: an operator is draining it; its running jobs are stopped and queued
	// again.
	ReasonRegionDraining Reason = "region_draining"
	// ReasonRegionUnreachable: the beat's last calls to its cluster failed.
	ReasonRegionUnreachable Reason = "region_unreachable"
	// ReasonRegionClearing: it came back after it was lost, and the attempts fenced there are
	// being deleted first.
	ReasonRegionClearing Reason = "region_clearing_fenced_attempts"
	// ReasonTenantHeld: the job's tenant is held (`tidegate admin tenants hold`): its jobs keep
	// their place and none is dispatched.
	ReasonTenantHeld Reason = "tenant_held"
	// ReasonNoRegionAdmitting: every region the job allows admits nothing now.
	ReasonNoRegionAdmitting Reason = "no_allowed_region_admitting"
)

// TenantReason says whether a job waits for a reason that is its tenant's alone in the region (its
// share, its long-running limit), so that another region may well have room for it.
func TenantReason(r Reason) bool {
	return r == ReasonTenantQuotaExhausted || r == ReasonSlotlessLimit
}

// Why a roaming job went to a region (RegionChoice.Reason with Region set), why it waits for one
// (without), and why each other region was passed over (RegionOption.Wait).
const (
	RegionOnly          = "only_open_region_with_room"
	RegionLowestPrice   = "lowest_price"
	RegionShortestQueue = "shortest_queue_at_lowest_price"
	RegionFirstByName   = "first_by_name_at_lowest_price_and_queue"
	RegionSeen          = "seen_lately_at_lowest_price"

	ReasonNoRegionOpen     Reason = "no_allowed_region_open"
	ReasonNoRegionWithRoom Reason = "no_allowed_region_with_room"

	WaitNoRoom      = "no_room"
	WaitTenantFull  = "no_room_for_tenant"
	WaitHigherPrice = "higher_price"
	WaitLongerQueue = "longer_queue"
	WaitLaterByName = "later_by_name"
	WaitUnseen      = "not_seen_lately"
)

// ChooseRegion picks, for a job capped by spot (nil for none), the region it should run in among
// states: the cheapest whose gate is open and which has room, ties going to the shorter queue,
// then to the region that sorts first, so every drain that sees the same states picks the same
// region. onDemand lifts the gate (the job's spot deadline passed): every region is open and
// price plays no part. A job without a cap has no price to compare either.
//
// With no region open the choice has no Region and the reason ReasonNoRegionOpen; with some open
// but none with room, ReasonNoRegionWithRoom. Each state's view says why it was passed over.
func ChooseRegion(spot *jobs.Spot, states []RegionState, onDemand bool) jobs.RegionChoice {
	priced := spot != nil && !onDemand
	views := make([]jobs.RegionOption, len(states))
	var fit []int // the open regions with room
	anyOpen, anyAdmitting := false, false
	for i, s := range states {
		v := jobs.RegionOption{Region: s.Region, Room: s.Room, Queue: s.Queue, Open: true, Unseen: s.Unseen}
		if spot != nil && s.Observed.Known {
			p := s.Observed.Price
			v.Price = &p
		}
		if s.Closed != "" {
			v.Room, v.Wait = false, string(s.Closed)
			views[i] = v
			continue
		}
		anyAdmitting = true
		if priced {
			if g := gate(spot, map[string]spotgate.Observation{spot.InstanceType: s.Observed}); g != open {
				v.Open, v.Wait = false, string(verdictReasons[g])
			}
		}
		anyOpen = anyOpen || v.Open
		switch {
		case v.Open && !s.Room:
			v.Wait = WaitNoRoom
		case v.Open && s.TenantFull:
			v.Room, v.Wait = false, WaitTenantFull
		case v.Open:
			fit = append(fit, i)
		}
		views[i] = v
	}
	price := func(i int) float64 {
		if !priced {
			return 0
		}
		return states[i].Observed.Price
	}
	slices.SortFunc(fit, func(a, b int) int {
		return cmp.Or(cmp.Compare(price(a), price(b)), compareBool(states[a].Unseen, states[b].Unseen),
			cmp.Compare(states[a].Queue, states[b].Queue), cmp.Compare(states[a].Region, states[b].Region))
	})
	c := jobs.RegionChoice{Views: views}
	switch {
	case len(fit) == 0 && !anyAdmitting && len(states) > 0:
		c.Reason = string(ReasonNoRegionAdmitting)
		return c
	case len(fit) == 0 && !anyOpen:
		c.Reason = string(ReasonNoRegionOpen)
		return c
	case len(fit) == 0:
		c.Reason = string(ReasonNoRegionWithRoom)
		return c
	}
	best := fit[0]
	c.Region, c.Reason = states[best].Region, RegionOnly
	for k, i := range fit[1:] {
		why := WaitLaterByName
		switch {
		case price(i) > price(best):
			why = WaitHigherPrice
		case states[i].Unseen && !states[best].Unseen:
			why = WaitUnseen
		case states[i].Queue > states[best].Queue:
			why = WaitLongerQueue
		}
		views[i].Wait = why
		if k == 0 { // the runner-up says what decided
			c.Reason = map[string]string{WaitHigherPrice: RegionLowestPrice, WaitUnseen: RegionSeen, WaitLongerQueue: RegionShortestQueue, WaitLaterByName: RegionFirstByName}[why]
		}
	}
	return c
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
