package admission

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

func TestChooseRegion(t *testing.T) {
	capped := &jobs.Spot{InstanceType: "g5.xlarge", MaxPrice: 0.6}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	seen := func(p float64) spotgate.Observation {
		return spotgate.Observation{InstanceType: "g5.xlarge", Price: p, Known: true, CheckedAt: at}
	}
	price := func(p float64) *float64 { return &p }
	east, west := "us-east-1", "us-west-2"
	tests := []struct {
		name     string
		spot     *jobs.Spot
		onDemand bool
		states   []RegionState
		want     jobs.RegionChoice
	}{{
		name:   "the cheaper open region with room",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.5), Room: true}, {Region: west, Observed: seen(0.3), Room: true}},
		want: jobs.RegionChoice{Region: west, Reason: RegionLowestPrice, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.5), Open: true, Room: true, Wait: WaitHigherPrice},
			{Region: west, Price: price(0.3), Open: true, Room: true},
		}},
	}, {
		name:   "the cheaper region at capacity: the other",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.5), Room: true}, {Region: west, Observed: seen(0.3), Queue: 4}},
		want: jobs.RegionChoice{Region: east, Reason: RegionOnly, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.5), Open: true, Room: true},
			{Region: west, Price: price(0.3), Open: true, Queue: 4, Wait: WaitNoRoom},
		}},
	}, {
		name:   "the cheaper region full for the job's tenant: the other",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.5), Room: true}, {Region: west, Observed: seen(0.3), Room: true, TenantFull: true}},
		want: jobs.RegionChoice{Region: east, Reason: RegionOnly, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.5), Open: true, Room: true},
			{Region: west, Price: price(0.3), Open: true, Wait: WaitTenantFull},
		}},
	}, {
		name:   "every region full for the job's tenant: it waits for room",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.5), Room: true, TenantFull: true}, {Region: west, Observed: seen(0.3), Room: true, TenantFull: true}},
		want: jobs.RegionChoice{Reason: string(ReasonNoRegionWithRoom), Views: []jobs.RegionOption{
			{Region: east, Price: price(0.5), Open: true, Wait: WaitTenantFull},
			{Region: west, Price: price(0.3), Open: true, Wait: WaitTenantFull},
		}},
	}, {
		name:   "the cheaper region above the cap: the other",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.7), Room: true}, {Region: west, Observed: seen(0.5), Room: true}},
		want: jobs.RegionChoice{Region: west, Reason: RegionOnly, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.7), Room: true, Wait: string(ReasonSpotPriceAboveCap)},
			{Region: west, Price: price(0.5), Open: true, Room: true},
		}},
	}, {
		name:   "equal prices: the shorter queue",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.3), Room: true, Queue: 3}, {Region: west, Observed: seen(0.3), Room: true, Queue: 1}},
		want: jobs.RegionChoice{Region: west, Reason: RegionShortestQueue, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.3), Open: true, Room: true, Queue: 3, Wait: WaitLongerQueue},
			{Region: west, Price: price(0.3), Open: true, Room: true, Queue: 1},
		}},
	}, {
		name:   "no cap: the shorter queue, then the name",
		states: []RegionState{{Region: west, Room: true}, {Region: east, Room: true}},
		want: jobs.RegionChoice{Region: east, Reason: RegionFirstByName, Views: []jobs.RegionOption{
			{Region: west, Open: true, Room: true, Wait: WaitLaterByName},
			{Region: east, Open: true, Room: true},
		}},
	}, {
		name:   "no region open: an unknown price holds as a high one does",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.9), Room: true}, {Region: west, Room: true}},
		want: jobs.RegionChoice{Reason: string(ReasonNoRegionOpen), Views: []jobs.RegionOption{
			{Region: east, Price: price(0.9), Room: true, Wait: string(ReasonSpotPriceAboveCap)},
			{Region: west, Room: true, Wait: string(ReasonSpotPriceUnknown)},
		}},
	}, {
		name:   "open regions, none with room",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.9)}, {Region: west, Observed: seen(0.3)}},
		want: jobs.RegionChoice{Reason: string(ReasonNoRegionWithRoom), Views: []jobs.RegionOption{
			{Region: east, Price: price(0.9), Wait: string(ReasonSpotPriceAboveCap)},
			{Region: west, Price: price(0.3), Open: true, Wait: WaitNoRoom},
		}},
	}, {
		name:     "on demand past the deadline: price plays no part",
		spot:     capped,
		onDemand: true,
		states:   []RegionState{{Region: east, Observed: seen(0.9), Room: true, Queue: 1}, {Region: west, Observed: seen(0.95), Room: true}},
		want: jobs.RegionChoice{Region: west, Reason: RegionShortestQueue, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.9), Open: true, Room: true, Queue: 1, Wait: WaitLongerQueue},
			{Region: west, Price: price(0.95), Open: true, Room: true},
		}},
	}, {
		name:   "equal prices: a region seen lately before one not, whatever the queues",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.3), Room: true, Queue: 9}, {Region: west, Observed: seen(0.3), Room: true, Unseen: true}},
		want: jobs.RegionChoice{Region: east, Reason: RegionSeen, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.3), Open: true, Room: true, Queue: 9},
			{Region: west, Price: price(0.3), Open: true, Room: true, Unseen: true, Wait: WaitUnseen},
		}},
	}, {
		name:   "a cheaper region not seen lately is taken to have room",
		spot:   capped,
		states: []RegionState{{Region: east, Observed: seen(0.5), Room: true}, {Region: west, Observed: seen(0.3), Room: true, Unseen: true}},
		want: jobs.RegionChoice{Region: west, Reason: RegionLowestPrice, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.5), Open: true, Room: true, Wait: WaitHigherPrice},
			{Region: west, Price: price(0.3), Open: true, Room: true, Unseen: true},
		}},
	}, {
		name: "a closed region is passed over, however cheap",
		spot: capped,
		states: []RegionState{{Region: east, Observed: seen(0.2), Room: true, Closed: ReasonRegionCordoned},
			{Region: west, Observed: seen(0.5), Room: true}},
		want: jobs.RegionChoice{Region: west, Reason: RegionOnly, Views: []jobs.RegionOption{
			{Region: east, Price: price(0.2), Open: true, Wait: string(ReasonRegionCordoned)},
			{Region: west, Price: price(0.5), Open: true, Room: true},
		}},
	}, {
		name: "every region closed: none admitting, not none open",
		spot: capped,
		states: []RegionState{{Region: east, Observed: seen(0.9), Room: true, Closed: ReasonRegionUnreachable},
			{Region: west, Observed: seen(0.2), Room: true, Closed: ReasonRegionDraining}},
		want: jobs.RegionChoice{Reason: string(ReasonNoRegionAdmitting), Views: []jobs.RegionOption{
			{Region: east, Price: price(0.9), Open: true, Wait: string(ReasonRegionUnreachable)},
			{Region: west, Price: price(0.2), Open: true, Wait: string(ReasonRegionDraining)},
		}},
	}, {
		name:   "none allowed",
		spot:   capped,
		states: nil,
		want:   jobs.RegionChoice{Reason: string(ReasonNoRegionOpen), Views: []jobs.RegionOption{}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChooseRegion(tt.spot, tt.states, tt.onDemand)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChooseRegion(%v) (-want +got):\n%s", tt.states, diff)
			}
		})
	}
}

// TestChooseRegionIgnoresOrder: every drain that sees the same regions picks the same one,
// whatever order it lists them in.
func TestChooseRegionIgnoresOrder(t *testing.T) {
	spot := &jobs.Spot{InstanceType: "m5.large", MaxPrice: 1}
	states := []RegionState{
		{Region: "a", Observed: spotgate.Observation{Price: 0.4, Known: true}, Room: true, Queue: 2},
		{Region: "b", Observed: spotgate.Observation{Price: 0.4, Known: true}, Room: true, Queue: 2},
		{Region: "c", Observed: spotgate.Observation{Price: 0.4, Known: true}, Room: true, Queue: 1},
		{Region: "d", Observed: spotgate.Observation{Price: 0.2, Known: true}},
	}
	want := ChooseRegion(spot, states, false).Region
	for i := range states {
		rotated := append(append([]RegionState(nil), states[i:]...), states[:i]...)
		if got := ChooseRegion(spot, rotated, false).Region; got != want {
			t.Errorf("ChooseRegion of %v chose %s, of the same in another order %s", rotated, got, want)
		}
	}
	if want != "c" {
		t.Errorf("ChooseRegion chose %s, want c (the shortest queue among the cheapest with room)", want)
	}
}
