package samcheck

import (
	"maps"
	"slices"
)

// checkSchedule checks that the reconcile function has exactly one schedule, enabled, at
// shared/config.BeatInterval.
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
	switch len(schedules) {
	case 0:
		ps = append(ps, problem(RuleSchedule, reconciler, "has no Schedule event; add one with Schedule: %s", want))
	case 1:
	default:
		ps = append(ps, problem(RuleSchedule, reconciler, "has %d Schedule events (%v); one beat is enough, the lease makes extra ones wait", len(schedules), schedules))
	}
	return ps
}
