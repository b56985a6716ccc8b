package httpapi

import (
	"cmp"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tidegate/tidegate/shared/tenancy"
)

// maxBuckets bounds the request budgets one API process keeps: one a credential, as many as
// PrincipalCache keeps. A bucket, its map entry and its place in the LRU list are about 150
// bytes, so at most about 600 KiB; a credential forgotten since starts again full, as an idle one
// would be.
const maxBuckets = 4096

// Costs, in tokens of a tenant's budget, of its requests; README's "Rate limits" lists them.
const (
	// costRequest is what most requests take: each reads or writes a handful of records.
	costRequest = 1
	// costPerNamespace is what a job listing takes for each namespace it reads: a listing queries
	// the jobs' index once a namespace and merges the pages (ARCHITECTURE.md's Data). `?namespace=`
	// narrows it to one.
	costPerNamespace = 1
	// costStatsPerRegion is what the queue's stats take for each region: a query of each of its
	// four active shards, reading every tenant's active jobs there (as many as its capacity lets
	// run), and one item counted of each of its queues; the queued jobs come from the census.
	costStatsPerRegion = 5
)

// costly are the routes that may take more than costRequest, and what they take it for.
var costly = map[string]cost{
	"GET /api/v1/jobs":              {perNamespace: costPerNamespace},
	"POST /api/v1/jobs/bulk-delete": {perNamespace: costPerNamespace}, // its namespace is in the body: every one is charged
	"GET /api/v1/queue/stats":       {perRegion: costStatsPerRegion},
	"GET /api/v1/costs":             {perNamespace: costPerNamespace}, // a listing of the tenant's jobs, as GET /api/v1/jobs
}

// cost is what a costly route takes for each namespace it reads and each region.
type cost struct{ perNamespace, perRegion int }

// requestCost is what a request to the route pattern takes from tenant t's budget, given its query
// and the API's number of regions: never less than costRequest.
func requestCost(pattern string, q url.Values, t tenancy.Tenant, regions int) int {
	c, ok := costly[pattern]
	if !ok {
		return costRequest
	}
	namespaces := len(t.Namespaces)
	if q.Get("namespace") != "" {
		namespaces = 1
	}
	return max(costRequest, c.perNamespace*namespaces+c.perRegion*regions)
}

// throttle takes the request's cost from its principal's budget, or answers 429 with Retry-After
// when the budget cannot pay it. Each credential (an API key, or the IAM user, role or account an
// admin mapped) has a bucket of its own at its tenant's rate, so one key's loop leaves the
// tenant's other keys, and every other tenant, alone. Only an admin adds credentials, and a
// role's sessions share the role's bucket, so a tenant cannot buy itself more budget. The bucket's
// name comes from the resolved record, never from the request, so no caller reaches another's.
func (a *api) throttle(w http.ResponseWriter, r *http.Request, p tenancy.Principal) error {
	limit := p.Tenant.Rate(a.rate)
	n := requestCost(r.Pattern, r.URL.Query(), p.Tenant, len(a.regions))
	d := a.buckets.Take(bucketOf(p), limit, n, a.now())
	if d.Allowed {
		return nil
	}
	secs := retryAfter(d.Wait)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return Errorf(CodeThrottled, detailThrottled, cmp.Or(p.Credential, p.Subject), p.Tenant.Name, limit.Rate, limit.Burst, n, secs)
}

// bucketOf names p's bucket: its tenant and credential, so a credential moved to another tenant
// starts afresh at that tenant's rate. A principal resolved without a credential (none is, from
// the stores) shares its subject's.
func bucketOf(p tenancy.Principal) string {
	return p.Tenant.Name + " " + cmp.Or(p.Credential, p.Subject)
}

// retryAfter is wait in whole seconds, rounded up and at least 1, as Retry-After carries it.
func retryAfter(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}
