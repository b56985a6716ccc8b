package main

import (
	"math"
	"time"

	"github.com/tidegate/tidegate/shared/dev/awscalls"
)

// perJob is a run's calls divided by its jobs, the reconcile function's less what its beats
// would have made with no job at all (idle beats' mean, times the run's beats): the beat runs
// every minute whether jobs come or not, so that part is no job's.
func perJob(m measured) map[awscalls.Key]rate {
	idleBeats := float64(m.idleInvocations["reconcile"].Count)
	out := map[awscalls.Key]rate{}
	for k, t := range m.run {
		calls, r, w := float64(t.Calls), t.ReadUnits, t.WriteUnits
		if i, ok := m.idle[k]; ok && k.Function == "reconcile" && idleBeats > 0 {
			share := float64(m.beats) / idleBeats
			calls = math.Max(0, calls-float64(i.Calls)*share)
			r = math.Max(0, r-i.ReadUnits*share)
			w = math.Max(0, w-i.WriteUnits*share)
		}
		n := float64(m.jobs)
		out[k] = rate{calls: calls / n, read: r / n, write: w / n}
	}
	return out
}

// rate is calls, and the DynamoDB read and write units they consumed, per job.
type rate struct{ calls, read, write float64 }

// gbSeconds is the GB-seconds function's invocations were billed, each rounded up to the
// millisecond as Lambda bills them, at memoryMB.
func gbSeconds(inv awscalls.Invocations, memoryMB int) float64 {
	var ms float64
	for _, d := range inv.Durations {
		ms += math.Ceil(float64(d) / float64(time.Millisecond))
	}
	return ms / 1000 * float64(memoryMB) / 1024
}

// lambdaPerJob is each function's invocations and GB-seconds per job. The beat's are what its run
// beats took beyond idle ones, and no invocation: the schedule invokes it whatever the jobs.
func lambdaPerJob(m measured, memory map[string]int) (invocations, gbs map[string]float64) {
	invocations, gbs = map[string]float64{}, map[string]float64{}
	n := float64(m.jobs)
	for _, f := range functionNames {
		inv := m.invocations[f]
		g := gbSeconds(inv, memory[f])
		if f == "reconcile" {
			if idle := m.idleInvocations[f]; idle.Count > 0 {
				g = math.Max(0, g-gbSeconds(idle, memory[f])*float64(inv.Count)/float64(idle.Count))
			}
			invocations[f] = 0
		} else {
			invocations[f] = float64(inv.Count) / n
		}
		gbs[f] = g / n
	}
	return invocations, gbs
}
