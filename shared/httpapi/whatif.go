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
	out, err := a.whatIf(r.Context(), s)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"what_if": out})
}

// whatIf runs submission s's job through each of its regions' admission.
func (a *api) whatIf(ctx context.Context, s submission) (whatIfAnswer, error) {
	now := a.now()
	j := a.jobOf(ctx, s, ids.New("job-", now), now)
	regions := []string{j.Region}
	if j.Roaming() {
		regions = j.Regions
	}
	out := whatIfAnswer{Job: j, Regions: []jobs.WhatIf{}, Blocked: len(s.dependsOn) > 0}
	for _, region := range regions {
		wi, err := a.whatIfs.WhatIf(ctx, region, j)
		if err != nil {
			return out, err
		}
		out.Regions = append(out.Regions, wi)
		if wi.Admitted && out.Region == "" {
			out.Admitted, out.Region = true, region
		}
	}
	return out, nil
}

// stepWhatIf is one job of a workflow's what-if: a job after others is blocked until they
// succeed; one after none hears what its regions would decide now.
type stepWhatIf struct {
	Name  string   `json:"name"`
	After []string `json:"after,omitempty"`
	whatIfAnswer
}

// answerWorkflowWhatIf answers ?what_if=true on POST /api/v1/workflows: each job checked as the
// workflow's submission checks it, the first ones (after none) run through their regions'
// admission, the others blocked. Nothing is stored.
func (a *api) answerWorkflowWhatIf(w http.ResponseWriter, r *http.Request, steps []jobs.Step, subs []submission) error {
	if a.whatIfs == nil {
		return Errorf(CodeUnavailable, "what-if is not served by this deployment's API")
	}
	out := make([]stepWhatIf, len(steps))
	for i, st := range steps {
		out[i] = stepWhatIf{Name: st.Name, After: st.After}
		if len(st.After) > 0 {
			now := a.now()
			out[i].whatIfAnswer = whatIfAnswer{Job: a.jobOf(r.Context(), subs[i], ids.New("job-", now), now), Regions: []jobs.WhatIf{}, Blocked: true}
			continue
		}
		wi, err := a.whatIf(r.Context(), subs[i])
		if err != nil {
			return err
		}
		out[i].whatIfAnswer = wi
	}
	return writeJSON(w, http.StatusOK, map[string]any{"what_if": map[string]any{"jobs": out}})
}
