package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// AuditLog keeps the record of every change a principal asks for; dynamo.AuditStore is the real
// one.
type AuditLog interface {
	Entry(r dynamo.AuditRecord) dynamo.AuditEntry
	Begin(ctx context.Context, r dynamo.AuditRecord) error
	Finish(ctx context.Context, r dynamo.AuditRecord, status int) error
	Audit(ctx context.Context, q dynamo.AuditQuery) ([]dynamo.AuditRecord, string, error)
}

var _ AuditLog = (*dynamo.AuditStore)(nil)

// detailUnaudited is the 503 of a change whose audit record could not be written: it is not made.
const detailUnaudited = "the change was not made: its audit record could not be written; try again"

// audited runs h, a change principal p asks for, recorded in the audit log: a change is never
// made unrecorded (if its record cannot be written, it is not made), and its record says how the
// request ended.
//
// A route that makes a job (inTransaction) writes the record in the transaction that stores the
// job (api.create), so the record and the change are one write; a request of such a route that
// stores no job (refused, or a replayed key) is recorded once it is answered. Every other route's
// record is written before its change and its status after; a process that dies between them
// leaves status 0: the change may or may not have been made, and the record says so.
func (a *api) audited(w http.ResponseWriter, r *http.Request, p tenancy.Principal, h handlerFunc) error {
	rec := dynamo.AuditRecord{
		At: a.now().UTC(), Tenant: p.Tenant.Name, Principal: p.Subject, RequestID: requestID(r.Context()),
		SourceIP: sourceIP(r), Action: r.Pattern, Path: r.URL.Path,
	}
	pending := &pendingAudit{}
	if inTransaction[r.Pattern] {
		r = r.WithContext(context.WithValue(r.Context(), keyAudit, pending))
	} else if err := a.audit.Begin(r.Context(), rec); err != nil {
		a.logger(r.Context()).ErrorContext(r.Context(), "writing an audit record", "err", err)
		return Errorf(CodeUnavailable, detailUnaudited)
	}
	status := http.StatusInternalServerError // a handler that panics answers 500
	defer func() {
		ctx := context.WithoutCancel(r.Context())
		var err error
		switch {
		case pending.written:
		case inTransaction[r.Pattern]:
			rec.Status = status
			err = a.audit.Begin(ctx, rec)
		default:
			err = a.audit.Finish(ctx, rec, status)
		}
		if err != nil {
			// A refusal, or a change recorded with status 0: its outcome unknown to the record.
			a.logger(r.Context()).WarnContext(r.Context(), "finishing an audit record", "err", err)
		}
	}()
	pending.rec = rec
	sw := &statusRecorder{ResponseWriter: w}
	err := h(sw, r)
	status = sw.status
	var apiErr *Error
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.Status()
	case err != nil:
		status = http.StatusInternalServerError
	}
	return err
}

// inTransaction are the routes that make a job (api.store), whose audit record is written in the
// transaction that stores it.
var inTransaction = map[string]bool{
	"POST /api/v1/jobs": true, "POST /api/v1/manifests": true, "POST /api/v1/templates/{name}/jobs": true,
	"POST /api/v1/jobs/{id}/retry": true,
}

// pendingAudit is the record of a request of an inTransaction route, until the job's transaction
// writes it.
type pendingAudit struct {
	rec     dynamo.AuditRecord
	written bool
}

// create stores job j as the JobStore's Create does, with the request's audit record in the same
// transaction when the request is audited so (inTransaction): its status is the 202 of a job made.
func (a *api) create(ctx context.Context, j jobs.Job, ev outbox.Event, idem *dynamo.Idempotency, now time.Time) (jobs.Job, bool, error) {
	pending, _ := ctx.Value(keyAudit).(*pendingAudit)
	if pending == nil || a.audit == nil {
		return a.jobs.Create(ctx, j, ev, idem, now)
	}
	rec := pending.rec
	rec.Status = http.StatusAccepted
	entry := a.audit.Entry(rec)
	stored, replayed, err := a.jobs.CreateAudited(ctx, j, ev, idem, &entry, now)
	pending.written = err == nil && !replayed
	return stored, replayed, err
}

// sourceIP is where the request came from: API Gateway's source IP, which its Lambda adapter
// puts in RemoteAddr, without the port.
func sourceIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// auditPage bounds one page of GET /api/v1/audit.
const (
	auditDefaultLimit = 100
	auditMaxLimit     = 1000
	auditDefaultRange = 30 * 24 * time.Hour
)

// auditLog is GET /api/v1/audit?from&to&action&limit&cursor&order: the caller's tenant's records,
// oldest first (newest first with order=newest); the operator's, every tenant's (or one's, with
// tenant).
func (a *api) auditLog(w http.ResponseWriter, r *http.Request) error {
	if a.audit == nil {
		return Errorf(CodeUnavailable, "this deployment keeps no audit log")
	}
	q := r.URL.Query()
	p := principalOf(r.Context())
	cursor, err := cursorParam(q)
	if err != nil {
		return err
	}
	aq := dynamo.AuditQuery{Tenant: p.Tenant.Name, Action: q.Get("action"), Limit: auditDefaultLimit, Cursor: cursor}
	var bad []FieldProblem
	aq.To = a.now().UTC()
	if s := q.Get("to"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			bad = append(bad, FieldProblem{"to", "must be a time in RFC 3339, such as 2026-12-01T00:00:00Z"})
		}
		aq.To = t
	}
	aq.From = aq.To.Add(-auditDefaultRange)
	if s := q.Get("from"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			bad = append(bad, FieldProblem{"from", "must be a time in RFC 3339, such as 2026-11-01T00:00:00Z"})
		}
		aq.From = t
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > auditMaxLimit {
			bad = append(bad, FieldProblem{"limit", "must be a whole number from 1 to 1000"})
		}
		aq.Limit = n
	}
	switch q.Get("order") {
	case "", "oldest":
	case "newest":
		aq.NewestFirst = true
	default:
		bad = append(bad, FieldProblem{"order", "oldest (the default) or newest"})
	}
	switch t := q.Get("tenant"); {
	case t != "" && !p.Tenant.Operator:
		bad = append(bad, FieldProblem{"tenant", "only the operator reads another tenant's records; leave it out to read your own"})
	case p.Tenant.Operator:
		aq.Tenant = t // "" for every tenant's
	}
	if len(bad) > 0 {
		return Invalid("fix the listed query parameters", bad...)
	}
	recs, next, err := a.audit.Audit(r.Context(), aq)
	if errors.Is(err, dynamo.ErrBadAuditCursor) {
		return Invalid("the cursor is not one this listing gave", FieldProblem{"cursor", "use next_cursor from the page before, unchanged"})
	}
	if err != nil {
		return err
	}
	if recs == nil {
		recs = []dynamo.AuditRecord{}
	}
	return writeJSON(w, http.StatusOK, listPage[dynamo.AuditRecord]{Items: recs, NextCursor: nextCursor(next)})
}
