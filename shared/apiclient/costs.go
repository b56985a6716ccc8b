package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// CostGroup is one group of a Costs answer: its key, the sum of its jobs' estimates, how many
// jobs, and how many of them had an incomplete estimate or none.
type CostGroup struct {
	Key        string  `json:"key"`
	Total      float64 `json:"total"`
	Jobs       int     `json:"jobs"`
	Incomplete int     `json:"incomplete_jobs"`
}

// Costs are the finished jobs' cost estimates summed by group.
type Costs struct {
	Currency  string      `json:"currency"`
	GroupBy   string      `json:"group_by"`
	From      time.Time   `json:"from"`
	To        time.Time   `json:"to"`
	Total     float64     `json:"total"`
	Groups    []CostGroup `json:"groups"`
	JobsRead  int         `json:"jobs_read"`
	Truncated bool        `json:"truncated"`

	raw json.RawMessage
}

type plainCosts Costs

// UnmarshalJSON keeps the API's JSON along with the fields.
func (c *Costs) UnmarshalJSON(b []byte) error { return keep(b, (*plainCosts)(c), &c.raw) }

// MarshalJSON gives back the API's JSON.
func (c Costs) MarshalJSON() ([]byte, error) { return give(c.raw, plainCosts(c)) }

// Costs sums the cost estimates of the jobs that ended in [from, to) by groupBy (tenant,
// namespace or label:KEY); an empty argument is the API's default.
func (c *Client) Costs(ctx context.Context, groupBy, from, to string) (Costs, error) {
	q := url.Values{}
	for k, v := range map[string]string{"group_by": groupBy, "from": from, "to": to} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out Costs
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/costs", query: q}, &out)
}
