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

// checkHTTPAPI checks that the one HTTP API authorizes with IAM by default, that only the open
// routes opt out, and that every route reaches the API function with payload format 2.0.
func checkHTTPAPI(t *Template) []Problem {
	apis := t.CFN.GetAllServerlessHttpApiResources()
	if len(apis) != 1 {
		return []Problem{problem(RuleAPIAuth, "", "want one %s, found %d", typeHttpApi, len(apis))}
	}
	api := slices.Collect(maps.Keys(apis))[0]
	defaultAuth := ""
	if a := apis[api].Auth; a != nil {
		defaultAuth = firstString(a.DefaultAuthorizer)
	}
	var ps []Problem
	if enabled, _ := dig(t.resource(api), "Properties", "Auth", "EnableIamAuthorizer").(bool); !enabled || defaultAuth != iamAuthorizer {
		ps = append(ps, problem(RuleAPIAuth, api, "Auth must set EnableIamAuthorizer: true and DefaultAuthorizer: %s, so every route needs a signed caller unless it opts out", iamAuthorizer))
	}
	routes, rps := httpRoutes(t)
	ps = append(ps, rps...)
	open := map[route]bool{}
	for _, r := range routes {
		auth := cmp.Or(r.authorizer, defaultAuth)
		open[r.key] = auth == "NONE" || auth == ""
		ps = append(ps, checkRoute(r, api, auth)...)
	}
	for _, r := range openRoutes {
		isOpen, ok := open[r]
		switch {
		case !ok:
			ps = append(ps, problem(RuleAPIAuth, apiFunction, "has no route %s; add an HttpApi event for it with Auth: Authorizer: NONE", r))
		case !isOpen:
			ps = append(ps, problem(RuleAPIAuth, apiFunction, "route %s requires a signature; health checks and client generators call it unsigned, so give it Auth: Authorizer: NONE", r))
		}
	}
	if isOpen, ok := open[catchAll]; !ok || isOpen {
		ps = append(ps, problem(RuleAPIAuth, apiFunction, "needs an IAM-authorized route %s so every other path reaches the API's handler behind a signature", catchAll))
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

// checkRoute checks one route, authorized by auth, on the HTTP API api.
func checkRoute(r httpRoute, api, auth string) []Problem {
	var ps []Problem
	if ref, ok := wholeRef(r.apiID); !ok || ref.id != api {
		ps = append(ps, problem(RuleAPIAuth, r.function, "event %s (%s) has ApiId %s; set ApiId: !Ref %s, or SAM puts the route on an implicit API without IAM auth", r.event, r.key, describeRef(r.apiID), api))
	}
	if r.function != apiFunction {
		ps = append(ps, problem(RuleAPIAuth, r.function, "serves route %s; every route belongs to %s, whose one handler holds all routes", r.key, apiFunction))
	}
	if r.payload != "2.0" {
		ps = append(ps, problem(RuleAPIAuth, r.function, "event %s (%s) has PayloadFormatVersion %q; the API's Lambda adapter reads 2.0", r.event, r.key, r.payload))
	}
	switch auth {
	case "NONE", "":
		if !slices.Contains(openRoutes, r.key) {
			ps = append(ps, problem(RuleAPIAuth, r.function, "route %s needs no signature; only %v may be open, everything else needs an IAM caller", r.key, openRoutes))
		}
	case iamAuthorizer:
	default:
		ps = append(ps, problem(RuleAPIAuth, r.function, "route %s uses authorizer %q; callers are IAM principals, so use %s", r.key, auth, iamAuthorizer))
	}
	return ps
}
