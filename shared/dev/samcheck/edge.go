package samcheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// checkEdge checks the optional edge in front of the key API: a parameter that is off unless an
// operator asks, one condition on it, every CloudFront and AWS WAF resource (and whatever refers
// to them) under that condition, a web ACL that blocks a client IP past a rate, and a distribution
// that names that web ACL, reaches only the key API and over HTTPS only, caches nothing and
// forwards what the API needs.
func checkEdge(t *Template) []Problem {
	var ps []Problem
	ps = append(ps, checkEdgeSwitch(t)...)
	ps = append(ps, checkEdgeConditional(t)...)
	ps = append(ps, checkEdgeWebACL(t)...)
	return append(ps, checkEdgeDistribution(t)...)
}

// checkEdgeSwitch checks the parameter that turns the edge on and the condition made of it.
func checkEdgeSwitch(t *Template) []Problem {
	var ps []Problem
	p, ok := dig(t.doc, "Parameters", edgeParameter).(map[string]any)
	if !ok {
		ps = append(ps, problem(RuleEdge, edgeParameter, `parameter missing; add it as a String with AllowedValues ["true", "false"] and Default "false": the edge's resources are made only when it is true`))
	} else if allowed := stringList(p["AllowedValues"]); p["Type"] != "String" || p["Default"] != "false" ||
		len(allowed) != 2 || !slices.Contains(allowed, "true") || !slices.Contains(allowed, "false") {
		ps = append(ps, problem(RuleEdge, edgeParameter, `is Type %v, AllowedValues %v, Default %#v; make it a String with AllowedValues ["true", "false"] and Default "false", so that a stack gets CloudFront and AWS WAF (and must be in us-east-1) only when its operator asks`, p["Type"], allowed, p["Default"]))
	}
	switch cond, ok := t.conditions[edgeCondition]; {
	case !ok:
		ps = append(ps, problem(RuleEdge, edgeCondition, `condition missing; add it as !Equals [!Ref %s, "true"], and give every resource of the edge Condition: %s`, edgeParameter, edgeCondition))
	case !isEquals(cond, edgeParameter, "true"):
		ps = append(ps, problem(RuleEdge, edgeCondition, `condition is %s; set it to !Equals [!Ref %s, "true"]`, describeJSON(cond), edgeParameter))
	}
	return ps
}

// isEquals reports whether cond, in long form, is Fn::Equals of a Ref to param and value.
func isEquals(cond any, param, value string) bool {
	args, _ := dig(cond, "Fn::Equals").([]any)
	if len(args) != 2 {
		return false
	}
	isRef := func(v any) bool { return dig(v, "Ref") == param }
	return (isRef(args[0]) && args[1] == value) || (isRef(args[1]) && args[0] == value)
}

// checkEdgeConditional checks that every CloudFront and AWS WAF resource, and every resource or
// output that refers to the edge's, is made only under edgeCondition: with the parameter off the
// stack has none of them, and nothing may refer to what is not there.
func checkEdgeConditional(t *Template) []Problem {
	var ps []Problem
	resources, _ := t.doc["Resources"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		r, _ := resources[id].(map[string]any)
		typ, _ := r["Type"].(string)
		cond, _ := r["Condition"].(string)
		switch {
		case cond == edgeCondition:
		case strings.HasPrefix(typ, "AWS::CloudFront::") || strings.HasPrefix(typ, "AWS::WAFv2::"):
			ps = append(ps, problem(RuleEdge, id, "is a %s without Condition: %s; CloudFront and AWS WAF are made only when %s is true (a CLOUDFRONT web ACL exists only in us-east-1)", typ, edgeCondition, edgeParameter))
		case refersToEdge(r):
			ps = append(ps, problem(RuleEdge, id, "refers to %s or %s, which exist only when %s is true; give it Condition: %s", edgeWebACL, edgeDistribution, edgeParameter, edgeCondition))
		}
	}
	outputs, _ := t.doc["Outputs"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(outputs)) {
		o, _ := outputs[id].(map[string]any)
		if cond, _ := o["Condition"].(string); cond != edgeCondition && refersToEdge(o) {
			ps = append(ps, problem(RuleEdge, id, "output refers to %s or %s, which exist only when %s is true; give it Condition: %s", edgeWebACL, edgeDistribution, edgeParameter, edgeCondition))
		}
	}
	return ps
}

// refersToEdge reports whether any string within v refers to the edge's web ACL or distribution.
func refersToEdge(v any) bool {
	switch v := v.(type) {
	case string:
		return slices.ContainsFunc(refsIn(v), func(r ref) bool { return r.id == edgeWebACL || r.id == edgeDistribution })
	case map[string]any:
		return slices.ContainsFunc(slices.Collect(maps.Values(v)), refersToEdge)
	case []any:
		return slices.ContainsFunc(v, refersToEdge)
	}
	return false
}

// checkEdgeWebACL checks that the web ACL is CloudFront's, lets through by default what no rule
// blocks, and has a rule that blocks a client IP past a rate, counting every request.
func checkEdgeWebACL(t *Template) []Problem {
	r := t.resource(edgeWebACL)
	if r == nil {
		return []Problem{problem(RuleEdge, edgeWebACL, "missing; with %s true a %s of Scope CLOUDFRONT blocks a client IP past a rate in front of %s", edgeParameter, typeWebACL, edgeAPI)}
	}
	if typ := t.resourceType(edgeWebACL); typ != typeWebACL {
		return []Problem{problem(RuleEdge, edgeWebACL, "is a %s; make it a %s", typ, typeWebACL)}
	}
	var ps []Problem
	bad := func(format string, args ...any) { ps = append(ps, problem(RuleEdge, edgeWebACL, format, args...)) }
	if scope := dig(r, "Properties", "Scope"); scope != "CLOUDFRONT" {
		bad("Scope is %#v; a distribution's web ACL has Scope CLOUDFRONT (which AWS WAF creates only in us-east-1)", scope)
	}
	if _, ok := dig(r, "Properties", "DefaultAction", "Allow").(map[string]any); !ok {
		bad("DefaultAction is %s; set Allow: {}: the rate rule blocks a flood, and the API checks every caller itself", describeJSON(dig(r, "Properties", "DefaultAction")))
	}
	rules, _ := dig(r, "Properties", "Rules").([]any)
	perIP := false
	for i, rule := range rules {
		if rate, ok := dig(rule, "Statement", "RateBasedStatement").(map[string]any); ok {
			rps := checkRateRule(fmt.Sprintf("rule %d (%v)", i, dig(rule, "Name")), rate, dig(rule, "Action"))
			perIP = perIP || len(rps) == 0
			ps = append(ps, rps...)
		}
	}
	if !perIP && len(ps) == 0 {
		bad("has no rule that blocks a client IP past a rate; add one with a RateBasedStatement (AggregateKeyType: IP, Limit: !Ref EdgeRateLimit) and Action Block")
	}
	return ps
}

// checkRateRule checks that the web ACL's rate-based rule name counts every request by the
// client's IP and blocks past its limit.
func checkRateRule(name string, rate map[string]any, action any) []Problem {
	var ps []Problem
	bad := func(format string, args ...any) {
		ps = append(ps, problem(RuleEdge, edgeWebACL, name+" "+format, args...))
	}
	if key := rate["AggregateKeyType"]; key != "IP" {
		bad("aggregates by %#v; set AggregateKeyType: IP, the address CloudFront saw (FORWARDED_IP trusts a header the client writes)", key)
	}
	if limit, ok := number(rate["Limit"]); !ok || limit <= 0 {
		bad("has Limit %#v; set it to the requests a client IP may send in five minutes (!Ref EdgeRateLimit)", rate["Limit"])
	}
	if rate["ScopeDownStatement"] != nil {
		bad("has a ScopeDownStatement, so requests it does not match are neither counted nor blocked; count every request")
	}
	if _, block := dig(action, "Block").(map[string]any); !block {
		bad("has Action %s; set Block: a rule that only counts lets the flood through", describeJSON(action))
	}
	return ps
}

// checkEdgeDistribution checks that the distribution names the web ACL, reaches the key API alone
// and over HTTPS, and that each of its behaviours is HTTPS only, caches nothing and forwards what
// the API reads.
func checkEdgeDistribution(t *Template) []Problem {
	r := t.resource(edgeDistribution)
	if r == nil {
		return []Problem{problem(RuleEdge, edgeDistribution, "missing; with %s true a %s serves %s behind %s", edgeParameter, typeDistribution, edgeAPI, edgeWebACL)}
	}
	if typ := t.resourceType(edgeDistribution); typ != typeDistribution {
		return []Problem{problem(RuleEdge, edgeDistribution, "is a %s; make it a %s", typ, typeDistribution)}
	}
	var ps []Problem
	cfg, _ := dig(r, "Properties", "DistributionConfig").(map[string]any)
	if acl, _ := cfg["WebACLId"].(string); acl != refString(edgeWebACL+".Arn") {
		ps = append(ps, problem(RuleEdge, edgeDistribution, "WebACLId is %s; set it to !GetAtt %s.Arn (a distribution names a WAFv2 web ACL by its ARN), or every request goes through unchecked", describeRef(acl), edgeWebACL))
	}
	origins, ops := checkEdgeOrigins(cfg)
	ps = append(ps, ops...)
	behaviors := map[string]any{"DefaultCacheBehavior": cfg["DefaultCacheBehavior"]}
	if cfg["DefaultCacheBehavior"] == nil {
		ps = append(ps, problem(RuleEdge, edgeDistribution, "has no DefaultCacheBehavior"))
	}
	extra, _ := cfg["CacheBehaviors"].([]any)
	for i, b := range extra {
		behaviors[fmt.Sprintf("CacheBehaviors[%d] (%v)", i, dig(b, "PathPattern"))] = b
	}
	for _, name := range slices.Sorted(maps.Keys(behaviors)) {
		if b, ok := behaviors[name].(map[string]any); ok {
			ps = append(ps, checkEdgeBehavior(name, b, origins)...)
		}
	}
	return ps
}

// checkEdgeOrigins checks that the distribution's origins are the key API's default endpoint,
// reached over HTTPS, and nothing else; it answers the origins' ids too, for the behaviours.
func checkEdgeOrigins(cfg map[string]any) (map[string]bool, []Problem) {
	var ps []Problem
	bad := func(format string, args ...any) {
		ps = append(ps, problem(RuleEdge, edgeDistribution, format, args...))
	}
	origins, _ := cfg["Origins"].([]any)
	ids := map[string]bool{}
	reaches := false
	for i, o := range origins {
		id, _ := dig(o, "Id").(string)
		ids[id] = true
		domain, _ := dig(o, "DomainName").(string)
		name := fmt.Sprintf("origin %d (%s)", i, id)
		var api string
		for _, rf := range refsIn(domain) {
			if _, ok := apis[rf.id]; ok {
				api = rf.id
			}
		}
		switch {
		case api == "HttpApi":
			bad("%s is HttpApi; leave IAM callers on ApiUrl: SigV4 signs the Host header and CloudFront sends the origin's, so a request signed for the distribution would fail API Gateway's check", name)
		case api != edgeAPI:
			bad("%s has DomainName %q, which is not %s; the distribution fronts %s alone", name, domain, edgeAPI, edgeAPI)
		case !strings.Contains(domain, ".execute-api."):
			bad("%s has DomainName %q; set it to %s's default endpoint, !Sub ${%s}.execute-api.${AWS::Region}.${AWS::URLSuffix}", name, domain, edgeAPI, edgeAPI)
		default:
			reaches = true
		}
		if p := dig(o, "CustomOriginConfig", "OriginProtocolPolicy"); p != "https-only" {
			bad("%s has OriginProtocolPolicy %#v; set CustomOriginConfig.OriginProtocolPolicy: https-only, so keys never cross to the API in plain HTTP", name, p)
		}
	}
	if !reaches {
		bad("has no origin on %s; add one with DomainName !Sub ${%s}.execute-api.${AWS::Region}.${AWS::URLSuffix}", edgeAPI, edgeAPI)
	}
	return ids, ps
}

// checkEdgeBehavior checks one cache behaviour of the distribution; origins are its origins' ids.
func checkEdgeBehavior(name string, b map[string]any, origins map[string]bool) []Problem {
	var ps []Problem
	bad := func(format string, args ...any) {
		ps = append(ps, problem(RuleEdge, edgeDistribution, name+" "+format, args...))
	}
	if target, _ := b["TargetOriginId"].(string); !origins[target] {
		bad("has TargetOriginId %q, none of the distribution's origins", target)
	}
	if p := b["ViewerProtocolPolicy"]; p != "https-only" {
		bad("has ViewerProtocolPolicy %#v; set https-only: a key sent in plain HTTP is given away, even when the answer is a redirect", p)
	}
	if p := b["CachePolicyId"]; p != cachingDisabled {
		bad("has CachePolicyId %#v; set CloudFront's managed CachingDisabled (%s): every answer is one caller's own, and a cached one would reach the next", p, cachingDisabled)
	}
	if p := b["OriginRequestPolicyId"]; p != allViewerExceptHost {
		bad("has OriginRequestPolicyId %#v; set CloudFront's managed AllViewerExceptHostHeader (%s): the API reads the Authorization header, the query and the body, and API Gateway routes by its own host (with AllViewer it gets the distribution's and answers 403)", p, allViewerExceptHost)
	}
	if b["ForwardedValues"] != nil {
		bad("sets the legacy ForwardedValues; use the cache and origin request policies alone")
	}
	if methods := stringList(b["AllowedMethods"]); slices.ContainsFunc(edgeMethods, func(m string) bool { return !slices.Contains(methods, m) }) {
		bad("has AllowedMethods %v; allow %v, the methods the API's routes take", methods, edgeMethods)
	}
	return ps
}

// describeJSON shows v, a part of the template in long form, as JSON for a message.
func describeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
