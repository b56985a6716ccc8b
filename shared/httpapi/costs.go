package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/costing"
	"github.com/tidegate/tidegate/shared/jobs"
)

const (
	// costsDefaultRange is the range GET /api/v1/costs sums when from is not given.
	costsDefaultRange = 30 * 24 * time.Hour
	// costsMaxRange bounds the range one request may ask for: a year, leap day included.
	costsMaxRange = 366 * 24 * time.Hour
	// costsMaxJobs bounds how many job records one request reads; an answer that stopped there
	// says truncated.
	costsMaxJobs = 5000
	// costsPage is how many records one read of the listing takes.
	costsPage = 500
)

// costGroup is one group of GET /api/v1/costs: its key (a tenant, a namespace, a group, a day
// as 2026-11-10, or a label's value, "" for jobs without the label), the sum of its jobs'
// estimates, how many jobs, and how many of those had an incomplete estimate (or none: jobs that
// ended before costs were kept).
type costGroup struct {
	Key        string  `json:"key"`
	Total      float64 `json:"total"`
	Jobs       int     `json:"jobs"`
	Incomplete int     `json:"incomplete_jobs"`
}

// costsAnswer is GET /api/v1/costs's answer.
type costsAnswer struct {
	Currency  string      `json:"currency"`
	GroupBy   string      `json:"group_by"`
	From      time.Time   `json:"from"`
	To        time.Time   `json:"to"`
	Total     float64     `json:"total"`
	Groups    []costGroup `json:"groups"`
	JobsRead  int         `json:"jobs_read"`
	Truncated bool        `json:"truncated"`
}

// costs is GET /api/v1/costs: the cost estimates of the jobs that ended in [from, to), summed by
// tenant, namespace, group, the UTC day each ended or label:KEY. A caller sees its own tenant's
// jobs; the operator every tenant's. It reads at most costsMaxJobs records, newest first, and says truncated when it stopped there.
func (a *api) costs(w http.ResponseWriter, r *http.Request) error {
	out, groupKey, err := a.costParams(r.URL.Query())
	if err != nil {
		return err
	}
	namespaces, err := a.costNamespaces(r.Context())
	if err != nil {
		return err
	}
	groups := map[string]*costGroup{}
	// The namespaces' jobs, arrays among them, then their workflows, whose jobs are listed
	// under them.
	for _, workflows := range []bool{false, true} {
		if err := a.sumCosts(r.Context(), groups, groupKey, &out, jobs.Filter{Namespaces: namespaces, Workflows: workflows}); err != nil {
			return err
		}
	}
	for _, g := range groups {
		g.Total = costing.Round(g.Total)
		out.Total += g.Total
		out.Groups = append(out.Groups, *g)
	}
	out.Total = costing.Round(out.Total)
	slices.SortFunc(out.Groups, func(x, y costGroup) int { return cmp.Compare(x.Key, y.Key) })
	return writeJSON(w, http.StatusOK, out)
}

// sumCosts counts the estimates of the jobs f lists, reading at most costsMaxJobs in all.
func (a *api) sumCosts(ctx context.Context, groups map[string]*costGroup, key func(jobs.Job, string) string, out *costsAnswer, f jobs.Filter) error {
	for cursor := ""; len(f.Namespaces) > 0 && !out.Truncated; {
		if out.JobsRead >= costsMaxJobs {
			out.Truncated = true
			return nil
		}
		page, err := a.jobs.List(ctx, f, min(costsPage, costsMaxJobs-out.JobsRead), cursor)
		if err != nil {
			return err
		}
		out.JobsRead += len(page.Jobs)
		for _, j := range page.Jobs {
			if err := a.addCosts(ctx, groups, key, out, j, j.ID); err != nil {
				return err
			}
		}
		if cursor = page.Next; cursor == "" {
			return nil
		}
	}
	return nil
}

// addCosts counts job j's estimate into its group if it ended in the answer's range; of an array
// or a workflow, which runs nothing itself, its children's (listed under it, not among the
// namespace's jobs), each in the group of top, the outermost array or workflow it belongs to.
func (a *api) addCosts(ctx context.Context, groups map[string]*costGroup, key func(jobs.Job, string) string, out *costsAnswer, j jobs.Job, top string) error {
	if !j.Group() {
		if end, ok := endedAt(j); ok && !end.Before(out.From) && end.Before(out.To) {
			addCost(groups, key(j, top), j.Cost)
		}
		return nil
	}
	for cursor := ""; ; {
		if out.JobsRead >= costsMaxJobs {
			out.Truncated = true
			return nil
		}
		page, err := a.jobs.List(ctx, jobs.Filter{Parent: j.ID}, min(costsPage, costsMaxJobs-out.JobsRead), cursor)
		if err != nil {
			return err
		}
		out.JobsRead += len(page.Jobs)
		for _, c := range page.Jobs {
			if err := a.addCosts(ctx, groups, key, out, c, top); err != nil {
				return err
			}
		}
		if cursor = page.Next; cursor == "" {
			return nil
		}
	}
}

// addCost counts one ended job's estimate into its group.
func addCost(groups map[string]*costGroup, key string, c *jobs.Cost) {
	g := groups[key]
	if g == nil {
		g = &costGroup{Key: key}
		groups[key] = g
	}
	g.Jobs++
	if c == nil || !c.Complete {
		g.Incomplete++
	}
	if c != nil {
		g.Total += c.Total
	}
}

// costParams reads group_by, from and to, every problem at once, into an answer to fill and
// the key a job is grouped by.
func (a *api) costParams(q url.Values) (costsAnswer, func(jobs.Job, string) string, error) {
	out := costsAnswer{Currency: costing.Currency, Groups: []costGroup{}, GroupBy: cmp.Or(q.Get("group_by"), "tenant")}
	var bad []FieldProblem
	var key func(j jobs.Job, top string) string
	switch label, isLabel := strings.CutPrefix(out.GroupBy, "label:"); {
	case out.GroupBy == "tenant":
		key = func(j jobs.Job, _ string) string { return j.Tenant }
	case out.GroupBy == "namespace":
		key = func(j jobs.Job, _ string) string { return j.Namespace }
	case out.GroupBy == "group":
		// The array or workflow a job belongs to (its own id for a job of neither): what one
		// array or workflow cost in all.
		key = func(_ jobs.Job, top string) string { return top }
	case out.GroupBy == "day":
		// The UTC day the job ended, 2026-11-10: a spend-by-day chart in one request.
		key = func(j jobs.Job, _ string) string {
			end, _ := endedAt(j) // addCosts groups ended jobs only
			return end.UTC().Format(time.DateOnly)
		}
	case isLabel && label != "" && len(label) <= 317:
		key = func(j jobs.Job, _ string) string { return j.Labels[label] }
	default:
		bad = append(bad, FieldProblem{"group_by", "must be tenant, namespace, group, day or label:KEY"})
	}
	var err error
	out.To = a.now().UTC()
	if s := q.Get("to"); s != "" {
		if out.To, err = time.Parse(time.RFC3339, s); err != nil {
			bad = append(bad, FieldProblem{"to", "must be a time in RFC 3339, such as 2026-12-01T00:00:00Z"})
		}
	}
	out.From = out.To.Add(-costsDefaultRange)
	if s := q.Get("from"); s != "" {
		if out.From, err = time.Parse(time.RFC3339, s); err != nil {
			bad = append(bad, FieldProblem{"from", "must be a time in RFC 3339, such as 2026-11-01T00:00:00Z"})
		}
	}
	if len(bad) == 0 && !out.From.Before(out.To) {
		bad = append(bad, FieldProblem{"from", "must be before to"})
	} else if len(bad) == 0 && out.To.Sub(out.From) > costsMaxRange {
		bad = append(bad, FieldProblem{"from", "must be at most 366 days before to"})
	}
	if len(bad) > 0 {
		return out, nil, Invalid("fix the listed query parameters", bad...)
	}
	out.From, out.To = out.From.UTC(), out.To.UTC()
	return out, key, nil
}

// costNamespaces are the namespaces whose jobs the caller's costs sum: its tenant's, whatever its
// role, or, for the operator, every tenant's.
func (a *api) costNamespaces(ctx context.Context) ([]string, error) {
	tenant := principalOf(ctx).Tenant
	if !tenant.Operator {
		return tenant.Namespaces, nil
	}
	all, err := a.principals.Tenants(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range all {
		out = append(out, t.Namespaces...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// endedAt is when job j ended, if it has.
func endedAt(j jobs.Job) (time.Time, bool) {
	if !j.Status.Terminal() || len(j.StatusHistory) == 0 {
		return time.Time{}, false
	}
	return j.StatusHistory[len(j.StatusHistory)-1].At, true
}
