package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/jobs"
)

// WhatIfs runs a region's admission for a job not stored; dispatch.Handler is the real one, made
// for the API alone (apihandler), writing nothing.
type WhatIfs interface {
	WhatIf(ctx context.Context, region string, j jobs.Job) (jobs.WhatIf, error)
}

// whatIfAsked reads the what_if query parameter of a route that makes a job.
func whatIfAsked(r *http.Request) (bool, error) {
	s := r.URL.Query().Get("what_if")
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, Invalid("what_if must be true or false", FieldProblem{"what_if", "true (run the admission and store nothing) or false"})
	}
	return b, nil
}

// whatIfAnswer is a what-if's answer: the job as it would be stored, and what each of its regions'
// drains would decide for it now.
type whatIfAnswer struct {
	Job jobs.Job `json:"job"`
	// Admitted says whether some region would admit it now; Region is the first that would.
	Admitted bool          `json:"admitted"`
	Region   string        `json:"region,omitempty"`
	Regions  []jobs.WhatIf `json:"regions"`
	// Blocked: it names dependencies, so it would wait for them first, whatever the regions say.
	Blocked bool `json:"blocked,omitempty"`
}

// answerWhatIf runs submission s, checked as a submission is, through the admission of each region
// it may run in, and answers what they would decide, storing nothing and ringing nothing.
func (a *api) answerWhatIf(w http.ResponseWriter, r *http.Request, s submission) error {
	if a.whatIfs == nil {
		return Errorf(CodeUnavailable, "what-if is not served by this deployment's API")
	}
	now := a.now()
	j := a.jobOf(r.Context(), s, ids.New("job-", now), now)
	regions := []string{j.Region}
	if j.Roaming() {
		regions = j.Regions
	}
	out := whatIfAnswer{Job: j, Regions: []jobs.WhatIf{}, Blocked: len(s.dependsOn) > 0}
	for _, region := range regions {
		wi, err := a.whatIfs.WhatIf(r.Context(), region, j)
		if err != nil {
			return err
		}
		out.Regions = append(out.Regions, wi)
		if wi.Admitted && out.Region == "" {
			out.Admitted, out.Region = true, region
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"what_if": out})
}
