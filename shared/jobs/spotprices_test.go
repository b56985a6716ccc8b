package jobs

import (
	"testing"
	"time"
)

func TestPriceSlotRingsRound(t *testing.T) {
	step := 5 * time.Minute
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if PriceSlot(t0, step) != PriceSlot(t0.Add(4*time.Minute), step) {
		t.Error("two points within one step went to different slots")
	}
	if PriceSlot(t0, step) == PriceSlot(t0.Add(step), step) {
		t.Error("points a step apart went to one slot")
	}
	if PriceSlot(t0, step) != PriceSlot(t0.Add(PriceSlots*step), step) {
		t.Error("a point a whole ring later went to another slot, so the ring grows")
	}
	seen := map[int]bool{}
	for i := range 3 * PriceSlots {
		s := PriceSlot(t0.Add(time.Duration(i)*step), step)
		if s < 0 || s >= PriceSlots {
			t.Fatalf("slot %d is outside the ring", s)
		}
		seen[s] = true
	}
	if len(seen) != PriceSlots {
		t.Errorf("a day of steps used %d slots, want %d", len(seen), PriceSlots)
	}
	if PriceSlot(t0, 0) != PriceSlot(t0, DefaultPriceStep) {
		t.Error("no step is not the default step")
	}
}

func TestPriceHistoryDropsAnEarlierTurn(t *testing.T) {
	step := 10 * time.Second
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	old := now.Add(-PriceSlots*step - time.Second)
	slots := map[int]PricePoint{
		1: {At: now.Add(-time.Minute), Price: 0.5},
		2: {At: now.Add(-2 * time.Minute), Price: 0.4},
		3: {At: old, Price: 9},
		4: {At: now.Add(time.Hour), Price: 8}, // a clock ahead of this one's
	}
	got := PriceHistory(slots, step, now)
	if len(got) != 2 || got[0].Price != 0.4 || got[1].Price != 0.5 {
		t.Fatalf("history = %+v, want 0.4 then 0.5 (the earlier turn's and the future point left out)", got)
	}
}

func TestSpotTypesOfQueuedJobs(t *testing.T) {
	spot := func(typ string, p float64) *Spot { return &Spot{InstanceType: typ, MaxPrice: p} }
	js := []Job{
		{ID: "a", Status: StatusQueued, Spot: spot("p4d.24xlarge", 9)},
		{ID: "b", Status: StatusQueued, Spot: spot("g5.xlarge", 0.3)},
		{ID: "c", Status: StatusQueued, Spot: spot("g5.xlarge", 0.2)},
		{ID: "d", Status: StatusRunning, Spot: spot("m5.large", 0.1)},
		{ID: "e", Status: StatusQueued},
	}
	if types := SpotTypes(js); len(types) != 2 || types[0] != "g5.xlarge" || types[1] != "p4d.24xlarge" {
		t.Errorf("SpotTypes = %v, want g5.xlarge and p4d.24xlarge, sorted (a running job's type left out)", types)
	}
}
