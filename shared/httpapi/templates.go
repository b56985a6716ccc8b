package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/templating"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TemplateStore keeps job templates; dynamo.TemplateStore is the real one.
type TemplateStore interface {
	Put(ctx context.Context, t templating.Template, create bool) error
	Get(ctx context.Context, tenant, name string) (templating.Template, error)
	List(ctx context.Context, tenant string, limit int, cursor string) ([]templating.Template, string, error)
	Delete(ctx context.Context, tenant, name string) error
}

var _ TemplateStore = (*dynamo.TemplateStore)(nil)

type templateRequest struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Manifest    json.RawMessage `json:"manifest"`
	Parameters  map[string]any  `json:"parameters"`
	Retry       *jobs.Retry     `json:"retry"`
}

// maxDescription bounds a template's description: a sentence or two, not a document.
const maxDescription = 1024

// savedTemplate is what saving a template answers: the template, and warnings about what it keeps
// but will not use (defaults no placeholder names).
type savedTemplate struct {
	templating.Template
	Warnings []string `json:"warnings,omitempty"`
}

// readTemplate reads and checks a template body; name comes from the path on PUT.
func (a *api) readTemplate(w http.ResponseWriter, r *http.Request, pathName string) (savedTemplate, error) {
	var req templateRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return savedTemplate{}, err
	}
	if pathName != "" {
		if req.Name != "" && req.Name != pathName {
			return savedTemplate{}, Invalid("the body names another template than the path", FieldProblem{"name", "omit it, or make it " + pathName})
		}
		req.Name = pathName
	}
	var bad []FieldProblem
	if !tenancy.IsDNSLabel(req.Name) {
		bad = append(bad, FieldProblem{"name", "must be a DNS label: lowercase letters, digits and '-', at most 63"})
	}
	if len(req.Description) > maxDescription {
		bad = append(bad, FieldProblem{"description", fmt.Sprintf("at most %d bytes", maxDescription)})
	}
	bad = append(bad, checkRetry(req.Retry)...)
	if len(bad) > 0 {
		return savedTemplate{}, Invalid("fix the listed fields", bad...)
	}
	ms, err := decodeManifests("manifest", req.Manifest)
	if err != nil {
		return savedTemplate{}, err
	}
	if len(ms) != 1 {
		return savedTemplate{}, Invalid("a template holds one manifest", FieldProblem{"manifest", "one object"})
	}
	unused, err := templating.Check(ms, req.Parameters)
	if err != nil {
		return savedTemplate{}, templateError(err)
	}
	now := a.now().UTC()
	out := savedTemplate{Template: templating.Template{
		Name: req.Name, Tenant: principalOf(r.Context()).Tenant.Name, Description: req.Description,
		Manifest: ms[0], Parameters: req.Parameters, Retry: req.Retry, CreatedAt: now, UpdatedAt: now,
	}}
	for _, name := range unused {
		out.Warnings = append(out.Warnings, fmt.Sprintf("parameters.%s: no placeholder uses it, so it fills nothing (kept as given)", name))
	}
	return out, nil
}

// templateError turns templating's errors into a 400 naming every parameter or field.
func templateError(err error) error {
	var pe *templating.ParamError
	var fe *templating.FieldError
	switch {
	case errors.As(err, &pe):
		var bad []FieldProblem
		for _, m := range pe.Missing {
			bad = append(bad, FieldProblem{"parameters." + m, "missing: the template uses it and has no default"})
		}
		for _, u := range pe.Unknown {
			bad = append(bad, FieldProblem{"parameters." + u, "unknown: the template has no {{ " + u + " }}"})
		}
		for _, n := range pe.Reserved {
			bad = append(bad, FieldProblem{"parameters." + n, "the job's own name fills {{ " + n + " }}: give the job's name, not a value for it"})
		}
		return Invalid("fix the template's parameters", bad...)
	case errors.As(err, &fe):
		return Invalid("a placeholder cannot take its value", FieldProblem{"manifest." + fe.Path, fe.Problem})
	}
	return Invalid(err.Error())
}

func (a *api) createTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := a.readTemplate(w, r, "")
	if err != nil {
		return err
	}
	if err := a.templates.Put(r.Context(), t.Template, true); errors.Is(err, dynamo.ErrExists) {
		return Errorf(CodeConflict, "template %q exists; replace it with PUT /api/v1/templates/%s", t.Name, t.Name)
	} else if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, t)
}

func (a *api) replaceTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := a.readTemplate(w, r, r.PathValue("name"))
	if err != nil {
		return err
	}
	old, err := a.template(r)
	if err != nil {
		return err
	}
	t.CreatedAt = old.CreatedAt
	if err := a.templates.Put(r.Context(), t.Template, false); errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, "no template %q; create it with POST /api/v1/templates", t.Name)
	} else if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

func (a *api) template(r *http.Request) (templating.Template, error) {
	name := r.PathValue("name")
	t, err := a.templates.Get(r.Context(), principalOf(r.Context()).Tenant.Name, name)
	if errors.Is(err, records.ErrNotFound) {
		return t, Errorf(CodeNotFound, "no template %q", name)
	}
	return t, err
}

func (a *api) getTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := a.template(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

func (a *api) listTemplates(w http.ResponseWriter, r *http.Request) error {
	limit, cursor, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	ts, next, err := a.templates.List(r.Context(), principalOf(r.Context()).Tenant.Name, limit, cursor)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, listPage[templating.Template]{Items: ts, NextCursor: nextCursor(next)})
}

func (a *api) deleteTemplate(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := a.templates.Delete(r.Context(), principalOf(r.Context()).Tenant.Name, name); errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, "no template %q", name)
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// templateJobRequest is POST /api/v1/templates/{name}/jobs' body.
type templateJobRequest struct {
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters"`
	jobSettings
}

// runTemplate fills the template's placeholders on its decoded manifest, names the result, and
// submits it like any job, policy included.
func (a *api) runTemplate(w http.ResponseWriter, r *http.Request) error {
	var req templateJobRequest
	body, err := readJSON(w, r, &req)
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var bad []FieldProblem
	if !tenancy.IsDNSLabel(req.Name) {
		bad = append(bad, FieldProblem{"name", "required: the job's object name, a DNS label"})
	}
	if req.Namespace == "" {
		bad = append(bad, FieldProblem{"namespace", "required"})
	}
	if len(bad) > 0 {
		return Invalid("fix the listed fields", bad...)
	}
	t, err := a.template(r)
	if err != nil {
		return err
	}
	ms, err := filledManifest(t, req.Name, req.Parameters, "manifest")
	if err != nil {
		return err
	}
	s := req.submission(ms, key, body)
	s.template = t.Name
	if s.whatIf, err = whatIfAsked(r); err != nil {
		return err
	}
	if s.retry == nil {
		s.retry = t.Retry // the template's policy, unless the job names its own
	}
	if err := a.admit(r.Context(), &s); err != nil {
		return err
	}
	return a.store(w, r, s)
}

// filledManifest is template t's manifest with its placeholders filled from params, named name,
// read by the same decoder a submitted manifest meets (shape, bounds and all), field its path in
// errors.
func filledManifest(t templating.Template, name string, params map[string]any, field string) ([]map[string]any, error) {
	filled, err := templating.Fill([]map[string]any{t.Manifest}, name, params, t.Parameters)
	if err != nil {
		return nil, templateError(err)
	}
	raw, err := json.Marshal(filled)
	if err != nil {
		return nil, err
	}
	ms, err := decodeManifests(field, raw)
	if err != nil {
		return nil, err
	}
	meta, _ := ms[0]["metadata"].(map[string]any)
	meta["name"] = name
	return ms, nil
}
