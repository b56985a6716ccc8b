package httpapi

import (
	"errors"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// aheadView is GET /api/v1/queue/{region}/ahead: how much is ahead of one of the caller's queued
// jobs in a region's queue, and how much of it is the caller's own. No other tenant's name, job
// or spec is in it: only counts and summed demand.
type aheadView struct {
	Region         string            `json:"region"`
	Job            string            `json:"job"`
	JobsAhead      int               `json:"jobs_ahead"`
	OwnJobsAhead   int               `json:"own_jobs_ahead"`
	DemandAhead    map[string]string `json:"demand_ahead"`
	OwnDemandAhead map[string]string `json:"own_demand_ahead"`
	// Complete says every job ahead was counted; false past dynamo.AheadCounted.
	Complete bool `json:"complete"`
}

// queueAhead is GET /api/v1/queue/{region}/ahead?job=ID, for a job of the caller's namespaces
// queued in region (or allowing it, for a job of several regions).
func (a *api) queueAhead(w http.ResponseWriter, r *http.Request) error {
	region := r.PathValue("region")
	if !slices.Contains(a.regions, region) {
		return Errorf(CodeNotFound, "no region %q; the regions are %v", region, a.regions)
	}
	id := r.URL.Query().Get("job")
	if id == "" {
		return Invalid("job is required: the id of your queued job", FieldProblem{"job", "required"})
	}
	j, err := a.jobs.Job(r.Context(), id)
	if errors.Is(err, records.ErrNotFound) || err == nil && !principalOf(r.Context()).Tenant.Allows(j.Namespace) {
		return Errorf(CodeNotFound, "no job %q in your namespaces", id)
	}
	if err != nil {
		return err
	}
	if j.Status != jobs.StatusQueued || (j.Region != region && !(j.Roaming() && slices.Contains(j.Regions, region))) {
		return Errorf(CodeConflict, "job %s is %s in %q, not queued for %s", id, j.Status, j.Region, region)
	}
	ahead, all, err := a.jobs.Ahead(r.Context(), j, region)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sumAhead(region, j, ahead, all))
}

// sumAhead counts and sums what is ahead of j, apart for j's own tenant.
func sumAhead(region string, j jobs.Job, ahead []dynamo.Waiting, all bool) aheadView {
	v := aheadView{Region: region, Job: j.ID, JobsAhead: len(ahead), Complete: all}
	total, own := map[string]resource.Quantity{}, map[string]resource.Quantity{}
	for _, w := range ahead {
		mine := w.Tenant == j.Tenant
		if mine {
			v.OwnJobsAhead++
		}
		for name, q := range w.Demand {
			n, err := resource.ParseQuantity(q)
			if err != nil {
				continue // stored from a parsed quantity: never
			}
			addTo(total, name, n)
			if mine {
				addTo(own, name, n)
			}
		}
	}
	v.DemandAhead, v.OwnDemandAhead = asStrings(total), asStrings(own)
	return v
}

func addTo(m map[string]resource.Quantity, name string, q resource.Quantity) {
	sum := m[name]
	sum.Add(q)
	m[name] = sum
}

func asStrings(m map[string]resource.Quantity) map[string]string {
	out := make(map[string]string, len(m))
	for name, q := range m {
		out[name] = q.String()
	}
	return out
}
