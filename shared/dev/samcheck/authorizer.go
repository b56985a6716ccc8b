package samcheck

import (
	"slices"
	"strings"
)

// checkKeyAuthorizer checks KeyApi's Lambda authorizer: answered by authorizerFunction in payload
// format 2.0 with simple responses (what shared/handlers/authorizerhandler answers), which API
// Gateway may invoke, asked per Authorization header and keeping each answer no longer than the
// API keeps a resolved key; and that the authorizer's role reads only keys and tenants.
func checkKeyAuthorizer(t *Template) []Problem {
	var api string
	for id, spec := range apis {
		if spec.authorizer == keyAuthorizer {
			api = id
		}
	}
	if t.resource(api) == nil {
		return nil // checkHTTPAPI reports the missing API
	}
	a, ok := dig(t.resource(api), "Properties", "Auth", "Authorizers", keyAuthorizer).(map[string]any)
	if !ok {
		return []Problem{problem(RuleAPIAuth, api, "has no Auth.Authorizers.%s; its routes need it to let API keys in", keyAuthorizer)}
	}
	var ps []Problem
	bad := func(format string, args ...any) {
		ps = append(ps, problem(RuleAPIAuth, api, "authorizer %s: "+format, append([]any{keyAuthorizer}, args...)...))
	}
	if arn, _ := a["FunctionArn"].(string); arn != refString(authorizerFunction+".Arn") {
		bad("FunctionArn is %s; set it to !GetAtt %s.Arn, the function that checks keys", describeRef(arn), authorizerFunction)
	}
	if v, _ := a["AuthorizerPayloadFormatVersion"].(string); v != "2.0" {
		bad("AuthorizerPayloadFormatVersion is %q; the authorizer reads 2.0", v)
	}
	if simple, _ := a["EnableSimpleResponses"].(bool); !simple {
		bad("EnableSimpleResponses is not true; the authorizer answers {isAuthorized, context}, not an IAM policy")
	}
	if perm, _ := a["EnableFunctionDefaultPermissions"].(bool); !perm && a["FunctionInvokeRole"] == nil {
		bad("neither EnableFunctionDefaultPermissions: true nor a FunctionInvokeRole; API Gateway could not invoke it and would refuse every key")
	}
	if h := stringList(dig(a, "Identity", "Headers")); len(h) != 1 || !strings.EqualFold(h[0], identityHeader) {
		bad("Identity.Headers is %v; set it to [%s], the header keys come in (and what answers are cached under)", h, identityHeader)
	}
	if ttl, ok := number(dig(a, "Identity", "ReauthorizeEvery")); !ok || ttl < 0 || ttl > float64(maxReauthorize) {
		bad("Identity.ReauthorizeEvery is %v; set it to at most %d s, the API's PrincipalTTL, so a revoked key is not let through for longer", dig(a, "Identity", "ReauthorizeEvery"), maxReauthorize)
	}
	return append(ps, checkKeyReads(t)...)
}

// checkKeyReads checks that each grant of the authorizer's role on the control table is confined
// by dynamodb:LeadingKeys to keys and tenants, so the function that every key caller reaches
// first cannot read orgs' sealed secrets, webhooks or hosts.
func checkKeyReads(t *Template) []Problem {
	fn := t.CFN.GetAllServerlessFunctionResources()[authorizerFunction]
	if fn == nil {
		return nil // checkFunctions reports it
	}
	role, ok := wholeRef(firstString(fn.Role))
	if !ok {
		return nil // checkAccess reports it
	}
	var ps []Problem
	for _, s := range statements(t) {
		if s.resource != role.id || !s.allows() || !slices.ContainsFunc(s.resources(), func(r string) bool {
			return slices.ContainsFunc(refsIn(r), func(r ref) bool { return r.id == "ControlTable" })
		}) {
			continue
		}
		leading := stringList(dig(s.body, "Condition", "ForAllValues:StringLike", "dynamodb:LeadingKeys"))
		if len(leading) == 0 || slices.ContainsFunc(leading, func(k string) bool { return !slices.Contains(keyLeadingKeys, k) }) {
			ps = append(ps, problem(RuleAccess, role.id, "%s reaches ControlTable with dynamodb:LeadingKeys %v; confine it with ForAllValues:StringLike to %v, a key and its tenant", s.label(), leading, keyLeadingKeys))
		}
	}
	return ps
}
