// Package samcheck checks the wiring of Tidegate's SAM template: that each function is built from
// a real main package, each queue feeds the function meant to drain it, no role reaches "*", and
// the tables, bucket and HTTP APIs (and the key API's authorizer, and the optional CloudFront and
// AWS WAF edge in front of it) are set up as the code and the security stance assume.
package samcheck

import (
	"cmp"
	"fmt"
	"slices"
)

// Problem is one thing wrong with the template, said so that a person can fix it.
type Problem struct {
	Rule     Rule   // the check that found it
	Resource string // the logical id it is in; empty for the template as a whole
	Message  string
}

func (p Problem) String() string {
	if p.Resource == "" {
		return fmt.Sprintf("[%s] %s", p.Rule, p.Message)
	}
	return fmt.Sprintf("[%s] %s: %s", p.Rule, p.Resource, p.Message)
}

// Rule names a check, so tests and tools can tell problems apart without parsing messages.
type Rule string

// The checks Check runs.
const (
	RuleSource      Rule = "source"      // a function's source folder holds a main package
	RuleBuild       Rule = "build"       // runtime, handler, architecture and build/sam.mk agree
	RuleEnvironment Rule = "environment" // every function gets the settings shared/config reads
	RuleSQSEvent    Rule = "sqs-event"   // each queue feeds its one function, reporting batch item failures
	RuleVisibility  Rule = "visibility"  // a queue's visibility timeout is 6 × its consumer's timeout
	RuleRedrive     Rule = "redrive"     // a queue that feeds a function dead-letters after ≥ 5 receives
	RuleEncryption  Rule = "encryption"  // queues are encrypted at rest
	RuleSchedule    Rule = "schedule"    // the reconcile beat runs at shared/config.BeatInterval, its timeout covering its watch
	RuleWildcard    Rule = "wildcard"    // no Allow statement grants "*" resources or actions
	RuleAccess      Rule = "access"      // each function's role reaches exactly what it uses
	RuleTable       Rule = "table"       // tables have the shared schema, PITR, SSE, on-demand billing
	RuleBucket      Rule = "bucket"      // the sources bucket is private, encrypted, TLS-only
	RuleAPIAuth     Rule = "api-auth"    // each HTTP API lets in one kind of caller (IAM, or keys by the authorizer) but on its open routes
	RuleSecretEnv   Rule = "secret-env"  // no function's environment holds a secret
	RuleKMS         Rule = "kms"         // the secrets' KMS key rotates, and reaches only the functions that seal or open
	RuleMetrics     Rule = "metrics"     // every alarm and dashboard widget on Tidegate's metrics names one the code publishes
	RuleEdge        Rule = "edge"        // the optional CloudFront and AWS WAF: under one condition, a rate per client IP, KeyApi only, nothing cached
)

// Check reports every problem it finds with t's wiring, in a stable order. root is the repository
// root, where function source folders, the Makefile and build/sam.mk are looked up.
func Check(t *Template, root string) []Problem {
	var ps []Problem
	ps = append(ps, checkFunctions(t, root)...)
	ps = append(ps, checkEnvironment(t)...)
	ps = append(ps, checkQueues(t)...)
	ps = append(ps, checkSchedule(t)...)
	ps = append(ps, checkWildcards(t)...)
	ps = append(ps, checkAccess(t)...)
	ps = append(ps, checkTables(t)...)
	ps = append(ps, checkBuckets(t)...)
	ps = append(ps, checkHTTPAPI(t)...)
	ps = append(ps, checkSecretEnv(t)...)
	ps = append(ps, checkKMS(t)...)
	ps = append(ps, checkMetrics(t)...)
	ps = append(ps, checkEdge(t)...)
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	return ps
}

// problem builds a Problem with a formatted message.
func problem(rule Rule, resource, format string, args ...any) Problem {
	return Problem{Rule: rule, Resource: resource, Message: fmt.Sprintf(format, args...)}
}
