package samcheck

import (
	"maps"
	"slices"
	"strconv"

	"github.com/tidegate/tidegate/shared/config"
)

// checkEnvironment checks that every function gets each setting shared/config.Parse requires from
// the resource or parameter meant to supply it, logs JSON, and carries no dev-only setting.
func checkEnvironment(t *Template) []Problem {
	var ps []Problem
	fns := t.CFN.GetAllServerlessFunctionResources()
	global := map[string]string{}
	if g := globalFunction(t); g.Environment != nil {
		global = g.Environment.Variables
	}
	for _, id := range slices.Sorted(maps.Keys(fns)) {
		// SAM merges Globals' variables into each function's, the function's winning.
		vars := maps.Clone(global)
		if fns[id].Environment != nil {
			maps.Copy(vars, fns[id].Environment.Variables)
		}
		for _, name := range slices.Sorted(maps.Keys(env)) {
			want := env[name]
			got, ok := vars[name]
			switch {
			case !ok:
				ps = append(ps, problem(RuleEnvironment, id, "%s is not set; set it to %s (best in Globals.Function.Environment)", name, describeRef(want)))
			case got != want:
				ps = append(ps, problem(RuleEnvironment, id, "%s is %s; set it to %s", name, describeRef(got), describeRef(want)))
			}
		}
		if v, err := strconv.ParseBool(vars[config.EnvLogJSON]); err != nil || !v {
			ps = append(ps, problem(RuleEnvironment, id, `%s is %q; set it to "true": CloudWatch wants JSON log lines`, config.EnvLogJSON, vars[config.EnvLogJSON]))
		}
		if v, ok := vars[config.EnvWebhooksAllowPrivate]; ok {
			if private, err := strconv.ParseBool(v); err != nil || private {
				ps = append(ps, problem(RuleEnvironment, id, "%s is %q; remove it: in AWS, webhooks must not reach private addresses", config.EnvWebhooksAllowPrivate, v))
			}
		}
		for _, name := range devOnlyEnv {
			if _, ok := vars[name]; ok {
				ps = append(ps, problem(RuleEnvironment, id, "%s is set; remove it: it is for tidegate dev and tests, not AWS", name))
			}
		}
	}
	return ps
}

// describeRef writes a kept reference as the template author would, e.g. "!Ref JobsTable".
func describeRef(s string) string {
	r, ok := wholeRef(s)
	switch {
	case !ok:
		return strconv.Quote(s)
	case r.attr != "":
		return "!GetAtt " + r.id + "." + r.attr
	}
	return "!Ref " + r.id
}
