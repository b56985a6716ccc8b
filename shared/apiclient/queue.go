package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// RegionStats are one region's counts of the caller's live jobs, and its capacity.
type RegionStats struct {
	Region        string         `json:"region"`
	Counts        map[string]int `json:"counts"`
	Gated         int            `json:"gated"`
	CapacityLimit int            `json:"capacity_limit"`
	CapacityInUse int            `json:"capacity_in_use"`
	// LongRunning are the caller's long-running jobs (Deployments, StatefulSets), which Counts
	// leaves out.
	LongRunning LongRunningStats `json:"long_running"`
	// Flavors are the region's flavors: capacity and use per resource, and the tenants' shares.
	Flavors []FlavorStats `json:"flavors"`
	// Reach is whether Tidegate reaches the region's cluster, and whether it admits (State).
	Reach *RegionReach `json:"reach"`
}

// RegionReach is a region's reachability and admission state.
type RegionReach struct {
	State               string  `json:"state"`
	ConsecutiveFailures int     `json:"consecutive_failures"`
	UnreachableSeconds  float64 `json:"unreachable_seconds"`
	FencedAttempts      int     `json:"fenced_attempts"`
}

// FlavorStats is one flavor of a region: what it has and what the active jobs hold, per
// resource, and each tenant's share the caller may see (its own; every one for the operator).
type FlavorStats struct {
	Name       string              `json:"name"`
	NodeLabels map[string]string   `json:"node_labels"`
	Capacity   map[string]string   `json:"capacity"`
	InUse      map[string]string   `json:"in_use"`
	Tenants    []FlavorTenantStats `json:"tenants"`
}

// FlavorTenantStats is one tenant's use of a flavor beside its quota, per resource.
type FlavorTenantStats struct {
	Tenant   string            `json:"tenant"`
	InUse    map[string]string `json:"in_use"`
	Nominal  map[string]string `json:"nominal"`
	Borrowed map[string]string `json:"borrowed"`
	Lent     map[string]string `json:"lent"`
}

// LongRunningStats are a region's long-running jobs by status, and how they share the region.
type LongRunningStats struct {
	Counts         map[string]int `json:"counts"`
	HoldsSlot      bool           `json:"holds_slot"`
	PerTenantLimit int            `json:"per_tenant_limit"`
}

// QueueStats are the queue's numbers per region.
type QueueStats struct {
	Regions []RegionStats `json:"regions"`
	// Held: the operator holds the caller's tenant; none of its jobs is dispatched.
	Held bool `json:"held"`

	raw json.RawMessage
}

type plainStats QueueStats

// UnmarshalJSON keeps the API's JSON along with the fields.
func (s *QueueStats) UnmarshalJSON(b []byte) error { return keep(b, (*plainStats)(s), &s.raw) }

// MarshalJSON gives back the API's JSON.
func (s QueueStats) MarshalJSON() ([]byte, error) { return give(s.raw, plainStats(s)) }

// QueueStats reads the queue's numbers per region.
func (c *Client) QueueStats(ctx context.Context) (QueueStats, error) {
	var out QueueStats
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/queue/stats"}, &out)
}

// Ahead is GET /api/v1/queue/{region}/ahead: what is ahead of a queued job, the caller's own apart.
type Ahead struct {
	Region         string            `json:"region"`
	Job            string            `json:"job"`
	JobsAhead      int               `json:"jobs_ahead"`
	OwnJobsAhead   int               `json:"own_jobs_ahead"`
	DemandAhead    map[string]string `json:"demand_ahead"`
	OwnDemandAhead map[string]string `json:"own_demand_ahead"`
	Complete       bool              `json:"complete"`
}

// QueueAhead reads what is ahead of queued job id in region's queue.
func (c *Client) QueueAhead(ctx context.Context, region, id string) (Ahead, error) {
	var out Ahead
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/queue/" + pathEscape(region) + "/ahead", query: url.Values{"job": {id}}}, &out)
}
