package samcheck

import (
	"maps"
	"slices"
	"strings"
)

// sqsPollerActions are what Lambda's SQS poller calls with the function's role; creating the event
// source mapping fails without them.
var sqsPollerActions = []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}

// checkAccess checks that each function runs as its own role, whose inline statements name
// exactly the resources the function uses, and that nothing grants access beside those roles.
func checkAccess(t *Template) []Problem {
	var ps []Problem
	fns := t.CFN.GetAllServerlessFunctionResources()
	byRole := map[string]string{}
	all := statements(t)
	for _, fn := range slices.Sorted(maps.Keys(fns)) {
		if fns[fn].Policies != nil || dig(t.resource(fn), "Properties", "Policies") != nil {
			ps = append(ps, problem(RuleAccess, fn, "sets Policies; put its grants in its role's inline statements, where samcheck checks them"))
		}
		r, ok := wholeRef(firstString(fns[fn].Role))
		if !ok || r.attr != "Arn" || t.resourceType(r.id) != typeRole {
			ps = append(ps, problem(RuleAccess, fn, `has no Role of its own (Role: !GetAtt <Role>.Arn, an %s here); SAM's generated role carries managed policies whose Resource is "*"`, typeRole))
			continue
		}
		if other, dup := byRole[r.id]; dup {
			ps = append(ps, problem(RuleAccess, r.id, "is the role of both %s and %s; each function gets its own, holding only what it uses", other, fn))
		}
		byRole[r.id] = fn
		var granted []statement
		for _, s := range all {
			if s.resource == r.id && s.allows() && strings.HasPrefix(s.where, "Properties.Policies") {
				granted = append(granted, s)
			}
		}
		ps = append(ps, checkRole(t, fn, r.id, granted)...)
	}
	resources, _ := t.doc["Resources"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		if ty := t.resourceType(id); ty == "AWS::IAM::Policy" || ty == "AWS::IAM::ManagedPolicy" {
			ps = append(ps, problem(RuleAccess, id, "is an %s; samcheck checks grants in the functions' roles' inline Policies only, so move its statements there", ty))
		}
	}
	return ps
}

// checkRole compares what role's Allow statements name with what fn uses.
func checkRole(t *Template, fn, role string, granted []statement) []Problem {
	var ps []Problem
	if managed := t.CFN.GetAllIAMRoleResources()[role].ManagedPolicyArns; len(managed) > 0 {
		ps = append(ps, problem(RuleAccess, role, "attaches managed policies %v; AWS's managed policies grant on \"*\" and are outside this check, so write the statements inline", managed))
	}
	named := map[string]bool{}
	for _, s := range granted {
		for _, res := range s.resources() {
			refs := refsIn(res)
			if len(refs) == 0 && res != "*" {
				ps = append(ps, problem(RuleAccess, role, "%s names %q literally; refer to the resource or a parameter so the grant follows the stack", s.label(), res))
			}
			for _, r := range refs {
				named[r.id] = true
			}
		}
	}
	want, known := access[fn]
	if !known {
		return ps // checkFunctions reports the unknown function
	}
	for _, id := range slices.Sorted(maps.Keys(named)) {
		if !slices.Contains(want, id) {
			ps = append(ps, problem(RuleAccess, role, "grants access to %s, which %s does not use; remove it, or add it to access in wiring.go if the code now needs it", id, fn))
		}
	}
	for _, id := range want {
		if !named[id] {
			ps = append(ps, problem(RuleAccess, role, "grants nothing on %s, which %s uses; AWS will refuse its calls", id, fn))
		}
	}
	if allowed, bounded := actions[fn]; bounded {
		for _, s := range granted {
			for _, a := range s.actions() {
				if !slices.Contains(allowed, a) {
					ps = append(ps, problem(RuleAccess, role, "%s allows %s; %s may allow only %v", s.label(), a, fn, allowed))
				}
			}
		}
	}
	for _, e := range sqsEvents(t) {
		if e.function == fn && e.queue != "" {
			ps = append(ps, checkPoller(role, e.queue, granted)...)
		}
	}
	return ps
}

// checkPoller checks that role lets Lambda's poller read queue.
func checkPoller(role, queue string, granted []statement) []Problem {
	have := map[string]bool{}
	for _, s := range granted {
		for _, res := range s.resources() {
			if slices.ContainsFunc(refsIn(res), func(r ref) bool { return r.id == queue }) {
				for _, a := range s.actions() {
					have[a] = true
				}
			}
		}
	}
	var missing []string
	for _, a := range sqsPollerActions {
		if !have[a] {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return []Problem{problem(RuleAccess, role, "does not allow %v on %s; Lambda polls the queue with the function's role and cannot create the event source without them", missing, queue)}
	}
	return nil
}
