package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// AuditRecord is one change a principal asked for, recorded before it was made, and its outcome
// (Status 0 while not known).
type AuditRecord struct {
	At        time.Time `json:"at"`
	Tenant    string    `json:"tenant"`
	Principal string    `json:"principal"`
	RequestID string    `json:"request_id"`
	SourceIP  string    `json:"source_ip,omitempty"`
	Action    string    `json:"action"`
	Path      string    `json:"path"`
	Status    int       `json:"status"`
}

// AuditFilter chooses records: in [From, To) (RFC 3339; the API's defaults when empty), of one
// Action (a route, such as "DELETE /api/v1/jobs/{id}"), of one Tenant (the operator only).
type AuditFilter struct {
	From, To, Action, Tenant string
}

// Audit reads one page of the caller's audit log (every tenant's for the operator), oldest first.
func (c *Client) Audit(ctx context.Context, f AuditFilter, o ListOptions) (Page[AuditRecord], error) {
	q := url.Values{}
	for k, v := range map[string]string{"from": f.From, "to": f.To, "action": f.Action, "tenant": f.Tenant, "cursor": o.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	var out Page[AuditRecord]
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/audit", query: q}, &out)
}
