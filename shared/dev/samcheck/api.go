package samcheck

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// iamAuthorizer is SAM's name for IAM (SigV4) authorization on an HTTP API route.
const iamAuthorizer = "AWS_IAM"

// httpRoute is one HttpApi event: a route on an HTTP API and the function serving it.
type httpRoute struct {
	function, event string
	key             route
	apiID           string // as written: a kept reference, or ""
	authorizer      string // the event's own Auth.Authorizer; "" when it takes the API's default
	payload         string
}

// checkHTTPAPI checks that the template has exactly the HTTP APIs in apis, each authorizing by
// default as apis says, that only each one's open routes opt out, that each has a catch-all behind
// its authorizer, and that every route reaches the API function with payload format 2.0.
func checkHTTPAPI(t *Template) []Problem {
	found := t.CFN.GetAllServerlessHttpApiResources()
	var ps []Problem
	defaults := map[string]string{}
	for _, api := range slices.Sorted(maps.Keys(found)) {
		spec, known := apis[api]
		if !known {
			ps = append(ps, problem(RuleAPIAuth, api, "is an HTTP API samcheck does not know; IAM callers use HttpApi and API keys KeyApi, so put its routes on one of those"))
			continue
		}
		if a := found[api].Auth; a != nil {
			defaults[api] = firstString(a.DefaultAuthorizer)
		}
		ps = append(ps, checkDefaultAuth(t, api, spec, defaults[api])...)
	}
	routes, rps := httpRoutes(t)
	ps = append(ps, rps...)
	open := map[string]map[route]bool{}
	for _, r := range routes {
		ref, ok := wholeRef(r.apiID)
		spec, known := apis[ref.id]
		if !ok || !known || found[ref.id] == nil {
			ps = append(ps, problem(RuleAPIAuth, r.function, "event %s (%s) has ApiId %s; set ApiId: !Ref HttpApi (IAM callers) or !Ref KeyApi (API keys), or SAM puts the route on an implicit API without auth", r.event, r.key, describeRef(r.apiID)))
			continue
		}
		auth := cmp.Or(r.authorizer, defaults[ref.id])
		if open[ref.id] == nil {
			open[ref.id] = map[route]bool{}
		}
		open[ref.id][r.key] = auth == "NONE" || auth == ""
		ps = append(ps, checkRoute(r, ref.id, spec, auth)...)
	}
	for _, api := range slices.Sorted(maps.Keys(apis)) {
		if found[api] != nil {
			ps = append(ps, checkOpenRoutes(api, apis[api], open[api])...)
		} else {
			ps = append(ps, problem(RuleAPIAuth, api, "missing: Tidegate needs this %s for callers authorized by %s", typeHttpApi, apis[api].authorizer))
		}
	}
	return append(ps, checkKeyAuthorizer(t)...)
}

// checkDefaultAuth checks that api authorizes every route it does not open as spec says.
func checkDefaultAuth(t *Template, api string, spec httpAPI, defaultAuth string) []Problem {
	iamEnabled, _ := dig(t.resource(api), "Properties", "Auth", "EnableIamAuthorizer").(bool)
	switch {
	case spec.authorizer == iamAuthorizer && (!iamEnabled || defaultAuth != iamAuthorizer):
		return []Problem{problem(RuleAPIAuth, api, "Auth must set EnableIamAuthorizer: true and DefaultAuthorizer: %s, so every route needs a signed caller unless it opts out", iamAuthorizer)}
	case spec.authorizer != iamAuthorizer && (iamEnabled || defaultAuth != spec.authorizer):
		return []Problem{problem(RuleAPIAuth, api, "Auth must set DefaultAuthorizer: %s and not EnableIamAuthorizer, so every route needs an API key unless it opts out; IAM callers use HttpApi", spec.authorizer)}
	}
	return nil
}

// checkOpenRoutes checks that api has each of its open routes open and its catch-all behind its
// authorizer; open says, for each of its routes, whether it is open.
func checkOpenRoutes(api string, spec httpAPI, open map[route]bool) []Problem {
	var ps []Problem
	for _, r := range spec.open {
		isOpen, ok := open[r]
		switch {
		case !ok:
			ps = append(ps, problem(RuleAPIAuth, apiFunction, "has no route %s on %s; add an HttpApi event for it with Auth: Authorizer: NONE", r, api))
		case !isOpen:
			ps = append(ps, problem(RuleAPIAuth, apiFunction, "route %s on %s requires credentials; health checks and client generators call it without, so give it Auth: Authorizer: NONE", r, api))
		}
	}
	if isOpen, ok := open[catchAll]; !ok || isOpen {
		ps = append(ps, problem(RuleAPIAuth, apiFunction, "needs a route %s on %s authorized by %s, so every other path reaches the API's handler behind it", catchAll, api, spec.authorizer))
	}
	return ps
}

// httpRoutes lists every function's HttpApi events.
func httpRoutes(t *Template) ([]httpRoute, []Problem) {
	var routes []httpRoute
	var ps []Problem
	fns := t.CFN.GetAllServerlessFunctionResources()
	for _, fn := range slices.Sorted(maps.Keys(fns)) {
		for _, name := range slices.Sorted(maps.Keys(fns[fn].Events)) {
			ev := fns[fn].Events[name]
			if ev.Type != "HttpApi" {
				continue
			}
			if ev.Properties == nil || ev.Properties.HttpApiEvent == nil {
				ps = append(ps, problem(RuleAPIAuth, fn, "event %s's properties are not an HttpApi event goformation can read", name))
				continue
			}
			e := ev.Properties.HttpApiEvent
			r := httpRoute{
				function: fn, event: name,
				key:     route(strings.ToUpper(firstString(e.Method)) + " " + firstString(e.Path)),
				apiID:   firstString(e.ApiId),
				payload: firstString(e.PayloadFormatVersion),
			}
			if e.Auth != nil {
				r.authorizer = firstString(e.Auth.Authorizer)
			}
			routes = append(routes, r)
		}
	}
	return routes, ps
}

// checkRoute checks one route on the HTTP API api, authorized by auth.
func checkRoute(r httpRoute, api string, spec httpAPI, auth string) []Problem {
	var ps []Problem
	if r.function != apiFunction {
		ps = append(ps, problem(RuleAPIAuth, r.function, "serves route %s; every route belongs to %s, whose one handler holds all routes", r.key, apiFunction))
	}
	if r.payload != "2.0" {
		ps = append(ps, problem(RuleAPIAuth, r.function, "event %s (%s) has PayloadFormatVersion %q; the API's Lambda adapter reads 2.0", r.event, r.key, r.payload))
	}
	switch auth {
	case "NONE", "":
		if !slices.Contains(spec.open, r.key) {
			ps = append(ps, problem(RuleAPIAuth, r.function, "route %s on %s needs no credentials; only %v may be open there, everything else needs %s", r.key, api, spec.open, spec.authorizer))
		}
	case spec.authorizer:
	default:
		ps = append(ps, problem(RuleAPIAuth, r.function, "route %s on %s uses authorizer %q; every route of %s uses %s (a route has one authorizer: the other kind of caller has the other API)", r.key, api, auth, api, spec.authorizer))
	}
	return ps
}
