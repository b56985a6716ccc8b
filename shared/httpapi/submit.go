package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/manifest"
	"github.com/tidegate/tidegate/shared/policy"
)

// Ringer wakes the dispatch function for a region; wake.Ringer is the real one.
type Ringer interface {
	Ring(ctx context.Context, region string) error
}

// maxSpotPrice bounds a spot cap: no EC2 instance's on-demand price is near $1,000 an hour, so a
// larger cap is a typo, not a cap.
const maxSpotPrice = 1000

// submission is what every route that makes a job has gathered before it is stored.
type submission struct {
	manifests      []map[string]any
	namespace      string
	region         string
	regions        []string // instead of region: where it may run, one chosen at dispatch
	priority       int
	labels         map[string]string
	maxSpotPrice   *float64
	spotType       string
	spotDeadline   string // as given: a duration from submission or an RFC 3339 time
	onDeadline     string
	deadline       *time.Time // spotDeadline read by admit
	retry          *jobs.Retry
	readyTimeout   string            // as given, then as stored: a Go duration, the default filled in
	maxPreemptions *int              // how often the job may be evicted before it fails; nil: any
	onRegionLost   string            // what it does when its region is lost while it runs there
	dependsOn      []jobs.Dependency // the jobs it waits for (depend.go)
	array          *jobs.Array       // an array job's shape (jobs/array.go)
	memoryHeadroom float64           // policy.Result's: how far its memory may be raised; 0 for no bound
	template       string
	retryOf        string
	idempotencyKey string
	body           []byte            // the raw request, for the idempotency digest
	gpus           int64             // what the pods ask for in all, as the policy counted them
	demand         map[string]string // what the pods that can run at once request, per resource
	nodeSelector   map[string]string // the node labels its pods select, which flavors it may run on
	podless        bool              // no manifest runs a pod
	// priorityDefaulted says the request gave no priority: the default then yields to a tenant
	// limit below it, where a priority asked for is refused.
	priorityDefaulted bool
	// whatIf: run the admission and answer what it decides, storing nothing (whatif.go).
	whatIf bool
}

// admit checks the submission's fields and its manifests against the policy, and answers the
// manifests with their namespaces filled in.
func (a *api) admit(ctx context.Context, s *submission) error {
	tenant := principalOf(ctx).Tenant
	var bad []FieldProblem
	bad = append(bad, a.checkRegions(s)...)
	if s.priority < jobs.MinPriority || s.priority > jobs.MaxPriority {
		bad = append(bad, FieldProblem{"priority", "must be a whole number from 0 to 100"})
	}
	bad = append(bad, checkLabels("labels", s.labels)...)
	switch {
	case s.maxSpotPrice != nil && s.spotType == "":
		bad = append(bad, FieldProblem{"spot_instance_type", "required with max_spot_price: the instance type whose price is capped"})
	case s.maxSpotPrice == nil && s.spotType != "":
		bad = append(bad, FieldProblem{"max_spot_price", "required with spot_instance_type"})
	case s.maxSpotPrice != nil:
		if p := *s.maxSpotPrice; math.IsNaN(p) || math.IsInf(p, 0) || p <= 0 || p > maxSpotPrice {
			bad = append(bad, FieldProblem{"max_spot_price", fmt.Sprintf("must be a number of dollars an hour above 0 and at most %d", maxSpotPrice)})
		}
		if !instanceType.MatchString(s.spotType) {
			bad = append(bad, FieldProblem{"spot_instance_type", "must be an EC2 instance type such as g5.xlarge"})
		}
	}
	bad = append(bad, s.checkDeadline(a.now())...)
	bad = append(bad, checkRetry(s.retry)...)
	bad = append(bad, s.checkReadyTimeout(a.readyMax)...)
	if m := s.maxPreemptions; m != nil && (*m < 0 || *m > jobs.MaxMaxPreemptions) {
		bad = append(bad, FieldProblem{"max_preemptions", fmt.Sprintf("must be a whole number from 0 to %d: how often the job may be evicted for another before it fails preempted_too_often", jobs.MaxMaxPreemptions)})
	}
	if !jobs.ValidOnRegionLost(s.onRegionLost) {
		bad = append(bad, FieldProblem{"on_region_lost", "must be requeue (run it again in another of its regions if its region's cluster is lost while it runs there) or left out (wait for the region)"})
	}
	var deps, shape [][2]string
	s.dependsOn, deps = jobs.CheckDependencies(s.dependsOn)
	s.array, shape = jobs.CheckArray(s.array)
	for i, d := range s.dependsOn {
		if d.Mode == jobs.ModeNToN && s.array == nil {
			shape = append(shape, [2]string{fmt.Sprintf("depends_on[%d].mode", i), "n_to_n is for an array's dependency on another array: give the job an array, or leave mode out"})
		}
	}
	for _, b := range append(deps, shape...) {
		bad = append(bad, FieldProblem{b[0], b[1]})
	}
	if len(bad) > 0 {
		return Invalid("fix the listed fields", bad...)
	}
	if limit := tenant.PriorityLimit(); s.priority > limit {
		if !s.priorityDefaulted {
			return priorityAboveLimit(tenant.Name, s.priority, limit)
		}
		s.priority = limit
	}
	res := a.policy.Check(policy.Request{Manifests: s.manifests, Namespaces: tenant.Namespaces, DefaultNamespace: s.namespace})
	if !res.Allowed() {
		return policyError(res.Violations)
	}
	s.manifests, s.gpus, s.podless, s.demand = res.Manifests, res.GPUs, res.Pods == 0, res.Demand.Strings()
	s.memoryHeadroom = res.MemoryHeadroom
	s.nodeSelector = res.NodeSelector
	if err := a.childrenAllowed(ctx, s); err != nil {
		return err
	}
	if err := a.fitsSomewhere(s); err != nil {
		return err
	}
	return a.oneNamespace(s)
}

// fitsSomewhere refuses a job that no flavor of any region it may run in could hold, however
// much room frees: it would wait for ever.
func (a *api) fitsSomewhere(s *submission) error {
	if a.flavors == nil {
		return nil
	}
	regions := s.regions
	if regions == nil {
		regions = []string{s.region}
	}
	j := jobs.Job{Demand: s.demand, NodeSelector: s.nodeSelector, GPUs: s.gpus, Podless: s.podless}
	var why []string
	for _, region := range regions {
		fr := a.flavors(region)
		err := fr.Impossible(region, fr.Need(j))
		if err == nil {
			return nil
		}
		why = append(why, err.Error())
	}
	e := Errorf(CodePolicyViolation, "the job can never run: %s", strings.Join(why, "; "))
	e.Violations = []any{policy.Violation{Field: "manifests", Message: strings.Join(why, "; ")}}
	return e
}

// maxSpotDeadline bounds how far off a spot deadline may be: a week from submission.
const maxSpotDeadline = 7 * 24 * time.Hour

// checkDeadline reads the submission's spot_deadline (a duration from now, such as 30s or 2h, or
// an RFC 3339 time) into deadline, and lists what is wrong with it and on_deadline. Both only
// go with a price cap: a deadline lifts the price gate and nothing else.
func (s *submission) checkDeadline(now time.Time) []FieldProblem {
	if s.spotDeadline == "" && s.onDeadline == "" {
		return nil
	}
	var bad []FieldProblem
	if s.maxSpotPrice == nil {
		field := "spot_deadline"
		if s.spotDeadline == "" {
			field = "on_deadline"
		}
		bad = append(bad, FieldProblem{field, "only with max_spot_price and spot_instance_type: a spot deadline ends a wait for the spot price"})
	}
	if _, ok := jobs.ParseOnDeadline(s.onDeadline); !ok {
		bad = append(bad, FieldProblem{"on_deadline", fmt.Sprintf("must be %s or %s", jobs.OnDeadlineOnDemand, jobs.OnDeadlineFail)})
	}
	if s.spotDeadline == "" {
		return append(bad, FieldProblem{"spot_deadline", "required with on_deadline"})
	}
	var at time.Time
	if d, err := time.ParseDuration(s.spotDeadline); err == nil {
		at = now.Add(d)
	} else if at, err = time.Parse(time.RFC3339, s.spotDeadline); err != nil {
		return append(bad, FieldProblem{"spot_deadline", "must be a duration from submission such as 30s or 2h, or an RFC 3339 time such as 2026-05-01T12:00:00Z"})
	}
	switch d := at.Sub(now); {
	case d <= 0:
		bad = append(bad, FieldProblem{"spot_deadline", "must be after submission"})
	case d > maxSpotDeadline:
		bad = append(bad, FieldProblem{"spot_deadline", "must be at most 168h (a week) after submission"})
	}
	at = at.UTC()
	s.deadline = &at
	return bad
}

// checkReadyTimeout reads the submission's ready_timeout (a Go duration, as retry.backoff is;
// jobs.DefaultReadyTimeout when not given, capped at max too) and keeps it as the record stores it.
func (s *submission) checkReadyTimeout(most time.Duration) []FieldProblem {
	if s.readyTimeout == "" {
		s.readyTimeout = min(jobs.DefaultReadyTimeout, most).String()
		return nil
	}
	d, err := time.ParseDuration(s.readyTimeout)
	if err != nil || d < jobs.MinReadyTimeout || d > most {
		return []FieldProblem{{"ready_timeout", fmt.Sprintf("must be a duration from %s to %s (the operator's TIDEGATE_READY_TIMEOUT_MAX), such as 5m: how long after dispatch the job's pods may take to be all scheduled", jobs.MinReadyTimeout, most)}}
	}
	s.readyTimeout = d.String()
	return nil
}

// checkRetry lists what is wrong with a retry policy, naming each field under retry.
func checkRetry(r *jobs.Retry) []FieldProblem {
	if r == nil {
		return nil
	}
	var bad []FieldProblem
	for _, b := range r.Check("retry") {
		bad = append(bad, FieldProblem{b[0], b[1]})
	}
	return bad
}

// oneNamespace settles the job's namespace: a job runs in one, the one its manifests name.
func (a *api) oneNamespace(s *submission) error {
	for i, m := range s.manifests {
		meta, _ := m["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		if s.namespace == "" {
			s.namespace = ns
		}
		if ns != s.namespace {
			return Invalid("a job's manifests all run in one namespace", FieldProblem{
				Field: fmt.Sprintf("manifests[%d].metadata.namespace", i), Problem: fmt.Sprintf("is %q; the job's namespace is %q", ns, s.namespace),
			})
		}
	}
	return nil
}

// limitViolation is a job setting above what its tenant may ask for, as a 422 lists it.
type limitViolation struct {
	Field   string `json:"field"`
	Limit   int    `json:"limit"`
	Message string `json:"message"`
}

// priorityAboveLimit is the 422 of a job whose priority is above its tenant's limit.
func priorityAboveLimit(tenant string, priority, limit int) *Error {
	msg := fmt.Sprintf(msgPriorityAboveLimit, priority, tenant, limit)
	e := Errorf(CodePolicyViolation, "%s; submit at priority %d or lower, or ask an operator to raise it (tidegate admin tenants put --max-priority)", msg, limit)
	e.Fields = []FieldProblem{{"priority", fmt.Sprintf("at most %d", limit)}}
	e.Violations = []any{limitViolation{Field: "priority", Limit: limit, Message: msg}}
	return e
}

// msgPriorityAboveLimit says which priority, whose limit and what it is.
const msgPriorityAboveLimit = "priority %d is above tenant %s's limit of %d"

func policyError(vs []policy.Violation) *Error {
	e := Errorf(CodePolicyViolation, "%d policy violation(s); each names the document, field and what to change", len(vs))
	for _, v := range vs {
		e.Violations = append(e.Violations, v)
	}
	return e
}

// store makes the job record, its job.queued event and (with a key) the idempotency record in one
// transaction, then rings dispatch. It answers 202 for a new job, 200 for a replayed key, and 429
// where the job would take its tenant's queued jobs past its cap (overCap). Every route that makes
// a job makes it here.
func (a *api) store(w http.ResponseWriter, r *http.Request, s submission) error {
	if s.whatIf {
		return a.answerWhatIf(w, r, s)
	}
	p := principalOf(r.Context())
	now := a.now()
	j := a.jobOf(r.Context(), s, ids.New("job-", now), now)
	idem := idempotencyOf(r.Context(), s.idempotencyKey, s.body)
	adds := 1 // an array lets its parallelism in at once, and no more
	if s.array != nil {
		adds = s.array.Parallelism
	}
	if err := a.overCap(r.Context(), w, p.Tenant, adds); err != nil {
		return a.replayOverCap(r.Context(), w, idem, err)
	}
	if err := a.holdAtSubmission(r.Context(), &j, now); err != nil {
		return err
	}
	stored, replayed, err := a.createWaiting(r.Context(), j, s.dependsOn, idem, now)
	switch {
	case errors.Is(err, dynamo.ErrIdempotencyConflict):
		return Errorf(CodeConflict, "%s", err.Error())
	case errors.Is(err, dynamo.ErrTooLarge):
		return Errorf(CodeTooLarge, "%s", err.Error())
	case err != nil:
		return err
	case replayed:
		return writeJSON(w, http.StatusOK, map[string]any{"job": stored})
	case stored.Status != jobs.StatusQueued:
		a.ringWebhooks(r.Context())
		return writeJSON(w, http.StatusAccepted, map[string]any{"job": stored})
	}
	// Both rings at once: a submission waits for the slower, not the sum.
	webhooksRung := make(chan struct{})
	go func() { a.ringWebhooks(r.Context()); close(webhooksRung) }()
	for _, region := range wakeRegions(s) {
		if err := a.ringer.Ring(r.Context(), region); err != nil {
			// The job is stored and queued; the reconcile sweep rings every region with queued jobs.
			a.logger(r.Context()).WarnContext(r.Context(), "dispatch not rung; the sweep will", "job_id", j.ID, "region", region, "err", err)
		}
	}
	<-webhooksRung
	return writeJSON(w, http.StatusAccepted, map[string]any{"job": stored})
}

// jobOf is the job submission s makes, with id, by the caller's tenant, at now: not stored yet.
func (a *api) jobOf(ctx context.Context, s submission, id string, now time.Time) jobs.Job {
	p := principalOf(ctx)
	j := jobs.New(id, p.Tenant.Name, s.namespace, s.region, s.priority, s.labels, s.manifests, now)
	j.Template, j.RetryOf, j.GPUs, j.Podless, j.Retry = s.template, s.retryOf, s.gpus, s.podless, s.retry
	j.Regions, j.Demand, j.ReadyTimeout, j.NodeSelector = s.regions, s.demand, s.readyTimeout, s.nodeSelector
	j.CheckpointURI = jobs.CheckpointURI(a.checkpoint, j.Tenant, j.ID)
	j.MaxPreemptions, j.OnRegionLost = s.maxPreemptions, s.onRegionLost
	// A retry rule raising memory never takes a pod past the policy's cap on it: the raise stops
	// at the cap (jobs.Retrying), so an OOMKilled attempt is no way round the policy.
	j.MemoryFactorMax = s.memoryHeadroom
	if s.maxSpotPrice != nil {
		j.Spot = &jobs.Spot{InstanceType: s.spotType, MaxPrice: *s.maxSpotPrice}
		if s.deadline != nil {
			on, _ := jobs.ParseOnDeadline(s.onDeadline) // checked by admit
			j.Spot.Deadline, j.Spot.OnDeadline = s.deadline, on
		}
	}
	j.Array = s.array
	return j
}

// idempotencyOf is the caller's Idempotency-Key with a digest of the body it came with; nil
// without a key.
func idempotencyOf(ctx context.Context, key string, body []byte) *dynamo.Idempotency {
	if key == "" {
		return nil
	}
	sum := sha256.Sum256(body)
	return &dynamo.Idempotency{Tenant: principalOf(ctx).Tenant.Name, Key: key, BodyHash: hex.EncodeToString(sum[:])}
}

// idempotencyKey reads and checks the Idempotency-Key header.
func idempotencyKey(r *http.Request) (string, error) {
	k := r.Header.Get("Idempotency-Key")
	if k == "" {
		return "", nil
	}
	if len(k) > 255 || strings.ContainsFunc(k, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
		return "", Invalid("Idempotency-Key must be 1–255 visible ASCII characters", FieldProblem{"Idempotency-Key", "use a UUID"})
	}
	return k, nil
}

// decodeManifests reads a request's manifests field; errors name the document and path.
func decodeManifests(field string, raw json.RawMessage) ([]map[string]any, error) {
	if len(raw) == 0 {
		return nil, Invalid(field+" is required", FieldProblem{field, "required"})
	}
	ms, err := manifest.DecodeJSON(raw, manifest.DefaultLimits)
	return ms, manifestError(field, err)
}

func manifestError(field string, err error) error {
	var me *manifest.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &me):
		where := field
		if me.Document >= 0 {
			where = fmt.Sprintf("%s[%d]", field, me.Document)
		}
		if me.Path != "" {
			where += "." + me.Path
		}
		return Invalid("a manifest could not be read", FieldProblem{where, me.Problem})
	}
	return Invalid("the manifests could not be read: " + err.Error())
}

// instanceType is EC2's naming: family and generation, a dot, then size (g5.xlarge, u-6tb1.metal).
var instanceType = regexp.MustCompile(`^[a-z][a-z0-9-]*\.[a-z0-9]+$`)

// holdAtSubmission stores a capped job already held by its cap when the last spot price the drains
// kept for its instance type in its region is above it: it then waits apart (dynamo.Held), out of
// every drain's read path, until a drain observes a price its cap allows. A job with a spot
// deadline or several regions is judged by the drains as any other. A job whose type no drain has
// priced yet is queued as usual; its first drain holds it if it must.
func (a *api) holdAtSubmission(ctx context.Context, j *jobs.Job, now time.Time) error {
	if j.Spot == nil || j.Spot.Deadline != nil || j.Roaming() {
		return nil
	}
	histories, err := a.jobs.SpotPriceHistories(ctx, j.Region, []string{j.Spot.InstanceType}, now)
	if err != nil {
		return err
	}
	points := histories[j.Spot.InstanceType]
	if len(points) == 0 {
		return nil
	}
	last := points[len(points)-1]
	if last.Price <= j.Spot.MaxPrice {
		return nil
	}
	price := last.Price
	j.PendingReason = string(admission.ReasonSpotPriceAboveCap)
	j.SpotGate = &jobs.SpotGate{InstanceType: j.Spot.InstanceType, MaxPrice: j.Spot.MaxPrice, ObservedPrice: &price, CheckedAt: last.At.UTC()}
	return nil
}
