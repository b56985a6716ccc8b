package jobs

import (
	"strings"
	"testing"
	"time"
)

// TestRetryRules: the first rule that matches how an attempt ended decides; an end no rule
// matches is retried as On says; an OOMKilled rule's memory factor reaches the next attempt,
// multiplied and bounded; preempted and pods_not_ready rules fail what would queue again.
func TestRetryRules(t *testing.T) {
	now := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	policy := &Retry{Attempts: 5, On: []string{RetrySpotInterruption}, Rules: []RetryRule{
		{On: []string{"exit:3"}, Action: RuleFail},
		{On: []string{RuleOOMKilled}, Action: RuleRetry, MemoryFactor: 1.5},
		{On: []string{RetryPodFailure}, Action: RuleRetry},
		{On: []string{"exit:3", RuleEvicted}, Action: RuleRetry}, // after the fail rule: never reached for exit:3
	}}
	j := Job{ID: "job-1", Status: StatusRunning, Retry: policy}
	oom := Cause{Kind: CauseExit, ExitCode: 137, Kubernetes: "OOMKilled"}
	for _, tt := range []struct {
		name   string
		cause  Cause
		retry  bool
		factor float64
	}{
		{"exit 3, failed by the first rule before the later one that retries it", Cause{Kind: CauseExit, ExitCode: 3}, false, 0},
		{"OOMKilled, retried with more memory", oom, true, 1.5},
		{"exit 1, retried as a pod failure", Cause{Kind: CauseExit, ExitCode: 1}, true, 0},
		{"evicted, a pod failure by the third rule", Cause{Kind: CausePodFailure, Kubernetes: "Evicted"}, true, 0},
		{"a spot interruption, no rule: On retries it", Cause{Kind: CauseSpotInterrupted}, true, 0},
		{"a node failure, no rule, not in On", Cause{Kind: CauseNodeFailure}, false, 0},
	} {
		v := Decide(j, tt.cause, now)
		if v.Retry != tt.retry || v.MemoryFactor != tt.factor {
			t.Errorf("%s: %+v; want retry %v, memory factor %v", tt.name, v, tt.retry, tt.factor)
		}
	}

	moved, c, err := Retrying(j, oom, Decide(j, oom, now), AttemptRecord{}, now)
	if err != nil || moved.MemoryFactor != 1.5 || c.Retried.MemoryFactor != 1.5 {
		t.Fatalf("Retrying after OOMKilled = factor %v (change %v), %v; want 1.5", moved.MemoryFactor, c.Retried, err)
	}
	moved.Status = StatusRunning
	for range 4 {
		moved, _, _ = Retrying(moved, oom, Decide(moved, oom, now), AttemptRecord{}, now)
		moved.Status = StatusRunning
	}
	if moved.MemoryFactor != MaxMemoryFactor {
		t.Errorf("after five OOMKilled attempts the factor is %v; want it held at %d", moved.MemoryFactor, MaxMemoryFactor)
	}

	failing := Job{ID: "job-2", Status: StatusRunning, Retry: &Retry{Attempts: 2, Rules: []RetryRule{{On: []string{RulePreempted, RulePodsNotReady}, Action: RuleFail}}}}
	if moved, c, err := Preempted(failing, "reclaimed", AttemptRecord{}, now); err != nil || moved.Status != StatusFailed || !strings.Contains(c.Reason, "rule 1 fails preempted") {
		t.Errorf("Preempted under a rule failing preempted = %s %q, %v; want failed, naming the rule", moved.Status, c.Reason, err)
	}
	if _, fail := failing.Fails(RulePodsNotReady); !fail {
		t.Errorf("Fails(pods_not_ready) under a rule failing it = false")
	}
	if _, fail := j.Fails(RulePreempted); fail {
		t.Errorf("Fails(preempted) with no rule naming it = true")
	}
}

// TestRetryRulesChecked: each malformed rule is named by its field.
func TestRetryRulesChecked(t *testing.T) {
	r := Retry{Attempts: 2, Rules: []RetryRule{
		{On: []string{"OOMKilled"}, Action: "maybe"},
		{On: []string{"exit:0", "Sunburn"}, Action: RuleRetry},
		{On: []string{"exit:1"}, Action: RuleRetry, MemoryFactor: 2},
		{On: []string{"OOMKilled"}, Action: RuleRetry, MemoryFactor: 9},
		{Action: RuleFail},
	}}
	got := map[string]bool{}
	for _, b := range r.Check("retry") {
		got[b[0]] = true
	}
	for _, field := range []string{"retry.rules[0].action", "retry.rules[1].on[0]", "retry.rules[1].on[1]", "retry.rules[2].memory_factor", "retry.rules[3].memory_factor", "retry.rules[4].on"} {
		if !got[field] {
			t.Errorf("Check did not name %s; named %v", field, got)
		}
	}
	if bad := (Retry{Attempts: 2, Rules: []RetryRule{{On: []string{"OOMKilled"}, Action: RuleRetry, MemoryFactor: 1.5}}}).Check("retry"); len(bad) != 0 {
		t.Errorf("a policy of rules alone, without on: %v; want it accepted", bad)
	}
}

// TestMemoryRaiseStopsAtThePolicysCap: a hostile tenant's job asking nearly the policy's cap on a
// pod's memory, with a rule raising it 4× after an OOMKilled attempt, is raised only as far as
// the cap (MemoryFactorMax, worked out at submission); one already at the cap is not raised.
func TestMemoryRaiseStopsAtThePolicysCap(t *testing.T) {
	now := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	oom := Cause{Kind: CauseExit, ExitCode: 137, Kubernetes: "OOMKilled"}
	policy := &Retry{Attempts: 5, Rules: []RetryRule{{On: []string{RuleOOMKilled}, Action: RuleRetry, MemoryFactor: 4}}}
	j := Job{ID: "job-1", Status: StatusRunning, Retry: policy, MemoryFactorMax: 1.25}
	moved, _, err := Retrying(j, oom, Decide(j, oom, now), AttemptRecord{}, now)
	if err != nil || moved.MemoryFactor != 1.25 {
		t.Errorf("raised 4× under a headroom of 1.25: factor %v, %v; want 1.25", moved.MemoryFactor, err)
	}
	j.MemoryFactorMax = 1
	if moved, _, _ := Retrying(j, oom, Decide(j, oom, now), AttemptRecord{}, now); moved.MemoryFactor != 0 {
		t.Errorf("raised at the cap already: factor %v; want none", moved.MemoryFactor)
	}
}
