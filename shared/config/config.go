// Package config reads Tidegate's settings from the environment once, into a typed, validated Config.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/capacitytype"
	"github.com/tidegate/tidegate/shared/costing"
	"github.com/tidegate/tidegate/shared/hostplan"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/ratelimit"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Config is everything a Tidegate function needs to know about where it runs. It is read once in
// main and passed down; nothing reads the environment after that.
type Config struct {
	// Tables, queues and the bucket, by name or URL as AWS gives them.
	JobsTable        string
	EventsTable      string
	ControlTable     string
	DispatchQueueURL string
	WebhookQueueURL  string
	SourcesBucket    string
	SourcesPrefix    string // isolates tests that share one bucket; empty in AWS

	// Regions maps each region jobs may run in to its EKS cluster's name.
	Regions map[string]string
	// HostingRegion is the region whose cluster runs hosted apps.
	HostingRegion string
	// AppsNamespace is the namespace of the hosting cluster that holds hosts' pods and Secrets.
	AppsNamespace string
	// Stack names the deployment (template.yaml: the CloudFormation stack's name; the control
	// table's name when unset): its hosts carry it, so deployments sharing AppsNamespace leave
	// each other's hosts alone.
	Stack string
	// PublicURL is the API's base URL as a hosted app reaches it, to register its host.
	PublicURL string
	// RegionCapacity caps concurrently active jobs per region; a region not named has DefaultCapacity.
	RegionCapacity map[string]int
	// RegionGPUs caps the GPUs a region's active jobs may ask for in all; a region not named has no GPU cap.
	RegionGPUs map[string]int
	// DrainReadBudget is how many queued jobs a drain reads past its region's room at most
	// (TIDEGATE_DRAIN_READ_BUDGET); 0 is dispatch's default (dispatch.DefaultReadBudget).
	DrainReadBudget int
	// Flavors is each region's capacity as a list of flavors (TIDEGATE_FLAVORS, JSON), read by
	// shared/flavors where Kubernetes quantities are understood; "" gives every region one flavor
	// of RegionCapacity's jobs as pods and RegionGPUs' GPUs.
	Flavors string
	// RateLimit (tokens a second) and RateBurst (the bucket's size) are a tenant's request budget
	// on one API process unless its record sets its own; 0 is DefaultRateLimit, DefaultRateBurst.
	RateLimit float64
	RateBurst int
	// DefaultQuota is the share of each region a tenant has when its record sets none
	// (`tidegate admin tenants put --quota`). Zero, when unset, with no tenant's quota set for a
	// region, shares that region by priority alone, as before quotas.
	DefaultQuota tenancy.Quota
	// CapacityTypeLabel is the node label that tells the clusters' on-demand nodes from spot ones
	// (one of capacitytype.Labels; capacitytype.Default when unset): a job past its spot deadline
	// that runs on demand has its pods select on-demand nodes by it.
	CapacityTypeLabel string

	// JobRetention is how long a finished job's record is kept after its end before DynamoDB's
	// TTL deletes it (its events keep their own 30 days from when they happened); 0 keeps records
	// for good. TIDEGATE_JOB_RETENTION_DAYS, whole days, DefaultJobRetentionDays when unset.
	JobRetention time.Duration
	// AuditRetention is how long an audit record is kept before DynamoDB's TTL deletes it; 0
	// keeps them for good. TIDEGATE_AUDIT_RETENTION_DAYS, whole days, DefaultAuditRetentionDays
	// when unset.
	AuditRetention time.Duration
	// RegionLostAfter is how long a region's cluster goes unreached before it is lost: its
	// running jobs that ask for it (on_region_lost: requeue) run again in another region.
	// TIDEGATE_REGION_LOST_AFTER, a duration, DefaultRegionLostAfter when unset.
	RegionLostAfter time.Duration
	// JobTTL is the ttlSecondsAfterFinished dispatch gives a batch/v1 Job (and a CronJob's
	// jobTemplate) whose manifest sets none or less: the cluster deletes the finished Job that
	// long after it ends. 0 leaves Jobs as their manifests have them. Never below MinJobTTL, so
	// that the beat (every minute) has recorded the end before the Job and its pods are gone.
	JobTTL time.Duration
	// Watch is how long after its start each beat watches the regions' Jobs and bare pods, to
	// record a job's end as it happens and give its room back at once (TIDEGATE_WATCH_SECONDS,
	// whole seconds; WatchFor(BeatInterval) when unset). 0 watches not: an end waits for the beat.
	Watch time.Duration
	// LongRunning is how Deployments' and StatefulSets' jobs share a region (longrunning.go).
	LongRunning LongRunningSettings
	// Preemption is how a region takes borrowed room back (preemption.go).
	Preemption PreemptionSettings
	// CheckpointBucket is the S3 bucket under which each job has a prefix of its own for its
	// checkpoints (TIDEGATE_CHECKPOINT_BUCKET): every pod dispatch applies is told it in
	// TIDEGATE_CHECKPOINT_URI. "" tells pods none.
	CheckpointBucket string
	// MaxQueuedPerTenant is how many of a tenant's jobs may wait in the queues at once, across
	// regions, unless its record sets its own (TIDEGATE_MAX_QUEUED_PER_TENANT;
	// DefaultMaxQueuedPerTenant when unset; 0 is no cap). The API holds a submission to it by the
	// drains' censuses, a minute old at most.
	MaxQueuedPerTenant int
	// OnDemandPrices is each instance type's on-demand price per hour in dollars, what a finished
	// job's on-demand nodes are costed at (shared/costing); a type not named has no known cost.
	OnDemandPrices map[string]float64
	// AppRuntimes are the runtimes a hosted app's tidegate.json may name, each an image pinned by
	// digest (TIDEGATE_APP_RUNTIMES, name=image@sha256:…,…); an app that names none runs on
	// podspec.DefaultImage.
	AppRuntimes apps.Runtimes
	// AppUnreadyLimit is how long a registered host's readiness check (its tidegate.json "ready")
	// may fail before the beat revives the host as a crash with verdict unhealthy
	// (TIDEGATE_APP_UNREADY_SECONDS, whole seconds from hostplan.MinUnreadyLimit to
	// MaxAppUnreadyLimit; hostplan.DefaultUnreadyLimit when unset).
	AppUnreadyLimit time.Duration
	// ReadyTimeoutMax is the longest ready_timeout a job may name (TIDEGATE_READY_TIMEOUT_MAX, a
	// Go duration; jobs.DefaultReadyTimeoutMax when unset): the pods of a gang that did schedule hold
	// their room for that long while the rest wait.
	ReadyTimeoutMax time.Duration

	// Endpoints replace AWS's own for each service when set: the local stand-ins in dev and tests.
	Endpoints Endpoints
	// Kubeconfig, when set, reaches every region's cluster through it instead of EKS.
	Kubeconfig string

	// Policy is the admission policy every tenant's manifests meet, as the environment spells it.
	Policy PolicySettings
	// Isolation is what the beat keeps namespaces apart with (see IsolationSettings).
	Isolation IsolationSettings

	// WebhooksAllowPrivate lets webhooks reach http and private addresses: dev and tests only.
	WebhooksAllowPrivate bool
	// LogJSON makes logs JSON lines, as CloudWatch wants them.
	LogJSON bool

	// KMSKey is the KMS key (its ARN, id or alias) under which shared/keyring makes the data keys
	// that seal orgs' secrets and webhooks' signing secrets: the API and the beat need it, and
	// refuse to start without it. It names the key; the key material never leaves KMS.
	KMSKey string
}

// Endpoints are per-service endpoint overrides; an empty one means AWS's own.
type Endpoints struct {
	DynamoDB string
	SQS      string
	S3       string
	EC2      string
	STS      string
	EKS      string
	KMS      string
}

// PolicySettings are the admission policy's settings as the environment gives them. Only the API
// admits manifests, so only its wiring (shared/handlers/apihandler) reads them into a
// policy.Config and refuses to start when one is malformed: that takes Kubernetes' quantity
// parser and the Pod Security evaluator, which no other function should link or initialise.
type PolicySettings struct {
	// MaxGPUs, MaxCPU and MaxMemory are Kubernetes quantities such as 8, 500m or 64Gi; "" is no cap.
	MaxGPUs   string
	MaxCPU    string
	MaxMemory string
	// TrustedRegistries are the image reference prefixes images must start with; none means any.
	TrustedRegistries []string
	// The pod fields that reach past a tenant's namespace (policy.PodFields): each list is the
	// names a pod may give, none when empty; each flag allows the field.
	AllowNodeName            string
	Tolerations              []string
	PriorityClasses          []string
	RuntimeClasses           []string
	ServiceAccounts          []string
	AllowServiceAccountToken string
	StorageClasses           []string
	// CSIDrivers are the drivers an inline CSI volume may name; none when empty.
	CSIDrivers []string
	// NodeSelectorKeys are the node labels a pod may select nodes by; empty is the policy's
	// default (policy.DefaultNodeSelectorKeys).
	NodeSelectorKeys []string
	// MaxEphemeralStorage and MaxVolumeSize are quantities; "" is the policy's default cap.
	MaxEphemeralStorage string
	MaxVolumeSize       string
}

// DefaultCapacity is the number of active jobs a region admits when nothing says otherwise: enough to
// see concurrency in dev, small enough that a runaway submitter cannot flood a cluster.
const DefaultCapacity = 10

// DefaultJobRetentionDays keeps a finished job's record three months: long enough to look back
// over a quarter's runs, short enough that the jobs table does not grow for ever.
const DefaultJobRetentionDays = 90

// MaxJobRetentionDays bounds TIDEGATE_JOB_RETENTION_DAYS at ten years; 0 keeps records for good.
const MaxJobRetentionDays = 3650

// DefaultAuditRetentionDays keeps an audit record 400 days: a year's reviews and a margin.
const DefaultAuditRetentionDays = 400

// DefaultRegionLostAfter and MinRegionLostAfter bound how long a region goes unreached before it
// is lost: ten minutes outlasts a control plane's upgrade or a short network fault. The floor is
// for the dev stack's fast beats; in AWS, below two beats (two minutes) one missed LIST moves jobs.
const (
	DefaultRegionLostAfter = 10 * time.Minute
	MinRegionLostAfter     = 10 * time.Second
)

// DefaultJobTTL is the ttlSecondsAfterFinished Tidegate gives the Jobs it creates: an hour, time
// for a person to look at a finished Job's pods with kubectl, and sixty beats to record its end.
const DefaultJobTTL = time.Hour

// MinJobTTL is the least TIDEGATE_JOB_TTL_SECONDS may be: five beats (one a minute, each up to 55
// s). A Job the cluster deletes before a beat has seen it end loses its result (the beat records
// it failed as vanished), so the TTL must comfortably outlast a late or failed beat or two.
const MinJobTTL = 5 * time.Minute

// DefaultRateLimit and DefaultRateBurst are a tenant's request budget on one API process when
// nothing sets another. 20 tokens a second is a fifth of the HTTP API's stage throttle
// (template.yaml: 100 a second for every caller together), so one tenant's runaway loop leaves
// room for others, and twenty times what `tidegate jobs submit --wait` polls at (one a second). A
// burst of 100 lets a script submit a hundred jobs back to back.
const (
	DefaultRateLimit = 20
	DefaultRateBurst = 100
)

// DefaultAppsNamespace holds hosted apps when TIDEGATE_APPS_NAMESPACE is not set.
const DefaultAppsNamespace = "tidegate-apps"

// Names of the environment variables, kept together so docs and template.yaml can be checked against them.
const (
	EnvJobsTable            = "TIDEGATE_JOBS_TABLE"
	EnvEventsTable          = "TIDEGATE_EVENTS_TABLE"
	EnvControlTable         = "TIDEGATE_CONTROL_TABLE"
	EnvDispatchQueueURL     = "TIDEGATE_DISPATCH_QUEUE_URL"
	EnvWebhookQueueURL      = "TIDEGATE_WEBHOOK_QUEUE_URL"
	EnvSourcesBucket        = "TIDEGATE_SOURCES_BUCKET"
	EnvSourcesPrefix        = "TIDEGATE_SOURCES_PREFIX"
	EnvRegions              = "TIDEGATE_REGIONS"
	EnvHostingRegion        = "TIDEGATE_HOSTING_REGION"
	EnvAppsNamespace        = "TIDEGATE_APPS_NAMESPACE"
	EnvStack                = "TIDEGATE_STACK"
	EnvPublicURL            = "TIDEGATE_PUBLIC_URL"
	EnvRegionCapacity       = "TIDEGATE_REGION_CAPACITY"
	EnvRegionGPUs           = "TIDEGATE_REGION_GPUS"
	EnvFlavors              = "TIDEGATE_FLAVORS"
	EnvRateLimit            = "TIDEGATE_RATE_LIMIT"
	EnvRateBurst            = "TIDEGATE_RATE_BURST"
	EnvDefaultQuota         = "TIDEGATE_DEFAULT_QUOTA"
	EnvJobRetentionDays     = "TIDEGATE_JOB_RETENTION_DAYS"
	EnvAuditRetentionDays   = "TIDEGATE_AUDIT_RETENTION_DAYS"
	EnvRegionLostAfter      = "TIDEGATE_REGION_LOST_AFTER"
	EnvJobTTLSeconds        = "TIDEGATE_JOB_TTL_SECONDS"
	EnvWatchSeconds         = "TIDEGATE_WATCH_SECONDS"
	EnvCapacityTypeLabel    = "TIDEGATE_CAPACITY_TYPE_LABEL"
	EnvOnDemandPrices       = "TIDEGATE_ON_DEMAND_PRICES"
	EnvAppRuntimes          = "TIDEGATE_APP_RUNTIMES"
	EnvAppUnreadySeconds    = "TIDEGATE_APP_UNREADY_SECONDS"
	EnvReadyTimeoutMax      = "TIDEGATE_READY_TIMEOUT_MAX"
	EnvLongRunningHoldsSlot = "TIDEGATE_LONG_RUNNING_HOLDS_SLOT"
	EnvLongRunningPerTenant = "TIDEGATE_LONG_RUNNING_PER_TENANT"
	EnvDrainReadBudget      = "TIDEGATE_DRAIN_READ_BUDGET"
	EnvPreemptionsPerMinute = "TIDEGATE_PREEMPTIONS_PER_MINUTE"
	EnvPreemptionCooldown   = "TIDEGATE_PREEMPTION_COOLDOWN"
	EnvPreemptionGraceMax   = "TIDEGATE_PREEMPTION_GRACE_MAX"
	EnvCheckpointBucket     = "TIDEGATE_CHECKPOINT_BUCKET"
	EnvMaxQueuedPerTenant   = "TIDEGATE_MAX_QUEUED_PER_TENANT"
	EnvKubeconfig           = "TIDEGATE_KUBECONFIG"
	EnvWebhooksAllowPrivate = "TIDEGATE_WEBHOOKS_ALLOW_PRIVATE"
	EnvLogJSON              = "TIDEGATE_LOG_JSON"
	EnvKMSKey               = "TIDEGATE_KMS_KEY"
	EnvSecretsKey           = "TIDEGATE_SECRETS_KEY" // no longer read: refused, saying what replaces it
	EnvDynamoDBEndpoint     = "TIDEGATE_DYNAMODB_ENDPOINT"
	EnvSQSEndpoint          = "TIDEGATE_SQS_ENDPOINT"
	EnvS3Endpoint           = "TIDEGATE_S3_ENDPOINT"
	EnvEC2Endpoint          = "TIDEGATE_EC2_ENDPOINT"
	EnvSTSEndpoint          = "TIDEGATE_STS_ENDPOINT"
	EnvEKSEndpoint          = "TIDEGATE_EKS_ENDPOINT"
	EnvKMSEndpoint          = "TIDEGATE_KMS_ENDPOINT"
	EnvPolicyMaxGPUs        = "TIDEGATE_POLICY_MAX_GPUS"
	EnvPolicyMaxCPU         = "TIDEGATE_POLICY_MAX_CPU"
	EnvPolicyMaxMemory      = "TIDEGATE_POLICY_MAX_MEMORY"
	EnvPolicyRegistries     = "TIDEGATE_POLICY_TRUSTED_REGISTRIES"

	EnvPolicyAllowNodeName            = "TIDEGATE_POLICY_ALLOW_NODE_NAME"
	EnvPolicyTolerations              = "TIDEGATE_POLICY_TOLERATIONS"
	EnvPolicyPriorityClasses          = "TIDEGATE_POLICY_PRIORITY_CLASSES"
	EnvPolicyRuntimeClasses           = "TIDEGATE_POLICY_RUNTIME_CLASSES"
	EnvPolicyServiceAccounts          = "TIDEGATE_POLICY_SERVICE_ACCOUNTS"
	EnvPolicyAllowServiceAccountToken = "TIDEGATE_POLICY_ALLOW_SERVICE_ACCOUNT_TOKEN"
	EnvPolicyStorageClasses           = "TIDEGATE_POLICY_STORAGE_CLASSES"
	EnvPolicyMaxEphemeralStorage      = "TIDEGATE_POLICY_MAX_EPHEMERAL_STORAGE"
	EnvPolicyMaxVolumeSize            = "TIDEGATE_POLICY_MAX_VOLUME_SIZE"
	EnvPolicyCSIDrivers               = "TIDEGATE_POLICY_CSI_DRIVERS"
	EnvPolicyNodeSelectorKeys         = "TIDEGATE_POLICY_NODE_SELECTOR_KEYS"
	EnvPodCIDRs                       = "TIDEGATE_CLUSTER_POD_CIDRS"
	EnvServiceCIDRs                   = "TIDEGATE_CLUSTER_SERVICE_CIDRS"
	EnvNodeCIDRs                      = "TIDEGATE_CLUSTER_NODE_CIDRS"
	EnvAppsResolvers                  = "TIDEGATE_APPS_DNS_RESOLVERS"
	EnvContainerCPU                   = "TIDEGATE_CONTAINER_DEFAULT_CPU"
	EnvContainerMemory                = "TIDEGATE_CONTAINER_DEFAULT_MEMORY"
	EnvContainerCPURequest            = "TIDEGATE_CONTAINER_DEFAULT_CPU_REQUEST"
	EnvContainerMemoryRequest         = "TIDEGATE_CONTAINER_DEFAULT_MEMORY_REQUEST"
	EnvPodsPerJob                     = "TIDEGATE_NAMESPACE_PODS_PER_JOB"
)

// FromEnv reads the Config from the process environment.
func FromEnv() (Config, error) { return Parse(os.Getenv) }

// Parse reads the Config through getenv, reporting every missing or malformed setting at once.
func Parse(getenv func(string) string) (Config, error) {
	r := &reader{getenv: getenv}
	c := Config{
		JobsTable:        r.need(EnvJobsTable),
		EventsTable:      r.need(EnvEventsTable),
		ControlTable:     r.need(EnvControlTable),
		DispatchQueueURL: r.need(EnvDispatchQueueURL),
		WebhookQueueURL:  r.need(EnvWebhookQueueURL),
		SourcesBucket:    r.need(EnvSourcesBucket),
		SourcesPrefix:    r.get(EnvSourcesPrefix),
		AppsNamespace:    cmp.Or(r.get(EnvAppsNamespace), DefaultAppsNamespace),
		PublicURL:        strings.TrimRight(r.get(EnvPublicURL), "/"),
		Kubeconfig:       r.get(EnvKubeconfig),
		Endpoints:        r.endpoints(),
	}
	c.Stack = cmp.Or(r.get(EnvStack), c.ControlTable)
	c.Regions, c.HostingRegion = r.regions()
	r.tunables(&c)
	c.Watch = r.watch()
	c.CapacityTypeLabel = r.capacityTypeLabel()
	c.WebhooksAllowPrivate = r.flag(EnvWebhooksAllowPrivate)
	c.LogJSON = r.flag(EnvLogJSON)
	c.KMSKey = r.kmsKey()
	c.CheckpointBucket = r.get(EnvCheckpointBucket)
	if err := r.err(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// reader reads settings through getenv and keeps every problem it meets, so that Parse reports
// them all at once rather than one per deploy.
type reader struct {
	getenv func(string) string
	errs   []error
}

// err is every problem r met, or nil.
func (r *reader) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return fmt.Errorf("reading configuration: %w", errors.Join(r.errs...))
}

// get is name's setting without surrounding space; "" when it is not set.
func (r *reader) get(name string) string { return strings.TrimSpace(r.getenv(name)) }

// capacityTypeLabel is EnvCapacityTypeLabel's label, capacitytype.Default when unset.
func (r *reader) capacityTypeLabel() string {
	v := cmp.Or(r.get(EnvCapacityTypeLabel), capacitytype.Default)
	if _, ok := capacitytype.OnDemandValue(v); !ok {
		r.fail(EnvCapacityTypeLabel, fmt.Errorf("%q is not a capacity-type label Tidegate knows; use one of %s", v, strings.Join(capacitytype.Labels, ", ")))
	}
	return v
}

// need is name's setting, which must be set.
func (r *reader) need(name string) string {
	v := r.get(name)
	if v == "" {
		r.errs = append(r.errs, fmt.Errorf("%s is not set", name))
	}
	return v
}

// fail keeps err as a problem with name's setting.
func (r *reader) fail(name string, err error) {
	r.errs = append(r.errs, fmt.Errorf("%s: %w", name, err))
}

// endpoints are the services' endpoint overrides; each is AWS's own unless set.
func (r *reader) endpoints() Endpoints {
	return Endpoints{
		DynamoDB: r.get(EnvDynamoDBEndpoint),
		SQS:      r.get(EnvSQSEndpoint),
		S3:       r.get(EnvS3Endpoint),
		EC2:      r.get(EnvEC2Endpoint),
		STS:      r.get(EnvSTSEndpoint),
		EKS:      r.get(EnvEKSEndpoint),
		KMS:      r.get(EnvKMSEndpoint),
	}
}

// regions are the regions jobs may run in, which must be set, and the hosting region: one of
// them, the first by name unless set.
func (r *reader) regions() (regions map[string]string, hosting string) {
	regions, err := ParseRegions(r.need(EnvRegions))
	if err != nil {
		r.fail(EnvRegions, err)
	}
	hosting = r.get(EnvHostingRegion)
	if len(regions) == 0 {
		return regions, hosting
	}
	names := Config{Regions: regions}.RegionNames()
	if hosting == "" {
		hosting = names[0]
	}
	if _, ok := regions[hosting]; !ok {
		r.errs = append(r.errs, fmt.Errorf("%s: %q is not one of %s", EnvHostingRegion, hosting, strings.Join(names, ", ")))
	}
	return regions, hosting
}

// capacity is name's per-region numbers, as ParseCapacity reads them.
func (r *reader) capacity(name string) map[string]int {
	v, err := ParseCapacity(r.getenv(name))
	if err != nil {
		r.fail(name, err)
	}
	return v
}

// cleanup is how long finished jobs' records are kept and the Kubernetes Jobs' TTL after they
// finish, each its default when unset.
func (r *reader) cleanup() (retention, ttl time.Duration) {
	days := DefaultJobRetentionDays
	if s := r.get(EnvJobRetentionDays); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > MaxJobRetentionDays {
			r.fail(EnvJobRetentionDays, fmt.Errorf("%q is not a whole number of days from 0 (keep for good) to %d", s, MaxJobRetentionDays))
		}
		days = v
	}
	ttl = DefaultJobTTL
	if s := r.get(EnvJobTTLSeconds); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > math.MaxInt32 || v > 0 && time.Duration(v)*time.Second < MinJobTTL {
			r.fail(EnvJobTTLSeconds, fmt.Errorf("%q is not 0 (leave Jobs as they are) or a whole number of seconds from %d: "+
				"a Job deleted before the beat has seen it end loses its result", s, int(MinJobTTL.Seconds())))
		}
		ttl = time.Duration(v) * time.Second
	}
	return time.Duration(days) * 24 * time.Hour, ttl
}

// auditRetention is how long audit records are kept, DefaultAuditRetentionDays when unset.
func (r *reader) auditRetention() time.Duration {
	days := DefaultAuditRetentionDays
	if s := r.get(EnvAuditRetentionDays); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > MaxJobRetentionDays {
			r.fail(EnvAuditRetentionDays, fmt.Errorf("%q is not a whole number of days from 0 (keep for good) to %d", s, MaxJobRetentionDays))
		}
		days = v
	}
	return time.Duration(days) * 24 * time.Hour
}

// regionLostAfter is how long a region goes unreached before it is lost, DefaultRegionLostAfter
// when unset.
func (r *reader) regionLostAfter() time.Duration {
	s := r.get(EnvRegionLostAfter)
	if s == "" {
		return DefaultRegionLostAfter
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < MinRegionLostAfter || d > 7*24*time.Hour {
		r.fail(EnvRegionLostAfter, fmt.Errorf("%q is not a duration from %s to 168h (e.g. 10m): how long a region goes unreached before its jobs that allow it run elsewhere", s, MinRegionLostAfter))
		return DefaultRegionLostAfter
	}
	return d
}

// watch is how long each beat watches: EnvWatchSeconds, or WatchFor(BeatInterval) when unset.
func (r *reader) watch() time.Duration {
	s := r.get(EnvWatchSeconds)
	if s == "" {
		return WatchFor(BeatInterval)
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || time.Duration(v)*time.Second >= BeatInterval {
		r.fail(EnvWatchSeconds, fmt.Errorf("%q is not 0 (no watch: a job's end waits for the next beat) or a whole number of seconds below the beat's %d; the default is %d",
			s, int(BeatInterval.Seconds()), int(WatchFor(BeatInterval).Seconds())))
	}
	return time.Duration(v) * time.Second
}

// rate is the default request budget: a rate (a number, fractions allowed) and a burst (a whole
// number), each 0 when not set, which means the default.
func (r *reader) rate() (rate float64, burst int) {
	if s := r.get(EnvRateLimit); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			r.fail(EnvRateLimit, fmt.Errorf("%q is not a number of requests a second ≥ 0", s))
		}
		rate = v
	}
	if s := r.get(EnvRateBurst); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			r.fail(EnvRateBurst, fmt.Errorf("%q is not a whole number ≥ 0", s))
		}
		burst = v
	}
	return rate, burst
}

// flag is name's true or false; false when it is not set.
func (r *reader) flag(name string) bool {
	v, err := parseBool(r.getenv(name))
	if err != nil {
		r.fail(name, err)
	}
	return v
}

// kmsKey is the KMS key that wraps the data keys sealing orgs' secrets, or "" when it is not set:
// only the functions that need it are given it, and they refuse to start without it. A secrets key
// in the environment, as an older template gave it, is refused: key material is no longer
// configuration.
func (r *reader) kmsKey() string {
	if r.get(EnvSecretsKey) != "" {
		r.errs = append(r.errs, fmt.Errorf("%s is set; remove it from the environment: secrets are now sealed under data keys from KMS, so set %s to the KMS key's ARN or alias instead, and re-seal values sealed under the old key with `tidegate admin secrets reseal --legacy-key-file FILE`", EnvSecretsKey, EnvKMSKey))
	}
	return r.get(EnvKMSKey)
}

// policy is the admission policy's settings as the environment spells them; the API reads them
// into a policy.Config (see PolicySettings).
func (r *reader) policy() PolicySettings {
	return PolicySettings{
		MaxGPUs:           r.get(EnvPolicyMaxGPUs),
		MaxCPU:            r.get(EnvPolicyMaxCPU),
		MaxMemory:         r.get(EnvPolicyMaxMemory),
		TrustedRegistries: splitList(r.getenv(EnvPolicyRegistries)),

		AllowNodeName:            r.get(EnvPolicyAllowNodeName),
		Tolerations:              splitList(r.getenv(EnvPolicyTolerations)),
		PriorityClasses:          splitList(r.getenv(EnvPolicyPriorityClasses)),
		RuntimeClasses:           splitList(r.getenv(EnvPolicyRuntimeClasses)),
		ServiceAccounts:          splitList(r.getenv(EnvPolicyServiceAccounts)),
		AllowServiceAccountToken: r.get(EnvPolicyAllowServiceAccountToken),
		StorageClasses:           splitList(r.getenv(EnvPolicyStorageClasses)),
		CSIDrivers:               splitList(r.getenv(EnvPolicyCSIDrivers)),
		NodeSelectorKeys:         splitList(r.getenv(EnvPolicyNodeSelectorKeys)),
		MaxEphemeralStorage:      r.get(EnvPolicyMaxEphemeralStorage),
		MaxVolumeSize:            r.get(EnvPolicyMaxVolumeSize),
	}
}

// RegionNames lists the configured regions in a stable order.
func (c Config) RegionNames() []string {
	names := make([]string, 0, len(c.Regions))
	for r := range c.Regions {
		names = append(names, r)
	}
	sort.Strings(names)
	return names
}

// Capacity is how many jobs region may have active at once.
func (c Config) Capacity(region string) int {
	if n, ok := c.RegionCapacity[region]; ok {
		return n
	}
	return DefaultCapacity
}

// Rate is a tenant's default request budget on one API process: RateLimit tokens a second, up to
// RateBurst at once, each the package default when 0.
func (c Config) Rate() ratelimit.Limit {
	l := ratelimit.Limit{Rate: c.RateLimit, Burst: c.RateBurst}
	if l.Rate <= 0 {
		l.Rate = DefaultRateLimit
	}
	if l.Burst <= 0 {
		l.Burst = DefaultRateBurst
	}
	return l
}

// GPUCapacity is how many GPUs region's active jobs may ask for in all; 0 is no cap.
func (c Config) GPUCapacity(region string) int64 { return int64(c.RegionGPUs[region]) }

// ParseRegions reads "us-east-1=cluster-a,us-west-2=cluster-b". In dev the cluster names are
// labels only: every region reaches the one sandbox through the kubeconfig.
func ParseRegions(s string) (map[string]string, error) {
	out := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		region, cluster, ok := strings.Cut(pair, "=")
		region, cluster = strings.TrimSpace(region), strings.TrimSpace(cluster)
		if !ok || region == "" || cluster == "" {
			return nil, fmt.Errorf("%q is not REGION=CLUSTER", pair)
		}
		if _, dup := out[region]; dup {
			return nil, fmt.Errorf("region %q is named twice", region)
		}
		out[region] = cluster
	}
	if len(out) == 0 {
		return nil, errors.New("name at least one REGION=CLUSTER")
	}
	return out, nil
}

// ParseCapacity reads "us-east-1=1,us-west-2=4"; an empty string is no overrides.
func ParseCapacity(s string) (map[string]int, error) {
	out := map[string]int{}
	for pair := range strings.SplitSeq(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		region, n, ok := strings.Cut(pair, "=")
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || strings.TrimSpace(region) == "" || err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not REGION=N with N a whole number ≥ 0", pair)
		}
		out[strings.TrimSpace(region)] = v
	}
	return out, nil
}

// quota is name's JOBS[:GPUS], as tenancy.ParseQuota reads it; none when it is not set.
func (r *reader) quota(name string) tenancy.Quota {
	s := r.get(name)
	if s == "" {
		return tenancy.Quota{}
	}
	q, err := tenancy.ParseQuota(s)
	if err != nil {
		r.fail(name, err)
	}
	return q
}

// onDemand reads an on-demand price table, TYPE=PRICE,… (costing.ParseOnDemand).
func (r *reader) onDemand(name string) map[string]float64 {
	t, err := costing.ParseOnDemand(r.get(name))
	if err != nil {
		r.fail(name, err)
	}
	return t
}

func (r *reader) appRuntimes(name string) apps.Runtimes {
	rs, err := apps.ParseRuntimes(r.get(name))
	if err != nil {
		r.fail(name, err)
	}
	return rs
}

// readyTimeoutMax reads the longest ready_timeout a job may name.
func (r *reader) readyTimeoutMax(name string) time.Duration {
	s := r.get(name)
	if s == "" {
		return jobs.DefaultReadyTimeoutMax
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < jobs.DefaultReadyTimeout || d > 24*time.Hour {
		r.fail(name, fmt.Errorf("%q is not a duration from %s (the default ready timeout, which every job may have) to 24h", s, jobs.DefaultReadyTimeout))
		return jobs.DefaultReadyTimeoutMax
	}
	return d
}

// MaxAppUnreadyLimit is the most TIDEGATE_APP_UNREADY_SECONDS may be: a host whose check has
// failed for an hour is not coming back by itself.
const MaxAppUnreadyLimit = time.Hour

// unreadyLimit reads how long a registered host may fail its readiness check, in whole seconds.
func (r *reader) unreadyLimit(name string) time.Duration {
	s := r.get(name)
	if s == "" {
		return hostplan.DefaultUnreadyLimit
	}
	v, err := strconv.Atoi(s)
	limit := time.Duration(v) * time.Second
	if err != nil || limit < hostplan.MinUnreadyLimit || limit > MaxAppUnreadyLimit {
		r.fail(name, fmt.Errorf("%q is not a whole number of seconds from %d to %d: a host's Ready condition turns False only "+
			"after its check failed for %d s, so a shorter limit judges it on one bad answer",
			s, int(hostplan.MinUnreadyLimit.Seconds()), int(MaxAppUnreadyLimit.Seconds()), int(hostplan.MinUnreadyLimit.Seconds())))
		return hostplan.DefaultUnreadyLimit
	}
	return limit
}

// splitList reads a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func parseBool(s string) (bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", s)
	}
	return v, nil
}

// BeatInterval is how often AWS runs the reconcile schedule: template.yaml's rate(1 minute).
const BeatInterval = time.Minute

// WatchFor is how long a beat every interval watches by default: all but a sixtieth of the
// interval (59 s of a minute), so it has let its lease go, and the Lambda its one reserved slot,
// before the next beat starts; the next beat's pass records what ended in between.
func WatchFor(interval time.Duration) time.Duration { return interval - interval/60 }
