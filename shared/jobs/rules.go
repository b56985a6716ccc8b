package jobs

import (
	"fmt"
	"slices"
	"strings"
)

// RetryRule is one of a retry policy's rules, as AWS Batch's evaluateOnExit: what it matches and
// what becomes of an attempt that ended so. A policy's rules are read in order, the first that
// matches deciding; an end no rule matches is retried as the policy's On says.
type RetryRule struct {
	// On lists what the rule matches: exit:N (a container's exit code), or how the attempt ended:
	// OOMKilled, Evicted, spot_interruption, node_failure, pod_failure, deadline,
	// pods_not_ready, preempted.
	On []string `json:"on" dynamodbav:"on"`
	// Action is RuleRetry or RuleFail.
	Action string `json:"action" dynamodbav:"action"`
	// MemoryFactor, on a retry rule that matches OOMKilled, multiplies the memory the next
	// attempt's containers request and are limited to (1 < factor ≤ MaxMemoryFactor); the
	// raised demand counts against the tenant's quota as any job's.
	MemoryFactor float64 `json:"memory_factor,omitempty" dynamodbav:"memory_factor,omitempty"`
}

// A rule's actions.
const (
	RuleRetry = "retry"
	RuleFail  = "fail"
)

// What a rule may match besides exit:N and On's names: the ends Kubernetes names (a container
// OOMKilled, a pod Evicted, a Job past its activeDeadlineSeconds) and the ends Tidegate queues
// again apart from the attempts (pods not scheduled in time, an eviction for another job), which
// a rule may fail instead.
const (
	RuleOOMKilled    = "OOMKilled"
	RuleEvicted      = "Evicted"
	RuleDeadline     = "deadline"
	RulePodsNotReady = "pods_not_ready"
	RulePreempted    = "preempted"
)

const (
	// MaxRetryRules bounds a policy's rules, as AWS Batch bounds evaluateOnExit (5); ours are
	// cheap, so a few more.
	MaxRetryRules = 10
	// MaxMemoryFactor bounds a rule's memory_factor: beyond it the job is not short of memory.
	MaxMemoryFactor = 4
)

var ruleNames = []string{RuleOOMKilled, RuleEvicted, RetrySpotInterruption, RetryNodeFailure, RetryPodFailure, RuleDeadline, RulePodsNotReady, RulePreempted}

// checkRules lists what is wrong with rules, each field under prefix.
func checkRules(prefix string, rules []RetryRule) [][2]string {
	var bad [][2]string
	if len(rules) > MaxRetryRules {
		bad = append(bad, [2]string{prefix, fmt.Sprintf("at most %d rules", MaxRetryRules)})
	}
	for i, rule := range rules {
		at := fmt.Sprintf("%s[%d]", prefix, i)
		if len(rule.On) == 0 || len(rule.On) > 32 {
			bad = append(bad, [2]string{at + ".on", "list from 1 to 32 ends the rule matches"})
		}
		for k, on := range rule.On {
			if !slices.Contains(ruleNames, on) && !validOn(on) {
				bad = append(bad, [2]string{fmt.Sprintf("%s.on[%d]", at, k), "must be exit:N (1–255) or one of " + strings.Join(ruleNames, ", ")})
			}
		}
		if rule.Action != RuleRetry && rule.Action != RuleFail {
			bad = append(bad, [2]string{at + ".action", "must be retry or fail"})
		}
		if f := rule.MemoryFactor; f != 0 && (rule.Action != RuleRetry || !slices.Contains(rule.On, RuleOOMKilled) || !(f > 1 && f <= MaxMemoryFactor)) {
			bad = append(bad, [2]string{at + ".memory_factor", fmt.Sprintf("only on a retry rule that matches OOMKilled, from above 1 to %d", MaxMemoryFactor)})
		}
	}
	return bad
}

// rule is the first of r's rules that matches how the attempt ended (c), and whether one does.
func (r Retry) rule(c Cause) (int, RetryRule, bool) {
	names := c.names()
	for i, rule := range r.Rules {
		if slices.ContainsFunc(rule.On, func(on string) bool { return slices.Contains(names, on) }) {
			return i, rule, true
		}
	}
	return 0, RetryRule{}, false
}

// names are what a rule may name of cause c: its code, what Kubernetes called it, and pod_failure
// for any failed pod.
func (c Cause) names() []string {
	out := []string{c.Code()}
	switch c.Kind {
	case CauseSpotInterrupted:
		out = []string{RetrySpotInterruption}
	case CauseExit:
		out = append(out, RetryPodFailure)
	case CausePodFailure, CauseNodeFailure:
	}
	switch c.Kubernetes {
	case "OOMKilled":
		out = append(out, RuleOOMKilled)
	case "Evicted":
		out = append(out, RuleEvicted)
	case "DeadlineExceeded":
		out = append(out, RuleDeadline)
	}
	return out
}

// Fails says whether job j's retry rules fail an end Tidegate would otherwise queue again apart
// from its attempts (RulePodsNotReady, RulePreempted), and the rule's place, from 0.
func (j Job) Fails(end string) (int, bool) {
	if j.Retry == nil {
		return 0, false
	}
	for i, rule := range j.Retry.Rules {
		if slices.Contains(rule.On, end) {
			return i, rule.Action == RuleFail
		}
	}
	return 0, false
}
