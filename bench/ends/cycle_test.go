package main

import (
	"slices"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// TestIdlePairsEachEndWithTheStartThatTookItsRoom: at capacity 2, the first end's room is taken
// by the third start, the second's by the fourth.
func TestIdlePairsEachEndWithTheStartThatTookItsRoom(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := func(secs float64) time.Time { return t0.Add(time.Duration(secs * float64(time.Second))) }
	lives := map[string]life{
		"a": {running: s(0), ended: s(1)},
		"b": {running: s(0.5), ended: s(1.5)},
		"c": {running: s(3), ended: s(4)},
		"d": {running: s(2.5)},
	}
	got := idle(lives, 2)
	if want := []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}; !slices.Equal(got, want) {
		t.Errorf("idle = %v, want %v", got, want)
	}
}

// TestCycleChainsEachEndToTheNextClaim: an end's record is followed to the first ring after it,
// the first drain after that ring, and the first claim after that drain.
func TestCycleChainsEachEndToTheNextClaim(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	j := jobs.Job{ID: "a", Status: jobs.StatusSucceeded, StatusHistory: []jobs.Transition{
		{Status: jobs.StatusQueued, At: ms(0)}, {Status: jobs.StatusDispatching, At: ms(100)},
		{Status: jobs.StatusPending, At: ms(250)}, {Status: jobs.StatusRunning, At: ms(700)}, {Status: jobs.StatusSucceeded, At: ms(1900)},
	}}
	o := observed{
		lives:    map[string]life{"a": {created: ms(200), running: ms(600), ended: ms(1600), complete: ms(2600)}},
		records:  map[string]jobs.Job{"a": j},
		recorded: map[string]time.Time{"a": ms(2000)},
		rang:     []time.Time{ms(1000), ms(2010)},
		draining: []time.Time{ms(1500), ms(2100)},
		claims:   []time.Time{ms(100), ms(2300)},
	}
	var got []time.Duration
	for _, st := range cycle(o) {
		if len(st.takes) != 1 {
			t.Fatalf("step %q has %d times, want 1", st.name, len(st.takes))
		}
		got = append(got, st.takes[0])
	}
	want := []time.Duration{100, 400, 1000, 300, 100, 10, 90, 200, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(got, want) {
		t.Errorf("cycle's steps = %v, want %v", got, want)
	}
}
