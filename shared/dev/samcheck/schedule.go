package samcheck

import (
	"maps"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/config"
)

// checkSchedule checks that the reconcile function has exactly one schedule, enabled, at
// shared/config.BeatInterval, and a timeout that covers the watch after each beat's pass.
func checkSchedule(t *Template) []Problem {
	fn, ok := t.CFN.GetAllServerlessFunctionResources()[reconciler]
	if !ok {
		return nil // checkFunctions reports it missing
	}
	want := beatSchedule()
	var ps []Problem
	var schedules []string
	for _, name := range slices.Sorted(maps.Keys(fn.Events)) {
		ev := fn.Events[name]
		if ev.Type != "Schedule" {
			continue
		}
		schedules = append(schedules, name)
		if ev.Properties == nil || ev.Properties.ScheduleEvent == nil {
			ps = append(ps, problem(RuleSchedule, reconciler, "event %s's properties are not a schedule goformation can read; give it Schedule: %s", name, want))
			continue
		}
		s := ev.Properties.ScheduleEvent
		if s.Schedule != want {
			ps = append(ps, problem(RuleSchedule, reconciler, "event %s runs at %q; the beat is %s (shared/config.BeatInterval), and jobs and hosts are followed at that pace", name, s.Schedule, want))
		}
		if s.Enabled != nil && !*s.Enabled {
			ps = append(ps, problem(RuleSchedule, reconciler, "event %s is disabled; without the beat, jobs are not followed and lost messages are not recovered", name))
		}
	}
	// The beat watches until config.WatchFor(BeatInterval) after it starts, and stops watchStop
	// (2 s, shared/reconcile) before its deadline: a shorter timeout cuts the watch short.
	if need := int((config.WatchFor(config.BeatInterval) + 2*time.Second).Seconds()); timeout(t, fn) < need {
		ps = append(ps, problem(RuleSchedule, reconciler, "Timeout is %d s; make it at least %d s, so the beat watches its default %d s (TIDEGATE_WATCH_SECONDS) and lets its lease go in time",
			timeout(t, fn), need, int(config.WatchFor(config.BeatInterval).Seconds())))
	}
	switch len(schedules) {
	case 0:
		ps = append(ps, problem(RuleSchedule, reconciler, "has no Schedule event; add one with Schedule: %s", want))
	case 1:
	default:
		ps = append(ps, problem(RuleSchedule, reconciler, "has %d Schedule events (%v); one beat is enough, the lease makes extra ones wait", len(schedules), schedules))
	}
	return ps
}
