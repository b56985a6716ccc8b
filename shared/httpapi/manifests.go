package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/manifest"
	"github.com/tidegate/tidegate/shared/policy"
)

// manifestsRequest is POST /api/v1/manifests' body.
type manifestsRequest struct {
	Manifests json.RawMessage `json:"manifests"`
	Namespace string          `json:"namespace"`
	Region    string          `json:"region"`
	Regions   []string        `json:"regions"`
	DryRun    bool            `json:"dry_run"`
	// ReadyTimeout is the job's ready_timeout (jobSettings').
	ReadyTimeout string `json:"ready_timeout"`
	// Validate is accepted for GCO clients. The admission policy applies whatever it says: it is
	// the security boundary, not a lint.
	Validate *bool `json:"validate"`
}

// readManifestsRequest reads either JSON, or YAML documents with the other fields as query
// parameters, as API.md allows for both manifest routes.
func (a *api) readManifestsRequest(w http.ResponseWriter, r *http.Request) (manifestsRequest, []map[string]any, []byte, error) {
	var req manifestsRequest
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/yaml", "application/x-yaml", "text/yaml":
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(manifest.DefaultLimits.MaxBytes)))
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return req, nil, nil, Errorf(CodeTooLarge, "the YAML body is larger than %d bytes", tooLarge.Limit)
		}
		if err != nil {
			return req, nil, nil, err
		}
		q := r.URL.Query()
		req.Namespace, req.Region, req.ReadyTimeout = q.Get("namespace"), q.Get("region"), q.Get("ready_timeout")
		if q.Has("regions") {
			req.Regions = strings.Split(q.Get("regions"), ",")
		}
		if s := q.Get("dry_run"); s != "" {
			if req.DryRun, err = strconv.ParseBool(s); err != nil {
				return req, nil, nil, Invalid("dry_run must be true or false", FieldProblem{"dry_run", "true or false"})
			}
		}
		ms, err := manifest.DecodeYAML(body, manifest.DefaultLimits)
		return req, ms, body, manifestError("manifests", err)
	}
	body, err := readJSON(w, r, &req)
	if err != nil {
		return req, nil, nil, err
	}
	ms, err := decodeManifests("manifests", req.Manifests)
	return req, ms, body, err
}

// submitManifests is POST /api/v1/manifests: a job from one or more manifests, or with dry_run
// the decision alone.
func (a *api) submitManifests(w http.ResponseWriter, r *http.Request) error {
	req, ms, body, err := a.readManifestsRequest(w, r)
	if err != nil {
		return err
	}
	if req.Region == "" && req.Regions == nil && len(a.regions) > 0 {
		req.Region = a.regions[0]
	}
	if req.DryRun {
		res := a.check(r, ms, req.Namespace)
		return writeJSON(w, http.StatusOK, withDemand(res, map[string]any{"valid": res.Allowed(), "violations": violationsOrEmpty(res.Violations), "manifests": res.Manifests}))
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	s := submission{manifests: ms, namespace: req.Namespace, region: req.Region, regions: req.Regions, priority: jobs.DefaultPriority, priorityDefaulted: true, idempotencyKey: key, body: body, readyTimeout: req.ReadyTimeout}
	if s.whatIf, err = whatIfAsked(r); err != nil {
		return err
	}
	if err := a.admit(r.Context(), &s); err != nil {
		return err
	}
	return a.store(w, r, s)
}

// validateManifests is POST /api/v1/manifests/validate: the decision, never stored.
func (a *api) validateManifests(w http.ResponseWriter, r *http.Request) error {
	req, ms, _, err := a.readManifestsRequest(w, r)
	if err != nil {
		return err
	}
	res := a.check(r, ms, req.Namespace)
	return writeJSON(w, http.StatusOK, withDemand(res, map[string]any{"valid": res.Allowed(), "violations": violationsOrEmpty(res.Violations)}))
}

// withDemand adds to a decision's answer the demand of the job its manifests would make, when
// they may run and run pods: what is refused makes no job, and its demand may not be countable.
func withDemand(res policy.Result, answer map[string]any) map[string]any {
	if d := res.Demand.Strings(); res.Allowed() && d != nil {
		answer["demand"] = d
	}
	return answer
}

func (a *api) check(r *http.Request, ms []map[string]any, namespace string) policy.Result {
	return a.policy.Check(policy.Request{Manifests: ms, Namespaces: principalOf(r.Context()).Tenant.Namespaces, DefaultNamespace: namespace})
}

func violationsOrEmpty(vs []policy.Violation) []policy.Violation {
	if vs == nil {
		return []policy.Violation{}
	}
	return vs
}

// jobSettings are the fields every route that makes one job takes besides its manifest.
type jobSettings struct {
	Region           string            `json:"region"`
	Regions          []string          `json:"regions"`
	Namespace        string            `json:"namespace"`
	Priority         *int              `json:"priority"`
	Labels           map[string]string `json:"labels"`
	MaxSpotPrice     *float64          `json:"max_spot_price"`
	SpotInstanceType string            `json:"spot_instance_type"`
	SpotDeadline     string            `json:"spot_deadline"`
	OnDeadline       string            `json:"on_deadline"`
	Retry            *jobs.Retry       `json:"retry"`
	ReadyTimeout     string            `json:"ready_timeout"`
	MaxPreemptions   *int              `json:"max_preemptions"`
	DependsOn        []jobs.Dependency `json:"depends_on"`
	Array            *jobs.Array       `json:"array"`
	OnRegionLost     string            `json:"on_region_lost"`
}

// submission starts a job's submission from the settings, the rest to be filled by the route.
func (js jobSettings) submission(ms []map[string]any, idempotencyKey string, body []byte) submission {
	s := submission{
		manifests: ms, namespace: js.Namespace, region: js.Region, regions: js.Regions, priority: jobs.DefaultPriority, labels: js.Labels,
		maxSpotPrice: js.MaxSpotPrice, spotType: js.SpotInstanceType, spotDeadline: js.SpotDeadline, onDeadline: js.OnDeadline,
		idempotencyKey: idempotencyKey, body: body, retry: js.Retry, readyTimeout: js.ReadyTimeout,
		priorityDefaulted: js.Priority == nil, maxPreemptions: js.MaxPreemptions, dependsOn: js.DependsOn, array: js.Array,
		onRegionLost: js.OnRegionLost,
	}
	if js.Priority != nil {
		s.priority = *js.Priority
	}
	return s
}

// jobRequest is POST /api/v1/jobs' body.
type jobRequest struct {
	Manifest json.RawMessage `json:"manifest"`
	jobSettings
}

// submitJob is POST /api/v1/jobs: one manifest with a priority, labels and an optional spot cap.
func (a *api) submitJob(w http.ResponseWriter, r *http.Request) error {
	var req jobRequest
	body, err := readJSON(w, r, &req)
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	ms, err := decodeManifests("manifest", req.Manifest)
	if err != nil {
		return err
	}
	if len(ms) != 1 {
		return Invalid("manifest is one object; send several to POST /api/v1/manifests", FieldProblem{"manifest", "one object"})
	}
	if req.Namespace == "" {
		return Invalid("namespace is required", FieldProblem{"namespace", "required"})
	}
	s := req.submission(ms, key, body)
	if s.whatIf, err = whatIfAsked(r); err != nil {
		return err
	}
	if err := a.admit(r.Context(), &s); err != nil {
		return err
	}
	return a.store(w, r, s)
}
