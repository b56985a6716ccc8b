package httpapi

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tidegate/tidegate/shared/tenancy"
)

// maxBuckets bounds the request budgets one API process keeps: one a tenant, so as many tenants as
// PrincipalCache keeps credentials. A bucket, its map entry and its place in the LRU list are
// about 150 bytes, so at most about 600 KiB; a tenant forgotten since starts again full, as an
// idle one would be.
const maxBuckets = 4096

// Costs, in tokens of a tenant's budget, of its requests; README's "Rate limits" lists them.
const (
	// costRequest is what most requests take: each reads or writes a handful of records.
	costRequest = 1
	// costPerNamespace is what a job listing takes for each namespace it reads: a listing queries
	// the jobs' index once a namespace and merges the pages (ARCHITECTURE.md's Data). `?namespace=`
	// narrows it to one.
	costPerNamespace = 1
	// costStatsPerRegion is what the queue's stats take for each region: one query of the region's
	// queue and one of each of its four active shards, reading every tenant's jobs there to count
	// the caller's.
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

// throttle takes the request's cost from its principal's tenant's budget, or answers 429 with
// Retry-After when the budget cannot pay it. The bucket is the tenant's, whichever of its keys or
// IAM callers sent the request: the budget is set on the tenant, and more credentials must not
// buy more of it. The name comes from the resolved record, never from the request, so no tenant
// reaches another's bucket.
func (a *api) throttle(w http.ResponseWriter, r *http.Request, p tenancy.Principal) error {
	limit := p.Tenant.Rate(a.rate)
	n := requestCost(r.Pattern, r.URL.Query(), p.Tenant, len(a.regions))
	d := a.buckets.Take(p.Tenant.Name, limit, n, a.now())
	if d.Allowed {
		return nil
	}
	secs := retryAfter(d.Wait)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return Errorf(CodeThrottled, detailThrottled, p.Tenant.Name, limit.Rate, limit.Burst, n, secs)
}

// retryAfter is wait in whole seconds, rounded up and at least 1, as Retry-After carries it.
func retryAfter(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}
