package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// workflowRequest is POST /api/v1/workflows' body: a name and the jobs, each a job request (a
// manifest, or a template and its parameters, with any job's settings) with the steps it comes
// after.
type workflowRequest struct {
	Name string        `json:"name"`
	Jobs []workflowJob `json:"jobs"`
}

type workflowJob struct {
	Name       string          `json:"name"`
	After      []string        `json:"after"`
	Manifest   json.RawMessage `json:"manifest"`
	Template   string          `json:"template"`
	Parameters map[string]any  `json:"parameters"`
	jobSettings
}

// workflowView is a workflow as the API answers it: its record's own fields, its jobs with the
// status each is in now, and its jobs counted by status.
type workflowView struct {
	ID            string             `json:"id"`
	Name          string             `json:"name"`
	Tenant        string             `json:"tenant"`
	Namespace     string             `json:"namespace"`
	Status        jobs.Status        `json:"status"`
	StatusHistory []jobs.Transition  `json:"status_history"`
	CreatedAt     time.Time          `json:"created_at"`
	UpdatedAt     time.Time          `json:"updated_at"`
	Jobs          []workflowJobState `json:"jobs"`
	Counts        jobs.ArrayStatus   `json:"counts"`
}

type workflowJobState struct {
	Name   string      `json:"name"`
	ID     string      `json:"id"`
	After  []string    `json:"after"`
	Status jobs.Status `json:"status"`
	Reason string      `json:"reason,omitempty"`
}

// submitWorkflow is POST /api/v1/workflows: the graph is checked (names, afters, cycles, at most
// jobs.MaxWorkflowSteps), every job admitted as it would be alone, then all are stored, each
// blocked on the workflow (so none runs before the whole graph is stored) and on the steps it
// comes after, and last the workflow, which the releaser starts at once.
func (a *api) submitWorkflow(w http.ResponseWriter, r *http.Request) error {
	var req workflowRequest
	body, err := readJSON(w, r, &req)
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	steps := make([]jobs.Step, len(req.Jobs))
	for i, j := range req.Jobs {
		steps[i] = jobs.Step{Name: j.Name, After: j.After}
	}
	var bad []FieldProblem
	if !tenancy.IsDNSLabel(req.Name) {
		bad = append(bad, FieldProblem{"name", "required: the workflow's name, a DNS label"})
	}
	order, problems, cycle := jobs.CheckGraph(steps, tenancy.IsDNSLabel)
	for _, p := range problems {
		bad = append(bad, FieldProblem{p[0], p[1]})
	}
	if len(bad) > 0 {
		return Invalid("fix the listed fields", bad...)
	}
	if cycle != "" {
		return Errorf(CodePolicyViolation, "the workflow's jobs wait for each other in a cycle: %s; a job can only come after jobs that do not come after it", cycle)
	}
	subs, err := a.workflowSubmissions(ctx, req)
	if err != nil {
		return err
	}
	if whatIf, err := whatIfAsked(r); err != nil || whatIf {
		if err != nil {
			return err
		}
		return a.answerWorkflowWhatIf(w, r, steps, subs)
	}
	if err := a.overCap(ctx, w, principalOf(ctx).Tenant, rootsOf(steps, subs)); err != nil {
		return err
	}
	now := a.now()
	idem := idempotencyOf(ctx, key, body)
	if idem != nil {
		if prev, replayed, err := a.jobs.Replay(ctx, *idem, now); err != nil || replayed {
			if err != nil {
				return err
			}
			return a.answerWorkflow(ctx, w, http.StatusOK, prev)
		}
	}
	wf := a.jobOf(ctx, submission{namespace: subs[0].namespace, region: subs[0].region, priority: jobs.DefaultPriority}, ids.New("wf-", now), now)
	wf.Name, wf.Workflow = req.Name, &jobs.Workflow{Name: req.Name, Steps: steps}
	wf.CheckpointURI, wf.Manifests = "", nil
	for i := range steps {
		steps[i].Job = ids.New("job-", now)
	}
	for _, i := range order {
		if err := a.storeStep(ctx, wf, subs[i], steps, i, now); err != nil {
			return err
		}
	}
	wf = jobs.Block(wf, jobs.StatusBlocked, nil, "", now)
	stored, replayed, err := a.jobs.Create(ctx, wf, outbox.Event{}, idem, now)
	if err != nil {
		return err
	}
	if !replayed {
		if _, err := a.releaser.Release(ctx, stored.ID); err != nil {
			a.logger(ctx).WarnContext(ctx, "starting a workflow; the beat will", "workflow_id", stored.ID, "err", err)
		}
		a.ringWebhooks(ctx)
		if stored, err = a.jobs.Job(ctx, stored.ID); err != nil {
			return err
		}
	}
	return a.answerWorkflow(ctx, w, http.StatusAccepted, stored)
}

// workflowSubmissions admits each job of a workflow as it would be alone, naming the job in
// every problem.
func (a *api) workflowSubmissions(ctx context.Context, req workflowRequest) ([]submission, error) {
	subs := make([]submission, len(req.Jobs))
	for i, j := range req.Jobs {
		s, err := a.workflowSubmission(ctx, i, j)
		if err != nil {
			return nil, inJob(err, i, j.Name)
		}
		subs[i] = s
	}
	return subs, nil
}

func (a *api) workflowSubmission(ctx context.Context, i int, j workflowJob) (submission, error) {
	field := fmt.Sprintf("jobs[%d].manifest", i)
	var ms []map[string]any
	var err error
	switch {
	case j.Template != "" && len(j.Manifest) > 0:
		return submission{}, Invalid("a job is a manifest or a template, not both", FieldProblem{"template", "leave it out, or the manifest"})
	case j.Template != "":
		t, err := a.templates.Get(ctx, principalOf(ctx).Tenant.Name, j.Template)
		if errors.Is(err, records.ErrNotFound) {
			return submission{}, Errorf(CodeNotFound, "no template %q", j.Template)
		}
		if err != nil {
			return submission{}, err
		}
		if ms, err = filledManifest(t, j.Name, j.Parameters, field); err != nil {
			return submission{}, err
		}
		s := j.submission(ms, "", nil)
		s.template = t.Name
		if s.retry == nil {
			s.retry = t.Retry
		}
		return s, a.admit(ctx, &s)
	default:
		if ms, err = decodeManifests(field, j.Manifest); err != nil {
			return submission{}, err
		}
	}
	s := j.submission(ms, "", nil)
	return s, a.admit(ctx, &s)
}

// inJob is err with the workflow job it is about named: in its detail, and each field under
// jobs[i].
func inJob(err error, i int, name string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	out := *e
	out.Detail = fmt.Sprintf("job %q (jobs[%d]): %s", name, i, e.Detail)
	out.Fields = make([]FieldProblem, len(e.Fields))
	for k, f := range e.Fields {
		out.Fields[k] = FieldProblem{fmt.Sprintf("jobs[%d].%s", i, f.Field), f.Problem}
	}
	return &out
}

// storeStep stores step i of workflow wf as submission s makes it: blocked on the workflow, and
// on the steps it comes after (their success) besides the jobs it names itself.
func (a *api) storeStep(ctx context.Context, wf jobs.Job, s submission, steps []jobs.Step, i int, now time.Time) error {
	step := steps[i]
	j := a.jobOf(ctx, s, step.Job, now)
	j.Parent, j.Step = wf.ID, step.Name
	deps := slices.Clone(s.dependsOn)
	for _, after := range step.After {
		k := slices.IndexFunc(steps, func(o jobs.Step) bool { return o.Name == after })
		deps = append(deps, jobs.Dependency{Job: steps[k].Job, On: jobs.OnSucceeded})
	}
	j.DependsOn = deps
	statuses, err := a.dependencies(ctx, deps)
	if err != nil {
		return inJob(err, i, step.Name)
	}
	status, waiting, reason := jobs.Settle(deps, statuses)
	if status == jobs.StatusCancelled {
		return inJob(Errorf(CodePolicyViolation, "it could never run: %s", reason), i, step.Name)
	}
	if status == jobs.StatusQueued {
		reason = jobs.ReasonWaitingForDependencies
	}
	j = jobs.Block(j, jobs.StatusBlocked, append(waiting, wf.ID), reason, now)
	_, _, err = a.createArray(ctx, j, jobs.Event(outbox.JobBlocked, j, "", now), nil, now)
	if errors.Is(err, dynamo.ErrDependencyEnded) {
		return Errorf(CodeConflict, "a job step %q depends on ended while the workflow was stored; submit it again", step.Name)
	}
	return err
}

// answerWorkflow writes workflow wf's view with status code.
func (a *api) answerWorkflow(ctx context.Context, w http.ResponseWriter, code int, wf jobs.Job) error {
	v, err := a.workflowView(ctx, wf)
	if err != nil {
		return err
	}
	return writeJSON(w, code, v)
}

// workflowView is wf with its jobs as they are now.
func (a *api) workflowView(ctx context.Context, wf jobs.Job) (workflowView, error) {
	children, err := a.jobs.ChildStates(ctx, wf.ID)
	if err != nil {
		return workflowView{}, err
	}
	byID := map[string]jobs.Job{}
	for _, c := range children {
		byID[c.ID] = c
	}
	v := workflowView{
		ID: wf.ID, Name: wf.Workflow.Name, Tenant: wf.Tenant, Namespace: wf.Namespace, Status: wf.Status,
		StatusHistory: wf.StatusHistory, CreatedAt: wf.CreatedAt, UpdatedAt: wf.UpdatedAt, Jobs: []workflowJobState{},
	}
	for _, s := range wf.Workflow.Steps {
		c := byID[s.Job]
		st := workflowJobState{Name: s.Name, ID: s.Job, After: s.After, Status: c.Status}
		if st.After == nil {
			st.After = []string{}
		}
		if n := len(c.StatusHistory); n > 0 {
			st.Reason = c.StatusHistory[n-1].Reason
		}
		switch c.Status {
		case jobs.StatusBlocked:
			v.Counts.Blocked++
		case jobs.StatusSucceeded:
			v.Counts.Succeeded++
		case jobs.StatusFailed:
			v.Counts.Failed++
		case jobs.StatusCancelled:
			v.Counts.Cancelled++
		default:
			v.Counts.Active++
		}
		v.Jobs = append(v.Jobs, st)
	}
	return v, nil
}

// visibleWorkflow is the workflow the path names, if the caller's tenant may see it.
func (a *api) visibleWorkflow(r *http.Request) (jobs.Job, error) {
	id := r.PathValue("id")
	j, err := a.jobs.Job(r.Context(), id)
	if errors.Is(err, records.ErrNotFound) || (err == nil && (j.Workflow == nil || !principalOf(r.Context()).Tenant.Allows(j.Namespace))) {
		return jobs.Job{}, Errorf(CodeNotFound, "no workflow %q in your namespaces", id)
	}
	return j, err
}

// getWorkflow is GET /api/v1/workflows/{id}.
func (a *api) getWorkflow(w http.ResponseWriter, r *http.Request) error {
	wf, err := a.visibleWorkflow(r)
	if err != nil {
		return err
	}
	return a.answerWorkflow(r.Context(), w, http.StatusOK, wf)
}

// cancelWorkflow is DELETE /api/v1/workflows/{id}: every job not ended is cancelled (those
// dispatched have their objects deleted first), and the workflow with them.
func (a *api) cancelWorkflow(w http.ResponseWriter, r *http.Request) error {
	wf, err := a.visibleWorkflow(r)
	if err != nil {
		return err
	}
	if err := a.cancel(r.Context(), wf); err != nil {
		return err
	}
	a.ringWebhooks(r.Context())
	if wf, err = a.jobs.Job(r.Context(), wf.ID); err != nil {
		return err
	}
	return a.answerWorkflow(r.Context(), w, http.StatusOK, wf)
}

// rootsOf is how many jobs of a workflow its start lets into the queue at once: those after no
// step, an array among them its parallelism.
func rootsOf(steps []jobs.Step, subs []submission) int {
	n := 0
	for i, s := range steps {
		switch {
		case len(s.After) > 0:
		case subs[i].array != nil:
			n += subs[i].array.Parallelism
		default:
			n++
		}
	}
	return n
}

// workflowSummary is one workflow of a listing: its record's own fields and its size, without
// its jobs' statuses (GET /api/v1/workflows/{id} reads those).
type workflowSummary struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Namespace     string            `json:"namespace"`
	Status        jobs.Status       `json:"status"`
	StatusHistory []jobs.Transition `json:"status_history"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
	Jobs          int               `json:"jobs"`
}

// listWorkflows is GET /api/v1/workflows: the caller's tenant's workflows, newest first, in one
// namespace of its with namespace.
func (a *api) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, cursor, err := pageParams(q)
	if err != nil {
		return err
	}
	tenant := principalOf(r.Context()).Tenant
	f := jobs.Filter{Namespaces: tenant.Namespaces, Workflows: true}
	if ns := q.Get("namespace"); ns != "" {
		if !tenant.Allows(ns) {
			return Errorf(CodeForbidden, "namespace %q is not one of tenant %s's", ns, tenant.Name)
		}
		f.Namespaces = []string{ns}
	}
	page, err := a.jobs.List(r.Context(), f, limit, cursor)
	if err != nil {
		return err
	}
	out := make([]workflowSummary, 0, len(page.Jobs))
	for _, j := range page.Jobs {
		if j.Workflow == nil {
			continue
		}
		out = append(out, workflowSummary{
			ID: j.ID, Name: j.Workflow.Name, Namespace: j.Namespace, Status: j.Status, StatusHistory: j.StatusHistory,
			CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, Jobs: len(j.Workflow.Steps),
		})
	}
	return writeJSON(w, http.StatusOK, listPage[workflowSummary]{Items: out, NextCursor: nextCursor(page.Next)})
}
