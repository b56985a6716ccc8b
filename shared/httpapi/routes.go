package httpapi

import (
	"cmp"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/console"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/ratelimit"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/unblock"
)

// Deps are what the API needs from the outside world.
type Deps struct {
	Log        *slog.Logger
	Principals Principals
	Jobs       JobStore
	Templates  TemplateStore
	Policy     *policy.Checker
	Ringer     Ringer
	// Clusters reaches each region's cluster, for a job's live pods, events, logs and deletion;
	// nil where there is none (tests of the API alone).
	Clusters Clusters
	// Capacity is each region's limit of active jobs, for the queue's stats.
	Capacity func(region string) int
	// Flavors is each region's flavors, as the drain counts them: a job no flavor of any of its
	// regions could ever hold is refused at submission, and the queue's stats count each
	// flavor's use. Nil is Capacity's jobs as pods.
	Flavors func(region string) flavors.Region
	// DefaultQuota is a tenant's share of a region where its record sets none, for the queue's
	// stats (config.Config.DefaultQuota).
	DefaultQuota tenancy.Quota
	// LongRunningHoldsSlot and LongRunningPerTenant are config.LongRunningSettings, for the
	// queue's stats: whether a long-running job holds a slot, and how many a tenant may run.
	LongRunningHoldsSlot bool
	// ReadyTimeoutMax is the longest ready_timeout a job may name (config.Config's); 0 is
	// jobs.DefaultReadyTimeoutMax.
	ReadyTimeoutMax time.Duration
	// RegionLostAfter is how long a region goes unreached before it is lost
	// (config.Config's), for the queue stats; 0 is config.DefaultRegionLostAfter.
	RegionLostAfter time.Duration
	// WhatIfs, when set, answers ?what_if=true on the routes that make a job: each region's
	// admission run for the job, nothing stored. Without it those answer 503.
	WhatIfs WhatIfs
	// CheckpointBucket is the bucket under which each job submitted has its checkpoint prefix
	// (jobs.CheckpointURI); "" gives jobs none.
	CheckpointBucket     string
	LongRunningPerTenant int
	// MaxQueuedPerTenant is how many of a tenant's jobs may wait in the queues at once unless its
	// record sets its own (config.Config's); 0 is no cap: tests of the API alone.
	MaxQueuedPerTenant int
	// Regions jobs may run in; the first is the default where a route lets region be left out.
	Regions []string
	// IAMCaller is nil where no gateway authenticates callers (`tidegate dev`, tests).
	IAMCaller IAMCaller

	// Apps and Secrets keep hosted apps and their orgs' secrets, which Sealer seals; Sources
	// stores release sources in SourcesBucket under SourcesPrefix, where Uploads presigns the PUTs
	// of uploads (nil: POST .../uploads answers 503, and releases come only as the body).
	Apps    AppStore
	Secrets SecretStore
	Sealer  Sealer
	Sources SourceObjects
	Uploads UploadPresigner
	// Hosting reads the hosting cluster for the plan preview and hosts' logs; nil where there is
	// none (tests of the API alone), and those two routes answer 503.
	Hosting       HostingView
	SourcesBucket string
	SourcesPrefix string
	// AppRuntimes are the runtimes an app's tidegate.json may name (config.Config.AppRuntimes).
	AppRuntimes []string

	// Webhooks keeps webhooks and their delivery logs; WebhookQueue wakes the webhook function.
	// WebhooksAllowPrivate lets webhook URLs be http and private addresses (dev and tests).
	Webhooks             WebhookStore
	WebhookQueue         WebhookQueue
	WebhooksAllowPrivate bool
	// Rate is a tenant's request budget on this process unless its record sets its own (see
	// throttle.go). The zero Rate limits only tenants whose record sets both a rate and a burst:
	// tests of the API alone.
	Rate ratelimit.Limit
	// Metrics takes the API's request counts (metrics.APIRequests); nil records none.
	Metrics *metrics.Recorder
	// Audit, when set, keeps a record of every change a principal asks for (audit.go), and
	// serves GET /api/v1/audit; nil audits nothing (tests of the API alone).
	Audit AuditLog
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

type api struct {
	log        *slog.Logger
	principals Principals
	jobs       JobStore
	templates  TemplateStore
	policy     *policy.Checker
	ringer     Ringer
	regions    []string
	clusters   Clusters
	capacity   func(region string) int
	flavors    func(region string) flavors.Region // Deps.Flavors, else Capacity's
	quota      tenancy.Quota                      // Deps.DefaultQuota
	longRun    longRunning                        // Deps.LongRunning*
	readyMax   time.Duration                      // Deps.ReadyTimeoutMax
	lostAfter  time.Duration                      // Deps.RegionLostAfter
	whatIfs    WhatIfs                            // Deps.WhatIfs
	checkpoint string                             // Deps.CheckpointBucket
	maxQueued  int                                // Deps.MaxQueuedPerTenant
	censuses   censusCache                        // the censuses the caps of queued jobs read
	releaser   *unblock.Releaser                  // releases a cancelled job's dependents
	audit      AuditLog                           // Deps.Audit
	iamCaller  IAMCaller
	now        func() time.Time
	rate       ratelimit.Limit
	buckets    *ratelimit.Buckets
	metrics    *metrics.Recorder

	apps          AppStore
	secrets       SecretStore
	sealer        Sealer
	hosting       HostingView
	sources       SourceObjects
	uploads       UploadPresigner
	sourcesBucket string
	sourcesPrefix string
	appRuntimes   []string

	webhooks             WebhookStore
	webhookQueue         WebhookQueue
	webhooksAllowPrivate bool

	mux    *http.ServeMux
	paths  *http.ServeMux // the same routes without methods, to tell 405 from 404
	routes []Route
}

// Route is one registered method and path pattern, as /openapi.json must describe it.
type Route struct {
	Method string
	Path   string
	Open   bool // needs no principal
}

// Routes are the API's routes, as register lists them.
func Routes() []Route { return slices.Clone(newAPI(Deps{}).routes) }

// New returns the API as one handler.
func New(d Deps) http.Handler {
	a := newAPI(d)
	return a.outermost(a.mux)
}

func newAPI(d Deps) *api {
	a := &api{
		log: d.Log, principals: d.Principals, jobs: d.Jobs, templates: d.Templates, policy: d.Policy,
		ringer: d.Ringer, regions: d.Regions, clusters: d.Clusters, capacity: d.Capacity, iamCaller: d.IAMCaller, now: d.Now,
		rate: d.Rate, buckets: ratelimit.NewBuckets(maxBuckets), quota: d.DefaultQuota, metrics: d.Metrics,
		longRun:   longRunning{HoldsSlot: d.LongRunningHoldsSlot, PerTenant: d.LongRunningPerTenant},
		readyMax:  cmp.Or(d.ReadyTimeoutMax, jobs.DefaultReadyTimeoutMax),
		lostAfter: cmp.Or(d.RegionLostAfter, config.DefaultRegionLostAfter),
		whatIfs:   d.WhatIfs,
		maxQueued: d.MaxQueuedPerTenant, checkpoint: d.CheckpointBucket,
		mux: http.NewServeMux(), paths: http.NewServeMux(),
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.flavors = d.Flavors; a.flavors == nil && d.Capacity != nil {
		a.flavors = func(region string) flavors.Region { return flavors.Set(nil).Of(region, d.Capacity(region), 0) }
	}
	if a.iamCaller == nil {
		a.iamCaller = func(*http.Request) (string, bool) { return "", false }
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.apps, a.secrets, a.sealer, a.hosting = d.Apps, d.Secrets, d.Sealer, d.Hosting
	a.sources, a.sourcesBucket, a.sourcesPrefix, a.appRuntimes = d.Sources, d.SourcesBucket, d.SourcesPrefix, d.AppRuntimes
	a.uploads = d.Uploads
	a.webhooks, a.webhookQueue, a.webhooksAllowPrivate = d.Webhooks, d.WebhookQueue, d.WebhooksAllowPrivate
	a.releaser = &unblock.Releaser{Jobs: d.Jobs, Ringer: d.Ringer, Log: a.log, Now: a.now}
	a.audit = d.Audit
	a.register()
	return a
}

// register lists every route of the API, in one place.
func (a *api) register() {
	a.open("GET /healthz", a.healthz)
	a.open("GET /openapi.json", a.openAPI)

	a.handle("POST /api/v1/manifests", a.authed(accessWrite, a.submitManifests))
	a.handle("POST /api/v1/manifests/validate", a.authed(accessRead, a.validateManifests))
	a.handle("POST /api/v1/jobs", a.authed(accessWrite, a.submitJob))
	a.handle("GET /api/v1/jobs", a.authed(accessRead, a.listJobs))
	a.handle("GET /api/v1/jobs/{id}", a.authed(accessRead, a.getJob))
	a.handle("GET /api/v1/jobs/{id}/pods", a.authed(accessRead, a.jobPods))
	a.handle("GET /api/v1/jobs/{id}/events", a.authed(accessRead, a.jobEvents))
	a.handle("GET /api/v1/jobs/{id}/decisions", a.authed(accessRead, a.jobDecisions))
	a.handle("GET /api/v1/jobs/{id}/logs", a.authed(accessRead, a.jobLogs))
	a.handle("DELETE /api/v1/jobs/{id}", a.authed(accessWrite, a.cancelJob))
	a.handle("POST /api/v1/jobs/{id}/retry", a.authed(accessWrite, a.retryJob))
	a.handle("POST /api/v1/jobs/bulk-delete", a.authed(accessWrite, a.bulkDelete))
	a.handle("GET /api/v1/queue/stats", a.authed(accessRead, a.queueStats))
	a.handle("GET /api/v1/queue/{region}/ahead", a.authed(accessRead, a.queueAhead))
	a.handle("GET /api/v1/costs", a.authed(accessRead, a.costs))
	a.handle("GET /api/v1/audit", a.authed(accessRead, a.auditLog))

	a.handle("POST /api/v1/workflows", a.authed(accessWrite, a.submitWorkflow))
	a.handle("GET /api/v1/workflows", a.authed(accessRead, a.listWorkflows))
	a.handle("GET /api/v1/workflows/{id}", a.authed(accessRead, a.getWorkflow))
	a.handle("DELETE /api/v1/workflows/{id}", a.authed(accessWrite, a.cancelWorkflow))

	a.handle("POST /api/v1/templates", a.authed(accessWrite, a.createTemplate))
	a.handle("GET /api/v1/templates", a.authed(accessRead, a.listTemplates))
	a.handle("GET /api/v1/templates/{name}", a.authed(accessRead, a.getTemplate))
	a.handle("PUT /api/v1/templates/{name}", a.authed(accessWrite, a.replaceTemplate))
	a.handle("DELETE /api/v1/templates/{name}", a.authed(accessWrite, a.deleteTemplate))
	a.handle("POST /api/v1/templates/{name}/jobs", a.authed(accessWrite, a.runTemplate))

	a.handle("POST /api/v1/webhooks", a.authed(accessWrite, a.createWebhook))
	a.handle("GET /api/v1/webhooks", a.authed(accessRead, a.listWebhooks))
	a.handle("GET /api/v1/webhooks/{id}", a.authed(accessRead, a.getWebhook))
	a.handle("DELETE /api/v1/webhooks/{id}", a.authed(accessWrite, a.deleteWebhook))
	a.handle("POST /api/v1/webhooks/{id}/rotate-secret", a.authed(accessWrite, a.rotateWebhookSecret))
	a.handle("POST /api/v1/webhooks/{id}/test", a.authed(accessWrite, a.testWebhook))
	a.handle("GET /api/v1/webhooks/{id}/deliveries", a.authed(accessRead, a.listDeliveries))
	a.handle("POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", a.authed(accessWrite, a.redeliver))

	a.handle("POST /api/v1/apps/{name}/uploads", a.authed(accessDeploy, a.createUpload))
	a.handle("POST /api/v1/apps/{name}/releases", a.authed(accessDeploy, a.uploadRelease))
	a.handle("GET /api/v1/apps", a.authed(accessRead, a.listApps))
	a.handle("GET /api/v1/apps/plan", a.authed(accessRead, a.appsPlan))
	a.handle("GET /api/v1/apps/{name}/logs", a.authed(accessDeploy, a.appLogs))
	a.handle("GET /api/v1/apps/{name}", a.authed(accessRead, a.getApp))
	a.handle("GET /api/v1/apps/{name}/releases", a.authed(accessRead, a.listReleases))
	a.handle("POST /api/v1/apps/{name}/rollback", a.authed(accessDeploy, a.rollbackApp))
	a.handle("POST /api/v1/apps/{name}/stop", a.authed(accessDeploy, a.stopApp))
	a.handle("POST /api/v1/apps/{name}/start", a.authed(accessDeploy, a.startApp))
	a.handle("DELETE /api/v1/apps/{name}", a.authed(accessDeploy, a.deleteApp))
	a.handle("PUT /api/v1/secrets/{name}", a.authed(accessWrite, a.putSecret))
	a.handle("GET /api/v1/secrets", a.authed(accessRead, a.listSecrets))
	a.handle("DELETE /api/v1/secrets/{name}", a.authed(accessWrite, a.deleteSecret))
	// A host authenticates with its own token, which registerHost checks: no principal, yet not
	// open either (openapi.json gives it the hostToken scheme).
	a.handle("POST /api/v1/hosts/{host}/register", a.registerHost)

	// The web console: its page at / and its scripts and styles, outside the API's routes (and
	// its contract); it reaches the API through the routes above like any client.
	a.mux.Handle("GET /{$}", console.Index())
	a.mux.Handle("GET "+console.AssetPrefix, console.Assets())

	a.mux.HandleFunc("/", a.serve(a.noRoute))
}

func (a *api) open(pattern string, h handlerFunc)   { a.add(pattern, true, h) }
func (a *api) handle(pattern string, h handlerFunc) { a.add(pattern, false, h) }

func (a *api) add(pattern string, open bool, h handlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	a.routes = append(a.routes, Route{Method: method, Path: path, Open: open})
	a.mux.HandleFunc(pattern, a.serve(h))
	if !slices.ContainsFunc(a.routes[:len(a.routes)-1], func(r Route) bool { return r.Path == path }) {
		a.paths.HandleFunc(path, func(http.ResponseWriter, *http.Request) {})
	}
}

// serve adapts a handlerFunc: an error it returns becomes the API's error answer.
func (a *api) serve(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.writeError(w, r, err)
		}
	}
}

// noRoute answers 405 with the allowed methods when the path exists, else 404.
func (a *api) noRoute(w http.ResponseWriter, r *http.Request) error {
	if _, pattern := a.paths.Handler(r); pattern != "" {
		var allowed []string
		for _, rt := range a.routes {
			if rt.Path == pattern {
				allowed = append(allowed, rt.Method)
			}
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		return Errorf(CodeMethod, detailMethod, r.Method, r.URL.Path, strings.Join(allowed, ", "))
	}
	return Errorf(CodeNotFound, detailNoRoute, r.Method, r.URL.Path)
}

func (a *api) healthz(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
