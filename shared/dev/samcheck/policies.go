package samcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// statement is one IAM policy statement and where in the template it is.
type statement struct {
	resource string // the logical id holding it, or "Globals"
	where    string // its place inside that resource, for messages
	body     map[string]any
}

func (s statement) allows() bool        { return s.body["Effect"] == "Allow" }
func (s statement) actions() []string   { return stringList(s.body["Action"]) }
func (s statement) resources() []string { return stringList(s.body["Resource"]) }

// label names the statement for a person: its Sid when it has one.
func (s statement) label() string {
	if sid, ok := s.body["Sid"].(string); ok && sid != "" {
		return fmt.Sprintf("statement %s (%s)", sid, s.where)
	}
	return "statement " + s.where
}

// statements finds every policy statement in the template: roles' inline policies, bucket
// policies, SAM Policies on functions, and anything else with a Statement list.
func statements(t *Template) []statement {
	var out []statement
	resources, _ := t.doc["Resources"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		collectStatements(dig(resources[id], "Properties"), id, "Properties", &out)
	}
	collectStatements(t.doc["Globals"], "Globals", "Globals", &out)
	return out
}

func collectStatements(v any, resource, path string, out *[]statement) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if k != "Statement" {
				collectStatements(v[k], resource, path+"."+k, out)
				continue
			}
			list, ok := v[k].([]any)
			if !ok {
				list = []any{v[k]}
			}
			for i, s := range list {
				if body, ok := s.(map[string]any); ok {
					*out = append(*out, statement{resource: resource, where: fmt.Sprintf("%s.Statement[%d]", path, i), body: body})
				}
			}
		}
	case []any:
		for i, e := range v {
			collectStatements(e, resource, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// checkWildcards checks that no Allow statement grants every resource or every action. A Deny on
// "*" takes nothing away from least privilege and is not reported.
func checkWildcards(t *Template) []Problem {
	var ps []Problem
	for _, s := range statements(t) {
		if !s.allows() {
			continue
		}
		for _, k := range []string{"NotAction", "NotResource"} {
			if _, ok := s.body[k]; ok {
				ps = append(ps, problem(RuleWildcard, s.resource, "%s uses %s, which allows everything it does not name; list what it grants instead", s.label(), k))
			}
		}
		for _, a := range s.actions() {
			if a == "*" || strings.HasSuffix(a, ":*") {
				ps = append(ps, problem(RuleWildcard, s.resource, "%s allows action %q; name the actions the function calls", s.label(), a))
			}
		}
		if !slices.Contains(s.resources(), "*") || keyPolicy(t, s) {
			continue
		}
		switch {
		case !allResourceLess(s.actions()):
			ps = append(ps, problem(RuleWildcard, s.resource, `%s allows %v on Resource "*"; name the resources (!GetAtt X.Arn, !Sub ${X.Arn}/..., a parameter). Only actions without resource-level permissions may use "*" (resourceLessActions in wiring.go)`, s.label(), s.actions()))
		case !regionConfined(s.body):
			ps = append(ps, problem(RuleWildcard, s.resource, `%s allows %v on Resource "*", as it must (no resource-level permissions); confine it with a Condition on aws:RequestedRegion`, s.label(), s.actions()))
		}
	}
	return ps
}

// keyPolicy reports whether s is in a KMS key's own policy, where Resource "*" means that key
// and no other.
func keyPolicy(t *Template, s statement) bool {
	return t.resourceType(s.resource) == typeKMSKey && strings.HasPrefix(s.where, "Properties.KeyPolicy.")
}

func allResourceLess(actions []string) bool {
	if len(actions) == 0 {
		return false
	}
	for _, a := range actions {
		if !resourceLessActions[a] {
			return false
		}
	}
	return true
}

// regionConfined reports whether a statement's Condition limits aws:RequestedRegion to named regions.
func regionConfined(body map[string]any) bool {
	cond, _ := body["Condition"].(map[string]any)
	for op, keys := range cond {
		if !strings.HasPrefix(op, "StringEquals") && !strings.HasPrefix(op, "ForAnyValue:StringEquals") {
			continue
		}
		m, _ := keys.(map[string]any)
		for k, v := range m {
			if strings.EqualFold(k, "aws:RequestedRegion") && len(stringList(v)) > 0 && !slices.Contains(stringList(v), "*") {
				return true
			}
		}
	}
	return false
}
