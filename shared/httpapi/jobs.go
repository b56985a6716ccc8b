package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/unblock"
)

// JobStore keeps job records; dynamo.JobStore is the real one.
type JobStore interface {
	List(ctx context.Context, f jobs.Filter, limit int, cursor string) (jobs.Page, error)
	Job(ctx context.Context, id string) (jobs.Job, error)
	Create(ctx context.Context, j jobs.Job, ev outbox.Event, idem *dynamo.Idempotency, now time.Time) (jobs.Job, bool, error)
	// CreateAudited is Create with the request's audit record in the same transaction.
	CreateAudited(ctx context.Context, j jobs.Job, ev outbox.Event, idem *dynamo.Idempotency, audit *dynamo.AuditEntry, now time.Time) (jobs.Job, bool, error)
	Apply(ctx context.Context, j jobs.Job, c jobs.Change) error
	Active(ctx context.Context, region string) ([]jobs.Job, error)
	QueuePosition(ctx context.Context, j jobs.Job) (int, error)
	// Ahead reads the tenants and demands of the jobs ahead of a queued job (queue/{region}/ahead).
	Ahead(ctx context.Context, j jobs.Job, region string) ([]dynamo.Waiting, bool, error)
	Purge(ctx context.Context, j jobs.Job) error
	// SpotPriceHistories reads what the drains kept of a region's spot prices.
	SpotPriceHistories(ctx context.Context, region string, instanceTypes []string, now time.Time) (map[string][]jobs.PricePoint, error)
	// Censuses are the queues as the drains last counted them, by tenant, and Waiting says which
	// queues hold any job now: the queue stats and the caps of queued jobs read them, never a queue.
	Censuses(ctx context.Context, regions []string) (map[string]dynamo.RegionCensus, error)
	Waiting(ctx context.Context, regions []string) (map[string]bool, bool, error)
	// Replay answers the job an Idempotency-Key already made, for a submission refused at its cap.
	Replay(ctx context.Context, idem dynamo.Idempotency, now time.Time) (jobs.Job, bool, error)
	// Decisions reads the newest of what was decided about a job (jobs.Decision).
	Decisions(ctx context.Context, id string, limit int) ([]jobs.Decision, error)
	// Dependencies reads the id, tenant, namespace and status of the jobs a submission names in
	// its depends_on.
	Dependencies(ctx context.Context, ids []string) ([]jobs.Job, error)
	// A job cancelled releases its dependents at once (unblock).
	unblock.Store
	// Health is whether the beat reaches each region's cluster, for the queue stats.
	Health(ctx context.Context, regions []string) (map[string]dynamo.RegionHealth, error)
	// An array's: its children stored before it, its ends counted so far.
	CreateChildren(ctx context.Context, children []jobs.Job, progress func(done int)) error
	ArrayEnds(ctx context.Context, parent string) (jobs.ArrayEnds, error)
}

var _ JobStore = (*dynamo.JobStore)(nil)

// listJobs answers the caller's tenant's jobs, filtered and sorted as asked.
func (a *api) listJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, cursor, err := pageParams(q)
	if err != nil {
		return err
	}
	f, err := a.jobFilter(r.Context(), q)
	if err != nil {
		return err
	}
	page, err := a.jobs.List(r.Context(), f, limit, cursor)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, listPage[jobs.Job]{Items: page.Jobs, NextCursor: nextCursor(page.Next)})
}

// jobFilter reads a listing's filters, every problem at once.
func (a *api) jobFilter(ctx context.Context, q url.Values) (jobs.Filter, error) {
	tenant := principalOf(ctx).Tenant
	f := jobs.Filter{Namespaces: tenant.Namespaces, Region: q.Get("region")}
	var bad []FieldProblem
	if ns := q.Get("namespace"); ns != "" {
		if !tenant.Allows(ns) {
			return f, Errorf(CodeForbidden, "namespace %q is not one of tenant %s's: %s", ns, tenant.Name, strings.Join(tenant.Namespaces, ", "))
		}
		f.Namespaces = []string{ns}
	}
	if f.Parent = q.Get("parent"); f.Parent != "" {
		p, err := a.jobs.Job(ctx, f.Parent)
		if errors.Is(err, records.ErrNotFound) || err == nil && (!p.Group() || !tenant.Allows(p.Namespace)) {
			return f, Errorf(CodeNotFound, "no array job or workflow %q in your namespaces", f.Parent)
		}
		if err != nil {
			return f, err
		}
	}
	if f.Region != "" && !slices.Contains(a.regions, f.Region) {
		bad = append(bad, FieldProblem{"region", "must be one of " + strings.Join(a.regions, ", ")})
	}
	if s := q.Get("status"); s != "" {
		st, ok := jobs.ParseStatusFilter(s)
		if !ok {
			bad = append(bad, FieldProblem{"status", "must be one of blocked, queued, dispatching, pending, running, succeeded (or completed), failed, cancelled"})
		}
		f.Status = st
	}
	if s := q.Get("label_selector"); s != "" {
		labels, err := parseLabelSelector(s)
		if err != nil {
			bad = append(bad, FieldProblem{"label_selector", err.Error()})
		}
		f.Labels = labels
	}
	switch q.Get("sort") {
	case "", "created_at:desc":
	case "created_at:asc":
		f.Ascending = true
	case "priority:desc":
		f.ByPriority = true
	case "priority:asc":
		f.ByPriority, f.Ascending = true, true
	case "name:asc":
		f.ByName, f.Ascending = true, true
	case "name:desc":
		f.ByName = true
	default:
		bad = append(bad, FieldProblem{"sort", "must be created_at:desc, created_at:asc, priority:desc, priority:asc, name:asc or name:desc"})
	}
	if f.Name = q.Get("name"); f.Name != "" && !validNameFilter(f.Name) {
		bad = append(bad, FieldProblem{"name", "a job's name (lowercase letters, digits, '-' and '.', at most 253), or its start followed by *"})
	}
	if len(bad) > 0 {
		return f, Invalid("fix the listed query parameters", bad...)
	}
	return f, nil
}

// validNameFilter: a Kubernetes object name (DNS subdomain characters), or its start then "*".
func validNameFilter(s string) bool {
	s = strings.TrimSuffix(s, "*")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// parseLabelSelector reads "k=v,k2=v2": equality only, as API.md defines it.
func parseLabelSelector(s string) (map[string]string, error) {
	out := map[string]string{}
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || !labelKey.MatchString(k) || !labelValue.MatchString(v) {
			return nil, errors.New("must be key=value pairs separated by commas, with Kubernetes label keys and values (" + part + ")")
		}
		out[k] = v
	}
	return out, nil
}

// getJob answers one job with its manifests. A job outside the caller's namespaces is not found:
// its existence is not the caller's to know.
func (a *api) getJob(w http.ResponseWriter, r *http.Request) error {
	j, err := a.visibleJob(r)
	if err != nil {
		return err
	}
	if j.Group() {
		// A parent runs nothing of its own: what it has is its children's count.
		if err := a.withArrayStatus(r.Context(), &j); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, jobView{Job: j, Workloads: jobs.Workloads(j.Manifests)})
	}
	if j.Status.Active() && a.unreached(r.Context(), j.Region) {
		// Its region's cluster is out of reach: it waits for it (or, asked to, for another
		// region once this one is lost), and no live read would answer.
		j.PendingReason = string(admission.ReasonRegionUnreachable)
		return writeJSON(w, http.StatusOK, jobView{Job: j, Workloads: jobs.Workloads(j.Manifests), ClusterJobs: j.ClusterJobs})
	}
	j.Placement = a.livePlacement(r.Context(), j)
	j.Exits = a.liveExits(r.Context(), j)
	if j.Status == jobs.StatusQueued {
		// Counted now: no drain writes every waiting job's place as the queue moves.
		if j.QueuePosition, err = a.jobs.QueuePosition(r.Context(), j); err != nil {
			return err
		}
	}
	v := jobView{Job: j, Workloads: jobs.Workloads(j.Manifests)}
	v.ClusterJobs, v.ClusterJobsError = a.liveBatchJobs(r.Context(), j)
	v.Serving, v.ServingError = a.liveServing(r.Context(), j) // a long-running job's (servinglive.go)
	if !live(j) {
		v.ClusterJobs = j.ClusterJobs
	}
	return writeJSON(w, http.StatusOK, v)
}

// jobView is GET /api/v1/jobs/{id}: the record, what its manifests ask of each workload, and its
// batch Jobs' status: live while the job is active, as kept at its end after.
type jobView struct {
	jobs.Job
	Workloads        []jobs.Workload   `json:"workloads"`
	ClusterJobs      []jobs.ClusterJob `json:"cluster_jobs,omitempty"`
	ClusterJobsError string            `json:"cluster_jobs_error,omitempty"`
	Serving          []servingView     `json:"serving,omitempty"`
	ServingError     string            `json:"serving_error,omitempty"`
}

// unreached says whether the beat's (or a drain's) last call to region's cluster failed, as its
// health record says. A record that cannot be read says nothing: the live reads then say why.
func (a *api) unreached(ctx context.Context, region string) bool {
	health, err := a.jobs.Health(ctx, []string{region})
	return err == nil && health[region].Failures > 0
}

func (a *api) visibleJob(r *http.Request) (jobs.Job, error) {
	id := r.PathValue("id")
	j, err := a.jobs.Job(r.Context(), id)
	if errors.Is(err, records.ErrNotFound) || (err == nil && !principalOf(r.Context()).Tenant.Allows(j.Namespace)) {
		return jobs.Job{}, Errorf(CodeNotFound, "no job %q in your namespaces", id)
	}
	return j, err
}

// jobDecisions answers the newest decisions about one of the caller's jobs, newest first, at most
// limit (jobs.MaxDecisions): what was decided and what from. They name nothing of another
// tenant, so reading them needs no more than reading the job.
func (a *api) jobDecisions(w http.ResponseWriter, r *http.Request) error {
	limit := jobs.MaxDecisions
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > jobs.MaxDecisions {
			return Invalid(fmt.Sprintf("limit must be a whole number from 1 to %d", jobs.MaxDecisions), FieldProblem{"limit", fmt.Sprintf("1 to %d", jobs.MaxDecisions)})
		}
		limit = n
	}
	j, err := a.visibleJob(r)
	if err != nil {
		return err
	}
	ds, err := a.jobs.Decisions(r.Context(), j.ID, limit)
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []jobs.Decision{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"items": ds})
}
