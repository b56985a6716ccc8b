// Package policy decides whether a tenant's manifests may run: kinds, namespaces, what the
// Kubernetes API server would refuse, the Pod Security Standards restricted profile, the pod
// fields that reach past a tenant's namespace, resource caps and trusted registries. It does no
// I/O.
package policy

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"

	"github.com/tidegate/tidegate/shared/demand"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Violation is one reason a manifest may not run: which document, which field, and what to
// change. A 422 policy_violation carries them all.
type Violation struct {
	// Document is the manifest's index in the request, from 0.
	Document int    `json:"document"`
	Kind     string `json:"kind,omitempty"`
	Name     string `json:"name,omitempty"`
	// Field is a path into the document, as Kubernetes writes them:
	// spec.jobTemplate.spec.template.spec.containers[0].securityContext.privileged. It is ""
	// when the problem is the whole document.
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (v Violation) String() string {
	return fmt.Sprintf("document %d (%s %q): %s: %s", v.Document, v.Kind, v.Name, v.Field, v.Message)
}

// Request is what one submission asks to run.
type Request struct {
	// Manifests are the decoded documents, as JSON or YAML decoding gives them.
	Manifests []map[string]any
	// Namespaces are the tenant's: a manifest may run in these and no other.
	Namespaces []string
	// DefaultNamespace is the request's namespace, for manifests that name none.
	DefaultNamespace string
}

// Result is the decision on a Request.
type Result struct {
	// Manifests are the request's, with metadata.namespace filled in from the default where it
	// was missing. A filled-in manifest is a shallow copy; the request's maps are not changed,
	// and the result shares everything below metadata with them.
	Manifests []map[string]any
	// GPUs is what the manifests' pods ask for in all: each pod's effective GPU request times the
	// pods its workload runs at once (a Job's parallelism, a Deployment's replicas). Dispatch
	// holds a region's GPU budget with it.
	GPUs int64
	// Demand is what the manifests' pods that can run at once request in all, per resource,
	// each pod counted as the kube-scheduler counts it with Config.ContainerDefaults standing
	// for the requests a container leaves out (countDemand); empty when no pod runs. It is the
	// job's only when Allowed.
	Demand demand.Demand
	// NodeSelector is the node labels the manifests' pods select, the same for every pod
	// (countDemand refuses pods that disagree): what says which of a region's flavors the job
	// may run on. Nil when no pod selects any.
	NodeSelector map[string]string
	// Pods counts the manifests that run pods (a Pod, or a workload with a pod template); a
	// job with none (ConfigMaps, Services) is done once applied.
	Pods int
	// MemoryHeadroom is how many times the memory of its hungriest pod fits the memory cap
	// (Config.MaxMemory): how far a retry rule may raise it (jobs.RetryRule.MemoryFactor) and
	// still be what the policy allows. 0 when no cap is set or no pod asks for memory.
	MemoryHeadroom float64
	// Violations are every problem found, by document and, within one, in the order the checks
	// run: kind, namespace, name, schema (by field), what the API server would refuse in the
	// metadata, the metadata that is Tidegate's or the cluster's (ownmeta.go), the kind's own
	// rules, what the API server would refuse in the pod and the pod template's metadata that is
	// Tidegate's, Pod Security (in the upstream evaluator's order), the pod fields that reach past
	// the namespace and where the pod asks to be placed, caps,
	// registries, the kind's volume claims, and last whether it never ends beside an object that
	// does (ends.go). The same request always gives the same list.
	Violations []Violation
}

// Allowed reports whether the manifests may run.
func (r Result) Allowed() bool { return len(r.Violations) == 0 }

// Checker applies one Config. It is safe for concurrent use.
type Checker struct {
	kinds       map[Kind]kindRule
	allowedText string
	caps        []resourceCap
	registries  []string
	trustedText string
	evaluator   psa.Evaluator

	pods PodFields
	// accounts are the service accounts a pod may run as: "default", which every namespace
	// has and a pod naming none runs as, and the allowed ones.
	accounts     []string
	ephemeralCap resource.Quantity
	volumeCap    resource.Quantity
	defaults     demand.Defaults
	// apps is the hosted apps' namespace, reserved as kube-* and default are.
	apps string
}

// restricted is the profile every pod is held to, at the newest version this module knows.
var restricted = api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}

// NewChecker validates cfg and builds the checker for it, with the upstream Pod Security
// evaluator made once.
func NewChecker(cfg Config) (*Checker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("policy config: %w", err)
	}
	evaluator, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("building the pod security evaluator: %w", err)
	}
	allowed := cfg.Kinds
	if len(allowed) == 0 {
		allowed = DefaultKinds()
	}
	c := &Checker{
		kinds:       make(map[Kind]kindRule, len(allowed)),
		allowedText: kindList(allowed),
		caps:        capsOf(cfg),
		registries:  slices.Clone(cfg.TrustedRegistries),
		trustedText: strings.Join(cfg.TrustedRegistries, ", "),
		evaluator:   evaluator,

		pods:         cfg.Pods.clone(),
		accounts:     append([]string{"default"}, cfg.Pods.ServiceAccounts...),
		ephemeralCap: cfg.Pods.ephemeralStorageCap(),
		volumeCap:    cfg.Pods.volumeSizeCap(),
		defaults:     demand.Defaults{CPU: cfg.ContainerDefaults.CPU.DeepCopy(), Memory: cfg.ContainerDefaults.Memory.DeepCopy()},
		apps:         cfg.AppsNamespace,
	}
	for _, k := range allowed {
		c.kinds[k] = checkable[k]
	}
	return c, nil
}

// Check decides on every manifest in req and reports every violation at once.
func (c *Checker) Check(req Request) Result {
	res := Result{Manifests: make([]map[string]any, len(req.Manifests)), Demand: demand.Demand{}}
	for i, m := range req.Manifests {
		res.Manifests[i] = c.checkDocument(i, m, req, &res)
	}
	c.checkEnds(req.Manifests, &res)
	// The submission's own rules are found after every document's: each goes after its
	// document's, so the list stays in document order.
	slices.SortStableFunc(res.Violations, func(a, b Violation) int { return cmp.Compare(a.Document, b.Document) })
	return res
}

// report collects one document's violations.
type report struct {
	doc        int
	kind, name string
	out        *[]Violation
	res        *Result
}

func (r *report) add(field, message string) {
	*r.out = append(*r.out, Violation{Document: r.doc, Kind: r.kind, Name: r.name, Field: field, Message: message})
}

func (r *report) addf(field, format string, args ...any) {
	r.add(field, fmt.Sprintf(format, args...))
}

// checkDocument checks one manifest and returns it normalised.
func (c *Checker) checkDocument(doc int, m map[string]any, req Request, res *Result) map[string]any {
	r := &report{doc: doc, out: &res.Violations, res: res}
	k, ok := identify(m, r)
	if !ok {
		return m
	}
	rule, allowed := c.kinds[k]
	if !allowed {
		why := never(k)
		if why != "" {
			r.addf("kind", msgKindNever, k, why, c.allowedText)
		} else {
			r.addf("kind", msgKindNotAllowed, k, c.allowedText)
		}
		if why == "cluster-scoped" {
			return m // it has no namespace to check
		}
	}
	m, ok = c.namespace(m, req, r)
	if allowed && ok {
		c.checkObject(rule, m, r)
	}
	return m
}

// identify reads the document's kind and name into r, and reports a document without a kind.
func identify(m map[string]any, r *report) (Kind, bool) {
	if m == nil {
		r.add("", msgEmptyDocument)
		return Kind{}, false
	}
	apiVersion, _ := m["apiVersion"].(string)
	r.kind, _ = m["kind"].(string)
	meta, _ := m["metadata"].(map[string]any)
	r.name, _ = meta["name"].(string)
	if apiVersion == "" {
		r.add("apiVersion", msgNoAPIVersion)
	}
	if r.kind == "" {
		r.add("kind", msgNoKind)
	}
	return Kind{APIVersion: apiVersion, Kind: r.kind}, apiVersion != "" && r.kind != ""
}

// checkObject checks a manifest of an allowed kind: decoded strictly into its typed object,
// then the kind's own rules and its pod's.
func (c *Checker) checkObject(rule kindRule, m map[string]any, r *report) {
	meta, _ := m["metadata"].(map[string]any)
	if generated, _ := meta["generateName"].(string); r.name == "" && generated == "" {
		r.add("metadata.name", msgNoName)
	}
	var d decoder
	obj := d.decode(m, rule.plan)
	slices.SortStableFunc(d.errs, func(a, b fieldError) int { return cmp.Compare(a.path, b.path) })
	for _, e := range d.errs {
		r.add(e.path, e.message)
	}
	if d.dropped > 0 {
		r.addf("", msgMoreErrors, d.dropped)
	}
	objMeta := obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
	checkAPIMeta(rule, objMeta, r)
	checkOwnMeta(objMeta, "metadata", r)
	if rule.check != nil {
		rule.check(obj, r)
	}
	if rule.pod != nil {
		p := rule.pod(obj)
		checkAPIPod(rule, p, r)
		if p.metaPath != "metadata" { // a Pod's own metadata is checked as the object's
			checkOwnMeta(p.meta, p.metaPath, r)
		}
		c.podSecurity(p, r)
		c.checkPodFields(p, r)
		c.checkPlacement(p, objMeta.Namespace, r)
		c.checkCaps(p, r)
		c.checkImages(p, r)
		gpus := podAmount(p.spec, gpuResource).total
		r.res.GPUs += gpus.Value() * podsAtOnce(m)
		r.res.Pods++
		c.countDemand(rule, obj, p, r)
	}
	if rule.claims != nil {
		for _, cl := range rule.claims(obj) {
			c.checkClaim(cl, r)
		}
	}
}

// podsAtOnce is how many pods of its template a workload runs at once: a Job's (or a CronJob's
// jobs') parallelism, a Deployment's or StatefulSet's replicas, 1 when unset or unreadable.
func podsAtOnce(m map[string]any) int64 {
	spec, _ := m["spec"].(map[string]any)
	if jt, ok := spec["jobTemplate"].(map[string]any); ok {
		spec, _ = jt["spec"].(map[string]any)
	}
	for _, field := range []string{"parallelism", "replicas"} {
		switch v := spec[field].(type) {
		case interface{ Int64() (int64, error) }:
			if n, err := v.Int64(); err == nil && n >= 0 {
				return n
			}
		case float64:
			if v >= 0 {
				return int64(v)
			}
		case int64:
			if v >= 0 {
				return v
			}
		case int:
			if v >= 0 {
				return int64(v)
			}
		}
	}
	return 1
}

// namespace returns m with metadata.namespace filled in from the request's default if it has
// none, and reports a namespace that is missing, reserved or not the tenant's. It reports false
// if the metadata is too malformed to check further.
//
// A reserved namespace (the cluster's kube-*, default, the hosted apps') is refused here whatever
// the tenant's record says: the admin CLI refuses to give a tenant one (tenancy.CheckNamespaces),
// but a record written another way, or before that check, would otherwise reach the cluster's
// own pods or other orgs' hosts. It is a violation of metadata.namespace, as a namespace not the
// tenant's is, so the same 422 names the field to change.
func (c *Checker) namespace(m map[string]any, req Request, r *report) (map[string]any, bool) {
	raw := m["metadata"]
	meta, isMap := raw.(map[string]any)
	if raw != nil && !isMap {
		r.addf("metadata", msgWrongType, "an object", describe(raw))
		return m, false
	}
	rawNS := meta["namespace"]
	ns, isString := rawNS.(string)
	if rawNS != nil && !isString {
		r.addf("metadata.namespace", msgWrongType, "a string", describe(rawNS))
		return m, false
	}
	if ns != "" {
		if err := tenancy.ReservedNamespace(ns, c.apps); err != nil {
			c.reserved(err, req, r)
		} else if !slices.Contains(req.Namespaces, ns) {
			r.addf("metadata.namespace", msgNamespaceNotYours, ns, req.Namespaces)
		}
		return m, true
	}
	if req.DefaultNamespace == "" {
		r.add("metadata.namespace", msgNoNamespace)
		return m, true
	}
	if err := tenancy.ReservedNamespace(req.DefaultNamespace, c.apps); err != nil {
		c.reserved(err, req, r)
	} else if !slices.Contains(req.Namespaces, req.DefaultNamespace) {
		r.addf("metadata.namespace", msgDefaultNamespaceNotYours, req.DefaultNamespace, req.Namespaces)
	}
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["namespace"] = req.DefaultNamespace
	m = maps.Clone(m)
	m["metadata"] = meta
	return m, true
}

// usable is the tenant's namespaces that are not reserved, for a message saying which to use.
func (c *Checker) usable(req Request) []string {
	var ok []string
	for _, ns := range req.Namespaces {
		if tenancy.ReservedNamespace(ns, c.apps) == nil {
			ok = append(ok, ns)
		}
	}
	return ok
}

// reserved reports a reserved namespace, why it is (tenancy's words) and which to use instead.
func (c *Checker) reserved(why error, req Request, r *report) {
	usable := c.usable(req)
	if len(usable) == 0 {
		r.add("metadata.namespace", why.Error())
		return
	}
	r.addf("metadata.namespace", msgNamespaceReserved, why, usable)
}
