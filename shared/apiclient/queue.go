package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
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
