package main

import (
	"slices"
	"sort"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// step is one part of a slot's cycle, with how long it took each job that went through it.
type step struct {
	name  string
	takes []time.Duration
}

// observed is what a run saw of each job, by id: its objects' lives as the run's watches saw
// them, its record's status history, and the time its end was written (the stack's log).
type observed struct {
	lives    map[string]life
	records  map[string]jobs.Job
	recorded map[string]time.Time
	// rang, draining and claims are the times dispatch was rung for the region, a drain began, and
	// a job was claimed, each sorted.
	rang, draining, claims []time.Time
}

// cycle breaks a slot's cycle into its steps, from a job's claim to the claim of the job that
// takes its room: the apply, the scheduler and kwok, the pod's own run, the watch and the record,
// the ring, the drain's start and its reads before it claims; and, beside them, the Job
// controller's verdict, which an end no longer waits for where the pod's success decides the Job.
// A step with no time at either end (a ring the run never saw, say) is left out for that job.
func cycle(o observed) []step {
	steps := []step{
		{name: "claim → Job made (the apply)"},
		{name: "Job made → pod Running (scheduler, kwok)"},
		{name: "pod Running → pod ended (the job's own run)"},
		{name: "pod ended → end's status (watch event, record read)"},
		{name: "end's status → end written (details read, the write)"},
		{name: "end written → dispatch rung"},
		{name: "rung → drain begins (the queue, the poller)"},
		{name: "drain begins → next claim (the drain's reads)"},
	}
	controller := step{name: "beside: pod ended → Job's Complete condition (the Job controller)"}
	for id, l := range o.lives {
		j, ok := o.records[id]
		if !ok {
			continue
		}
		claimed, ended := statusAt(j, jobs.StatusDispatching), statusAt(j, j.Status)
		written := o.recorded[id]
		rung := after(o.rang, written)
		began := after(o.draining, rung)
		marks := []time.Time{claimed, l.created, l.running, l.ended, ended, written, rung, began, after(o.claims, began)}
		for i := range steps {
			if !marks[i].IsZero() && !marks[i+1].IsZero() {
				steps[i].takes = append(steps[i].takes, marks[i+1].Sub(marks[i]))
			}
		}
		if !l.ended.IsZero() && !l.complete.IsZero() {
			controller.takes = append(controller.takes, l.complete.Sub(l.ended))
		}
	}
	return append(steps, controller)
}

// idle is how long each slot stood empty: from a pod's end to the start of the pod that took its
// room, pairing the k-th pod end with the (capacity+k)-th pod start.
func idle(lives map[string]life, capacity int) []time.Duration {
	var ends, starts []time.Time
	for _, l := range lives {
		if !l.ended.IsZero() {
			ends = append(ends, l.ended)
		}
		if !l.running.IsZero() {
			starts = append(starts, l.running)
		}
	}
	slices.SortFunc(ends, time.Time.Compare)
	slices.SortFunc(starts, time.Time.Compare)
	var out []time.Duration
	for k := 0; k < len(ends) && capacity+k < len(starts); k++ {
		out = append(out, starts[capacity+k].Sub(ends[k]))
	}
	return out
}

// statusAt is when j's history first shows status s, zero if never.
func statusAt(j jobs.Job, s jobs.Status) time.Time {
	for _, t := range j.StatusHistory {
		if t.Status == s {
			return t.At
		}
	}
	return time.Time{}
}

// after is the first of sorted at or after t, zero if none or t is zero.
func after(sorted []time.Time, t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	i := sort.Search(len(sorted), func(i int) bool { return !sorted[i].Before(t) })
	if i == len(sorted) {
		return time.Time{}
	}
	return sorted[i]
}

// mean is the mean of ds, 0 for none.
func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}
