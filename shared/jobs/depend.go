package jobs

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Dependency is one job another waits for, and the end it waits for: the dependent stays
// blocked until every one of its dependencies has ended as its condition asks, and is cancelled
// (ReasonDependencyNotMet) as soon as one has ended otherwise. A retry or an eviction is no end:
// the dependency is queued again, and the dependent keeps waiting.
//
// Mode ModeNToN, between two arrays of one size, makes child i of the dependent array wait for
// child i of the array it names, rather than the whole array for the whole array.
type Dependency struct {
	Job  string    `json:"job" dynamodbav:"job"`
	On   Condition `json:"on" dynamodbav:"on"`
	Mode string    `json:"mode,omitempty" dynamodbav:"mode,omitempty"`
}

// ModeNToN is the mode of an array's dependency on another array, child by child.
const ModeNToN = "n_to_n"

// Condition is the end a dependency must come to.
type Condition string

const (
	OnSucceeded Condition = "succeeded"
	OnFailed    Condition = "failed"
	OnEnded     Condition = "ended" // any end: succeeded, failed or cancelled
)

// MaxDependencies bounds a job's depends_on.
const MaxDependencies = 50

// Why a job waits for, is released by or is cancelled by its dependencies.
const (
	// ReasonWaitingForDependencies is a blocked job's pending reason; WaitingOn names them.
	ReasonWaitingForDependencies = "waiting_for_dependencies"
	// ReasonDependenciesMet is the reason of a blocked job's move to queued.
	ReasonDependenciesMet = "dependencies_met"
	// ReasonDependencyNotMet starts the reason of a blocked job cancelled because a dependency
	// ended otherwise than it asked: "dependency_not_met: job-… failed".
	ReasonDependencyNotMet = "dependency_not_met"
)

// ParseCondition reads a condition; "" is OnSucceeded, as AWS Batch's and Argo's default.
func ParseCondition(s string) (Condition, bool) {
	switch c := Condition(s); c {
	case "":
		return OnSucceeded, true
	case OnSucceeded, OnFailed, OnEnded:
		return c, true
	}
	return "", false
}

// Outcome is what a dependency in status s means for a job waiting on c: met, or not met for
// good (final), or neither yet.
func (c Condition) Outcome(s Status) (met, final bool) {
	if !s.Terminal() {
		return false, false
	}
	switch c {
	case OnSucceeded:
		return s == StatusSucceeded, true
	case OnFailed:
		return s == StatusFailed, true
	}
	return true, true
}

// CheckDependencies lists what is wrong with a depends_on as submitted (each problem as a field
// path and what to fix), and answers it with the default condition filled in and a job named
// twice refused.
func CheckDependencies(ds []Dependency) ([]Dependency, [][2]string) {
	if len(ds) > MaxDependencies {
		return nil, [][2]string{{"depends_on", fmt.Sprintf("at most %d jobs; for more, make the jobs an array or a workflow", MaxDependencies)}}
	}
	var bad [][2]string
	out := make([]Dependency, 0, len(ds))
	seen := map[string]bool{}
	for i, d := range ds {
		field := fmt.Sprintf("depends_on[%d]", i)
		c, ok := ParseCondition(string(d.On))
		switch {
		case strings.TrimSpace(d.Job) == "":
			bad = append(bad, [2]string{field + ".job", "required: the id of a job of yours"})
		case seen[d.Job]:
			bad = append(bad, [2]string{field + ".job", fmt.Sprintf("%s is named twice; name each job once", d.Job)})
		case !ok:
			bad = append(bad, [2]string{field + ".on", fmt.Sprintf("must be %s, %s or %s", OnSucceeded, OnFailed, OnEnded)})
		case d.Mode != "" && d.Mode != ModeNToN:
			bad = append(bad, [2]string{field + ".mode", fmt.Sprintf("must be %s (child i waits for child i of that array) or left out", ModeNToN)})
		}
		seen[d.Job] = true
		out = append(out, Dependency{Job: d.Job, On: c, Mode: d.Mode})
	}
	return out, bad
}

// Settle is what a job submitted with dependencies ds starts as, given the statuses its
// dependencies are in now (by id; each is there): blocked, waiting on those not ended yet;
// queued when all have ended as asked; or cancelled, with its reason, when one has ended
// otherwise.
func Settle(ds []Dependency, statuses map[string]Status) (status Status, waiting []string, reason string) {
	for _, d := range ds {
		met, final := d.On.Outcome(statuses[d.Job])
		switch {
		case final && !met:
			return StatusCancelled, nil, NotMet(d, statuses[d.Job])
		case !final:
			waiting = append(waiting, d.Job)
		}
	}
	if len(waiting) > 0 {
		return StatusBlocked, waiting, ReasonWaitingForDependencies
	}
	return StatusQueued, nil, ""
}

// NotMet is the reason a dependent is cancelled when dependency d ended in status s.
func NotMet(d Dependency, s Status) string {
	return fmt.Sprintf("%s: %s %s, not %s", ReasonDependencyNotMet, d.Job, s, d.On)
}

// DependencyOn is j's dependency on job id, and whether it has one.
func (j Job) DependencyOn(id string) (Dependency, bool) {
	i := slices.IndexFunc(j.DependsOn, func(d Dependency) bool { return d.Job == id })
	if i < 0 {
		return Dependency{}, false
	}
	return j.DependsOn[i], true
}

// Block makes new job j wait for its dependencies: status, pending reason and the first entry of
// its history as Settle left them (a job settled queued is left as it is).
func Block(j Job, status Status, waiting []string, reason string, at time.Time) Job {
	if status == StatusQueued {
		return j
	}
	j.Status, j.WaitingOn = status, waiting
	if status == StatusBlocked {
		j.PendingReason = reason
	}
	j.StatusHistory = []Transition{{Status: status, At: at.UTC(), Reason: reasonOfEntry(status, reason)}}
	return j
}

// reasonOfEntry is the history entry's reason of a job that starts blocked (none: its pending
// reason says why) or cancelled (why).
func reasonOfEntry(status Status, reason string) string {
	if status == StatusCancelled {
		return reason
	}
	return ""
}

// Split parts an array's dependencies into those of the array as a whole and those child by
// child (ModeNToN).
func Split(ds []Dependency) (whole, byChild []Dependency) {
	for _, d := range ds {
		if d.Mode == ModeNToN {
			byChild = append(byChild, d)
		} else {
			whole = append(whole, d)
		}
	}
	return whole, byChild
}
