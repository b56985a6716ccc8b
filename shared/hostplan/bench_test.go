package hostplan_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tidegate/tidegate/bench/hostplan/seedinput"
	"github.com/tidegate/tidegate/shared/hostplan"
)

// The host plan runs every beat over every hosted app, so it must stay close to the least any
// plan costs and grow linearly. Over the seed benchmark's cluster (../shared/bench/seed_plan_bench.py,
// mirrored by seedinput: N apps with five pods each) each benchmark reports, against floors
// measured in the same run and interleaved round by round so that both see the machine alike:
//
//   - x-index: Plan against grouping the same pods by app alone (Group, the index Plan builds
//     first); goal ≤ 3×.
//   - t20k/t10k (BenchmarkPlan20k): Plan over 20,000 apps against 10,000; linear is 2, goal ≤ 2.3.
//
// Each figure is the fastest round's: a neighbour's burst or a stray collection only ever slows a
// round, so the fastest is what the code itself costs. Each timed call follows an untimed one over
// the same input and a collection, so it finds its input in cache and owes no other call's garbage.

func BenchmarkPlan10k(b *testing.B) { benchPlan(b, 10_000, 0) }

func BenchmarkPlan20k(b *testing.B) { benchPlan(b, 20_000, 10_000) }

// BenchmarkGroup10k is the floor alone, for its absolute figure.
func BenchmarkGroup10k(b *testing.B) {
	in := seedinput.Build(10_000)
	b.ReportAllocs()
	for b.Loop() {
		hostplan.Group(in.Apps, in.Containers)
	}
}

func planOf(in seedinput.Input) func() {
	return func() { hostplan.Plan(in.Apps, in.Containers, in.Crashes, seedinput.Now) }
}

func groupOf(in seedinput.Input) func() {
	return func() { hostplan.Group(in.Apps, in.Containers) }
}

// fastest runs f once untimed, collects, then times f once, keeping the fastest time in best.
func fastest(best *time.Duration, f func()) {
	f()
	runtime.GC()
	start := time.Now()
	f()
	if t := time.Since(start); *best == 0 || t < *best {
		*best = t
	}
}

// benchPlan times Plan over n apps and, untimed by b after each round, Group over the same input
// and, when smaller is not 0, Plan and Group over smaller apps, and reports the ratios of the
// fastest rounds. Group's own growth is reported beside Plan's: what the machine's caches add as
// the input outgrows them, which no linear plan avoids.
func benchPlan(b *testing.B, n, smaller int) {
	in := seedinput.Build(n)
	plan, floor := planOf(in), groupOf(in)
	var smallPlan, smallFloor func()
	if smaller > 0 {
		small := seedinput.Build(smaller)
		smallPlan, smallFloor = planOf(small), groupOf(small)
	}
	var tPlan, tFloor, tSmallPlan, tSmallFloor time.Duration
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		plan()
		runtime.GC()
		b.StartTimer()
		start := time.Now()
		plan()
		if t := time.Since(start); tPlan == 0 || t < tPlan {
			tPlan = t
		}

		b.StopTimer()
		fastest(&tFloor, floor)
		if smaller > 0 {
			fastest(&tSmallPlan, smallPlan)
			fastest(&tSmallFloor, smallFloor)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(tPlan)/float64(tFloor), "x-index")
	if smaller > 0 {
		growth := fmt.Sprintf("t%dk/t%dk", n/1000, smaller/1000)
		b.ReportMetric(float64(tPlan)/float64(tSmallPlan), growth)
		b.ReportMetric(float64(tFloor)/float64(tSmallFloor), "index-"+growth)
	}
}
