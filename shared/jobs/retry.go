package jobs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Retry is a job's retry policy (API.md's retry): how many attempts it gets in all, which ends of
// an attempt are tried again, and how long it waits before each retry.
type Retry struct {
	// Attempts is how many times the job may run in all, the first included (as AWS Batch counts
	// them): 2 retries once. From 1 to MaxAttempts.
	Attempts int `json:"attempts" dynamodbav:"attempts"`
	// On lists what is retried: RetrySpotInterruption, RetryNodeFailure, RetryPodFailure, or
	// "exit:N" for a container that exited with code N.
	On []string `json:"on,omitempty" dynamodbav:"on,omitempty"`
	// Backoff is the wait before the first retry (a Go duration, 0 to MaxBackoff), doubling with
	// each further one up to MaxBackoff; "" is no wait.
	Backoff string `json:"backoff,omitempty" dynamodbav:"backoff,omitempty"`
	// CountSpotInterruptions makes a spot interruption use up an attempt like any other end. By
	// default it does not: the job did nothing wrong. Such retries are still bounded by
	// MaxSpotRetries, so a job cannot be retried forever.
	CountSpotInterruptions bool `json:"count_spot_interruptions,omitempty" dynamodbav:"count_spot_interruptions,omitempty"`
	// Rules decide by how an attempt ended, before On: the first that matches retries or fails it
	// (rules.go). An end no rule matches is retried if On lists it.
	Rules []RetryRule `json:"rules,omitempty" dynamodbav:"rules,omitempty"`
}

// What a retry policy's On may list besides "exit:N".
const (
	RetrySpotInterruption = "spot_interruption"
	RetryNodeFailure      = "node_failure"
	RetryPodFailure       = "pod_failure"
	retryExitPrefix       = "exit:"
)

const (
	// MaxAttempts bounds a policy's attempts: AWS Batch's own bound, and enough for any transient
	// cause; a job that fails ten times has a cause a retry does not mend.
	MaxAttempts = 10
	// MaxSpotRetries bounds the spot interruptions a job is retried after without counting them:
	// a job whose instance type keeps being reclaimed goes on paying for lost work otherwise.
	MaxSpotRetries = 10
	// MaxBackoff bounds a policy's backoff and the doubled waits: a retry an hour late is still
	// worth making, and a longer wait looks like a lost job.
	MaxBackoff = time.Hour
	// MaxKeptAttempts bounds the earlier attempts kept on a record (the newest ones), and
	// keptAttemptLines each one's last log lines, so a record stays far below DynamoDB's 400 KB.
	MaxKeptAttempts  = 5
	keptAttemptLines = 20
)

// ReasonRetrying starts the reason of the move that queues a job again for another attempt:
// "retrying: <cause>: <detail>".
const ReasonRetrying = "retrying"

// Check lists what is wrong with policy r, each as the field (under prefix, such as "retry")
// and the problem; nil when nothing is.
func (r Retry) Check(prefix string) [][2]string {
	var bad [][2]string
	if r.Attempts < 1 || r.Attempts > MaxAttempts {
		bad = append(bad, [2]string{prefix + ".attempts", fmt.Sprintf("must be a whole number from 1 to %d: the attempts in all, the first included", MaxAttempts)})
	}
	if len(r.On) == 0 && len(r.Rules) == 0 {
		bad = append(bad, [2]string{prefix + ".on", "required, unless rules are given: list what is retried (spot_interruption, node_failure, pod_failure or exit:N)"})
	}
	bad = append(bad, checkRules(prefix+".rules", r.Rules)...)
	if len(r.On) > 32 {
		bad = append(bad, [2]string{prefix + ".on", "at most 32 entries"})
	}
	for i, on := range r.On {
		if !validOn(on) {
			bad = append(bad, [2]string{fmt.Sprintf("%s.on[%d]", prefix, i), "must be spot_interruption, node_failure, pod_failure or exit:N with N from 1 to 255"})
		}
	}
	if r.Backoff != "" {
		if d, err := time.ParseDuration(r.Backoff); err != nil || d < 0 || d > MaxBackoff {
			bad = append(bad, [2]string{prefix + ".backoff", "must be a duration from 0s to 1h, such as 30s"})
		}
	}
	return bad
}

func validOn(on string) bool {
	switch on {
	case RetrySpotInterruption, RetryNodeFailure, RetryPodFailure:
		return true
	}
	n, ok := strings.CutPrefix(on, retryExitPrefix)
	code, err := strconv.Atoi(n)
	return ok && err == nil && code >= 1 && code <= 255 && strconv.Itoa(code) == n
}

// CauseKind is how an attempt ended, as the beat tells it from the job's pods and nodes.
type CauseKind string

const (
	// CauseSpotInterrupted: a pod's spot node was reclaimed (a DisruptionTarget condition, the
	// node's termination taint, or the node gone while the pod ran on spot capacity).
	CauseSpotInterrupted CauseKind = "spot_interrupted"
	// CauseNodeFailure: a pod's node went away or stopped being ready, not on spot capacity.
	CauseNodeFailure CauseKind = "node_failure"
	// CauseExit: a container exited with a non-zero code (Cause.ExitCode).
	CauseExit CauseKind = "exit"
	// CausePodFailure: a pod failed in any other way (killed, evicted, its Job gave up).
	CausePodFailure CauseKind = "pod_failure"
)

// Cause is how an attempt ended: its kind, the exit code for CauseExit, and what showed it.
type Cause struct {
	Kind     CauseKind
	ExitCode int32
	Detail   string
	// Kubernetes is what Kubernetes called the end, where it named it: a container's terminated
	// reason (OOMKilled), a pod's status reason (Evicted), a Job's failed condition's
	// (DeadlineExceeded). Retry rules match on it.
	Kubernetes string
}

// Code is the cause as a reason says it: spot_interrupted, node_failure, pod_failure or exit:N.
func (c Cause) Code() string {
	if c.Kind == CauseExit {
		return fmt.Sprintf("%s%d", retryExitPrefix, c.ExitCode)
	}
	return string(c.Kind)
}

// Reason is the cause as a status history's reason says it: the code, then what showed it.
func (c Cause) Reason() string {
	if c.Detail == "" {
		return c.Code()
	}
	return c.Code() + ": " + c.Detail
}

// covers reports whether policy r retries cause c. pod_failure covers every failed pod, an exit
// code's included; exit:N only that code.
func (r Retry) covers(c Cause) bool {
	switch c.Kind {
	case CauseSpotInterrupted:
		return slices.Contains(r.On, RetrySpotInterruption)
	case CauseNodeFailure:
		return slices.Contains(r.On, RetryNodeFailure)
	case CauseExit:
		return slices.Contains(r.On, RetryPodFailure) || slices.Contains(r.On, c.Code())
	case CausePodFailure:
		return slices.Contains(r.On, RetryPodFailure)
	}
	return false
}

// Verdict is what becomes of an attempt that ended with a cause: retried (with when the next
// attempt may start, and whether this one counted against the policy's attempts), or not, and why.
type Verdict struct {
	Retry     bool
	Counted   bool
	NotBefore time.Time
	Why       string
	// MemoryFactor is what the rule that retries an OOMKilled attempt raises memory by (0: none).
	MemoryFactor float64
	// Rule says what part of the policy decided: "rules[N]" (from 0) or "on"; "" for none.
	Rule string
}

// AttemptOf is the attempt job j is in, from 1 (records before retries have none stored).
func (j Job) AttemptOf() int { return max(j.Attempt, 1) }

// Decide says whether job j, whose current attempt ended at now with cause c, is tried again.
// Attempts that count are those not spent on an uncounted spot interruption or on pods not
// scheduled in time (gang.go); a spot interruption
// that does not count is still retried at most MaxSpotRetries times.
func Decide(j Job, c Cause, now time.Time) Verdict {
	r := j.Retry
	if r == nil {
		return Verdict{Why: "no retry policy"}
	}
	var factor float64
	decided := "on"
	if i, rule, ok := r.rule(c); ok {
		decided = fmt.Sprintf("rules[%d]", i)
		if rule.Action == RuleFail {
			return Verdict{Why: fmt.Sprintf("its retry rule %d fails %s", i+1, c.Code()), Rule: decided}
		}
		if c.Kubernetes == "OOMKilled" {
			factor = rule.MemoryFactor
		}
	} else if !r.covers(c) {
		return Verdict{Why: "its retry policy does not retry " + c.Code()}
	}
	counted := c.Kind != CauseSpotInterrupted || r.CountSpotInterruptions
	used := j.AttemptOf() - j.SpotRetries - j.ReadyTimeouts - j.Preemptions // attempts that counted, this one included
	switch {
	case !counted && j.SpotRetries >= MaxSpotRetries:
		return Verdict{Why: fmt.Sprintf("retried after %d spot interruptions, the most a job is", MaxSpotRetries), Rule: decided}
	case counted && used >= min(r.Attempts, MaxAttempts):
		return Verdict{Why: fmt.Sprintf("attempts used up (%d of %d)", used, r.Attempts), Rule: decided}
	}
	return Verdict{Retry: true, Counted: counted, NotBefore: now.Add(r.wait(j.AttemptOf())).UTC(), MemoryFactor: factor, Rule: decided}
}

// wait is the backoff before retry n (1 for the first): Backoff doubled n-1 times, at most MaxBackoff.
func (r Retry) wait(n int) time.Duration {
	d, err := time.ParseDuration(r.Backoff)
	if err != nil || d <= 0 {
		return 0
	}
	for i := 1; i < n && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// AttemptRecord is what is kept of an earlier attempt of a job: its number, how it ended and
// when, and where its pods ran, their last log lines and the containers that ended in error.
type AttemptRecord struct {
	Attempt   int            `json:"attempt" dynamodbav:"attempt"`
	Reason    string         `json:"reason" dynamodbav:"reason"`
	EndedAt   time.Time      `json:"ended_at" dynamodbav:"ended_at"`
	Placement map[string]any `json:"placement,omitempty" dynamodbav:"placement,omitempty"`
	LogTail   []string       `json:"log_tail,omitempty" dynamodbav:"log_tail,omitempty"`
	Exits     []Exit         `json:"exits,omitempty" dynamodbav:"exits,omitempty"`
}

// Retried is what the move that retries a job sets besides its status: the next attempt's
// number, the uncounted spot retries and ready timeouts so far, when it may start, and the
// earlier attempts kept.
type Retried struct {
	Attempt       int
	SpotRetries   int
	ReadyTimeouts int
	NotBefore     time.Time
	Attempts      []AttemptRecord
	Preemptions   int
	MemoryFactor  float64 // set when above 1
}

// Retrying is job j, whose attempt ended with cause c and verdict v (a retry), moved back to the
// queue at at for its next attempt: the move writes job.retrying with reason "retrying: <cause>",
// and keeps what the ended attempt left (kept: its placement, last lines and exits), the newest
// MaxKeptAttempts attempts only.
func Retrying(j Job, c Cause, v Verdict, kept AttemptRecord, at time.Time) (Job, Change, error) {
	if !v.Retry {
		return j, Change{}, fmt.Errorf("job %s: %w: a retry it is not owed (%s)", j.ID, ErrMove, v.Why)
	}
	next := j
	next.Attempt = j.AttemptOf() + 1
	if !v.Counted {
		next.SpotRetries++
	}
	if v.MemoryFactor > 1 {
		most := float64(MaxMemoryFactor)
		if j.MemoryFactorMax > 0 {
			most = min(most, j.MemoryFactorMax) // the policy's cap on a pod's memory
		}
		if raised := min(max(j.MemoryFactor, 1)*v.MemoryFactor, most); raised > max(j.MemoryFactor, 1) {
			next.MemoryFactor = raised
		}
	}
	kept.Attempt, kept.Reason, kept.EndedAt = j.AttemptOf(), c.Reason(), at.UTC()
	if len(kept.LogTail) > keptAttemptLines {
		kept.LogTail = kept.LogTail[len(kept.LogTail)-keptAttemptLines:]
	}
	all := append(slices.Clone(j.Attempts), kept)
	next.Attempts = all[max(0, len(all)-MaxKeptAttempts):]
	notBefore := v.NotBefore
	next.NotBefore = &notBefore
	moved, ch, err := Move(next, StatusQueued, ReasonRetrying+": "+c.Reason(), at)
	if err != nil {
		return j, Change{}, err
	}
	ch.Retried = &Retried{Attempt: next.Attempt, SpotRetries: next.SpotRetries, ReadyTimeouts: next.ReadyTimeouts, NotBefore: notBefore, Attempts: next.Attempts,
		Preemptions: next.Preemptions, MemoryFactor: next.MemoryFactor}
	return moved, ch, nil
}

// BackingOff reports whether queued job j waits out its retry's backoff at now.
func (j Job) BackingOff(now time.Time) bool {
	return j.NotBefore != nil && now.Before(*j.NotBefore)
}
