package admission

import (
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// AtDeadline is what a queued job's spot deadline makes of it at now.
type AtDeadline uint8

const (
	// Gated: the job is judged by its price as usual (no cap, no deadline, not yet at it, or its
	// price is within its cap, when it runs on spot as it asked).
	Gated AtDeadline = iota
	// OnDemand: the price still holds the job at its deadline, and it asked to run on demand: it
	// is a candidate without its cap, and its pods go to on-demand capacity.
	OnDemand
	// Fail: the price still holds the job at its deadline, and it asked to fail (or said nothing).
	Fail
)

// Deadline says what spot's deadline makes of its job at now, given the price observed for its
// instance type (a zero Observation when none was: an unknown price holds a job no longer than
// a known one above its cap). It only lifts the price gate: a job it makes a candidate still
// waits for its region's room and its tenant's share like any other.
func Deadline(spot *jobs.Spot, o spotgate.Observation, now time.Time) AtDeadline {
	if spot == nil || spot.Deadline == nil || now.Before(*spot.Deadline) || gate(spot, map[string]spotgate.Observation{spot.InstanceType: o}) == open {
		return Gated
	}
	if spot.OnDeadline == jobs.OnDeadlineOnDemand {
		return OnDemand
	}
	return Fail
}
