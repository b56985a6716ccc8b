// Package config reads Tidegate's settings from the environment once, into a typed, validated Config.
package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/secretbox"
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
	// PublicURL is the API's base URL as a hosted app reaches it, to register its host.
	PublicURL string
	// RegionCapacity caps concurrently active jobs per region; a region not named has DefaultCapacity.
	RegionCapacity map[string]int
	// RegionGPUs caps the GPUs a region's active jobs may ask for in all; a region not named has no GPU cap.
	RegionGPUs map[string]int

	// Endpoints replace AWS's own for each service when set: the local stand-ins in dev and tests.
	Endpoints Endpoints
	// Kubeconfig, when set, reaches every region's cluster through it instead of EKS.
	Kubeconfig string

	// Policy is the admission policy every tenant's manifests meet, as the environment spells it.
	Policy PolicySettings

	// WebhooksAllowPrivate lets webhooks reach http and private addresses: dev and tests only.
	WebhooksAllowPrivate bool
	// LogJSON makes logs JSON lines, as CloudWatch wants them.
	LogJSON bool

	// SecretsKey seals and fingerprints orgs' secrets (shared/secretbox): the API and the beat
	// need it, and refuse to start without it; other functions are not given it.
	SecretsKey []byte
}

// Endpoints are per-service endpoint overrides; an empty one means AWS's own.
type Endpoints struct {
	DynamoDB string
	SQS      string
	S3       string
	EC2      string
	STS      string
	EKS      string
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
}

// DefaultCapacity is the number of active jobs a region admits when nothing says otherwise: enough to
// see concurrency in dev, small enough that a runaway submitter cannot flood a cluster.
const DefaultCapacity = 10

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
	EnvPublicURL            = "TIDEGATE_PUBLIC_URL"
	EnvRegionCapacity       = "TIDEGATE_REGION_CAPACITY"
	EnvRegionGPUs           = "TIDEGATE_REGION_GPUS"
	EnvKubeconfig           = "TIDEGATE_KUBECONFIG"
	EnvWebhooksAllowPrivate = "TIDEGATE_WEBHOOKS_ALLOW_PRIVATE"
	EnvLogJSON              = "TIDEGATE_LOG_JSON"
	EnvSecretsKey           = "TIDEGATE_SECRETS_KEY"
	EnvDynamoDBEndpoint     = "TIDEGATE_DYNAMODB_ENDPOINT"
	EnvSQSEndpoint          = "TIDEGATE_SQS_ENDPOINT"
	EnvS3Endpoint           = "TIDEGATE_S3_ENDPOINT"
	EnvEC2Endpoint          = "TIDEGATE_EC2_ENDPOINT"
	EnvSTSEndpoint          = "TIDEGATE_STS_ENDPOINT"
	EnvEKSEndpoint          = "TIDEGATE_EKS_ENDPOINT"
	EnvPolicyMaxGPUs        = "TIDEGATE_POLICY_MAX_GPUS"
	EnvPolicyMaxCPU         = "TIDEGATE_POLICY_MAX_CPU"
	EnvPolicyMaxMemory      = "TIDEGATE_POLICY_MAX_MEMORY"
	EnvPolicyRegistries     = "TIDEGATE_POLICY_TRUSTED_REGISTRIES"
)

// FromEnv reads the Config from the process environment.
func FromEnv() (Config, error) { return Parse(os.Getenv) }

// Parse reads the Config through getenv, reporting every missing or malformed setting at once.
func Parse(getenv func(string) string) (Config, error) {
	var errs []error
	need := func(name string) string {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
		return v
	}
	c := Config{
		JobsTable:        need(EnvJobsTable),
		EventsTable:      need(EnvEventsTable),
		ControlTable:     need(EnvControlTable),
		DispatchQueueURL: need(EnvDispatchQueueURL),
		WebhookQueueURL:  need(EnvWebhookQueueURL),
		SourcesBucket:    need(EnvSourcesBucket),
		SourcesPrefix:    strings.TrimSpace(getenv(EnvSourcesPrefix)),
		HostingRegion:    strings.TrimSpace(getenv(EnvHostingRegion)),
		AppsNamespace:    strings.TrimSpace(getenv(EnvAppsNamespace)),
		PublicURL:        strings.TrimRight(strings.TrimSpace(getenv(EnvPublicURL)), "/"),
		Kubeconfig:       strings.TrimSpace(getenv(EnvKubeconfig)),
		Endpoints: Endpoints{
			DynamoDB: strings.TrimSpace(getenv(EnvDynamoDBEndpoint)),
			SQS:      strings.TrimSpace(getenv(EnvSQSEndpoint)),
			S3:       strings.TrimSpace(getenv(EnvS3Endpoint)),
			EC2:      strings.TrimSpace(getenv(EnvEC2Endpoint)),
			STS:      strings.TrimSpace(getenv(EnvSTSEndpoint)),
			EKS:      strings.TrimSpace(getenv(EnvEKSEndpoint)),
		},
	}
	var err error
	if c.Regions, err = ParseRegions(need(EnvRegions)); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvRegions, err))
	}
	if c.HostingRegion == "" && len(c.Regions) > 0 {
		c.HostingRegion = c.RegionNames()[0]
	}
	if _, ok := c.Regions[c.HostingRegion]; !ok && len(c.Regions) > 0 {
		errs = append(errs, fmt.Errorf("%s: %q is not one of %s", EnvHostingRegion, c.HostingRegion, strings.Join(c.RegionNames(), ", ")))
	}
	if c.RegionCapacity, err = ParseCapacity(getenv(EnvRegionCapacity)); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvRegionCapacity, err))
	}
	if c.AppsNamespace == "" {
		c.AppsNamespace = DefaultAppsNamespace
	}
	if c.RegionGPUs, err = ParseCapacity(getenv(EnvRegionGPUs)); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvRegionGPUs, err))
	}
	if c.WebhooksAllowPrivate, err = parseBool(getenv(EnvWebhooksAllowPrivate)); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvWebhooksAllowPrivate, err))
	}
	if c.LogJSON, err = parseBool(getenv(EnvLogJSON)); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvLogJSON, err))
	}
	if s := strings.TrimSpace(getenv(EnvSecretsKey)); s != "" {
		if c.SecretsKey, err = secretbox.KeyFromSetting(s); err != nil {
			errs = append(errs, fmt.Errorf("%s %w", EnvSecretsKey, err))
		}
	}
	c.Policy = PolicySettings{
		MaxGPUs:           strings.TrimSpace(getenv(EnvPolicyMaxGPUs)),
		MaxCPU:            strings.TrimSpace(getenv(EnvPolicyMaxCPU)),
		MaxMemory:         strings.TrimSpace(getenv(EnvPolicyMaxMemory)),
		TrustedRegistries: splitList(getenv(EnvPolicyRegistries)),
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("reading configuration: %w", errors.Join(errs...))
	}
	return c, nil
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
