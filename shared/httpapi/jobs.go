package httpapi

import (
	"context"
	"net/http"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
)

// JobLister lists jobs newest first within namespaces; dynamo.JobStore is the real one.
type JobLister interface {
	List(ctx context.Context, namespaces []string, limit int, cursor string) (dynamo.JobPage, error)
}

var _ JobLister = (*dynamo.JobStore)(nil)

// listJobs answers the caller's tenant's jobs, newest first.
func (a *api) listJobs(w http.ResponseWriter, r *http.Request) error {
	limit, cursor, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	p := principalOf(r.Context())
	page, err := a.jobs.List(r.Context(), p.Tenant.Namespaces, limit, cursor)
	if err != nil {
		return err
	}
	items := page.Jobs
	if items == nil {
		items = []jobs.Job{}
	}
	return writeJSON(w, http.StatusOK, listPage[jobs.Job]{Items: items, NextCursor: nextCursor(page.Next)})
}
