package samcheck

import (
	"maps"
	"slices"
	"strings"

	"github.com/tidegate/tidegate/shared/config"
)

// secretReferences are the dynamic references by which CloudFormation writes a secret's value
// into what it deploys; in a function's environment, anyone allowed
// lambda:GetFunctionConfiguration would read it.
var secretReferences = []string{"{{resolve:secretsmanager:", "{{resolve:ssm-secure:"}

// functionEnvironments are each function's environment variables as SAM merges them: Globals'
// and the function's own, the function's winning.
func functionEnvironments(t *Template) map[string]map[string]string {
	global := map[string]string{}
	if g := globalFunction(t); g.Environment != nil {
		global = g.Environment.Variables
	}
	out := map[string]map[string]string{}
	for id, fn := range t.CFN.GetAllServerlessFunctionResources() {
		vars := maps.Clone(global)
		if fn.Environment != nil {
			maps.Copy(vars, fn.Environment.Variables)
		}
		out[id] = vars
	}
	return out
}

// checkSecretEnv checks that no function's environment holds a secret: no dynamic reference to
// Secrets Manager or a SecureString parameter, and no template parameter marked NoEcho.
func checkSecretEnv(t *Template) []Problem {
	var ps []Problem
	envs := functionEnvironments(t)
	for _, id := range slices.Sorted(maps.Keys(envs)) {
		vars := envs[id]
		for _, name := range slices.Sorted(maps.Keys(vars)) {
			v := vars[name]
			for _, r := range secretReferences {
				if strings.Contains(v, r) {
					ps = append(ps, problem(RuleSecretEnv, id, "%s resolves a secret (%s…}}) into the environment, where anyone allowed lambda:GetFunctionConfiguration reads it; keep key material in KMS and give the function the key's ARN (%s), or read the secret at run time", name, r, config.EnvKMSKey))
				}
			}
			for _, ref := range refsIn(v) {
				if noEcho(t, ref.id) {
					ps = append(ps, problem(RuleSecretEnv, id, "%s takes parameter %s, which is NoEcho: a secret in the environment is readable by anyone allowed lambda:GetFunctionConfiguration; keep it out of the function's configuration", name, ref.id))
				}
			}
		}
	}
	return ps
}

// noEcho reports whether id is a template parameter marked NoEcho.
func noEcho(t *Template, id string) bool {
	p, ok := dig(t.doc, "Parameters", id).(map[string]any)
	if !ok {
		return false
	}
	switch v := p["NoEcho"].(type) {
	case bool:
		return v
	case string:
		return strings.EqualFold(v, "true")
	}
	return false
}

// checkKMS checks the key that wraps the secrets' data keys: it exists and rotates; the functions
// with a keyring are given its ARN and no other function is; and each of those functions' roles
// allows exactly the KMS actions it calls on it.
func checkKMS(t *Template) []Problem {
	var ps []Problem
	if t.resourceType(secretsKMSKey) != typeKMSKey {
		return []Problem{problem(RuleKMS, secretsKMSKey, "is not an %s; the functions' keyring makes its data keys under it", typeKMSKey)}
	}
	if rot, ok := dig(t.resource(secretsKMSKey), "Properties", "EnableKeyRotation").(bool); !ok || !rot {
		ps = append(ps, problem(RuleKMS, secretsKMSKey, "does not set EnableKeyRotation: true; set it, so KMS rotates the key material yearly (it still unwraps what older material wrapped)"))
	}
	for _, s := range statements(t) {
		if keyPolicy(t, s) && s.allows() && anyonePrincipal(s.body["Principal"]) {
			ps = append(ps, problem(RuleKMS, s.resource, "%s allows any principal; name the account (arn:${AWS::Partition}:iam::${AWS::AccountId}:root) so only IAM policies in it grant use of the key", s.label()))
		}
	}
	envs := functionEnvironments(t)
	fns := t.CFN.GetAllServerlessFunctionResources()
	for _, id := range slices.Sorted(maps.Keys(fns)) {
		got, set := envs[id][config.EnvKMSKey]
		want, uses := kmsUsers[id]
		switch {
		case uses && got != refString(secretsKMSKey+".Arn") && got != refString(secretsKMSKey):
			ps = append(ps, problem(RuleKMS, id, "%s is %s; set it to !GetAtt %s.Arn: the function seals or opens secrets", config.EnvKMSKey, describeRef(got), secretsKMSKey))
		case !uses && set:
			ps = append(ps, problem(RuleKMS, id, "%s is set; remove it: the function neither seals nor opens secrets", config.EnvKMSKey))
		}
		r, ok := wholeRef(firstString(fns[id].Role))
		if !ok {
			continue // checkAccess reports it
		}
		have := map[string]bool{}
		for _, s := range statements(t) {
			if s.resource != r.id || !s.allows() || !strings.HasPrefix(s.where, "Properties.Policies") {
				continue
			}
			for _, res := range s.resources() {
				if slices.ContainsFunc(refsIn(res), func(x ref) bool { return x.id == secretsKMSKey }) {
					for _, a := range s.actions() {
						have[a] = true
					}
				}
			}
		}
		if granted := slices.Sorted(maps.Keys(have)); len(granted) > 0 && !slices.Equal(granted, want) {
			ps = append(ps, problem(RuleKMS, r.id, "allows %v on %s; %s calls exactly %v", granted, secretsKMSKey, id, want))
		}
	}
	return ps
}

// anyonePrincipal reports whether a statement's Principal is everyone: "*", or "*" for AWS.
func anyonePrincipal(p any) bool {
	if p == "*" {
		return true
	}
	m, _ := p.(map[string]any)
	return slices.Contains(stringList(m["AWS"]), "*")
}
