package devstack

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func configFor(t *testing.T, opt Options) (config.Config, error) {
	t.Helper()
	pl, err := place(Options{}, sandbox.State{Kubeconfig: "/sandbox/admin.kubeconfig"})
	if err != nil {
		t.Fatal(err)
	}
	return devConfig(opt, namesFor(""), sandbox.State{}, pl, "tidegate-apps", "", "")
}

// TestDevConfigLimits: `tidegate dev --rate --burst --default-quota` reach the functions' config,
// and a negative budget or a malformed quota is refused naming the flag.
func TestDevConfigLimits(t *testing.T) {
	cfg, err := configFor(t, Options{RateLimit: 2.5, RateBurst: 7, DefaultQuota: "3:1"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimit != 2.5 || cfg.RateBurst != 7 || !cmp.Equal(cfg.DefaultQuota, tenancy.Quota{Jobs: 3, GPUs: 1}) {
		t.Errorf("config = rate %v, burst %d, default quota %+v; want 2.5, 7, 3 jobs and 1 GPU", cfg.RateLimit, cfg.RateBurst, cfg.DefaultQuota)
	}
	for opt, want := range map[string]Options{
		"--rate":          {RateLimit: -1},
		"--burst":         {RateBurst: -2},
		"--default-quota": {DefaultQuota: "many"},
	} {
		if _, err := configFor(t, want); err == nil || !strings.Contains(err.Error(), opt) {
			t.Errorf("devConfig(%+v) = %v; want a refusal naming %s", want, err, opt)
		}
	}
}

// TestDevConfigTakesTheTunables: the deployment's tunables in Options.Env reach the functions'
// config as config reads them in AWS, dev's own settings staying dev's.
func TestDevConfigTakesTheTunables(t *testing.T) {
	env := map[string]string{
		config.EnvPolicyMaxGPUs: "1", config.EnvPolicyServiceAccounts: "builder, ci",
		config.EnvPolicyRegistries: "ghcr.io/acme/", config.EnvRegionGPUs: "us-west-2=4",
		config.EnvRateLimit: "3", config.EnvDefaultQuota: "2", config.EnvPodsPerJob: "4",
		config.EnvLongRunningPerTenant: "1", config.EnvJobRetentionDays: "0",
		// Not tunables: dev names its own tables and labels its own nodes.
		config.EnvJobsTable: "prod-jobs", config.EnvCapacityTypeLabel: "eks.amazonaws.com/capacityType",
	}
	cfg, err := configFor(t, Options{Env: envOf(env), Beat: 5 * time.Second})
	if err != nil {
		t.Fatalf("devConfig(tunables) = %v", err)
	}
	type seen struct {
		MaxGPUs, JobsTable, Label string
		Accounts, Registries      []string
		GPUs                      map[string]int
		Rate                      float64
		Quota                     tenancy.Quota
		PodsPerJob, LongRunning   int
		Retention, JobTTL, Watch  time.Duration
	}
	want := seen{
		MaxGPUs: "1", JobsTable: "tidegate-jobs", Label: sandbox.CapacityTypeLabel,
		Accounts: []string{"builder", "ci"}, Registries: []string{"ghcr.io/acme/"},
		GPUs: map[string]int{"us-west-2": 4}, Rate: 3, Quota: tenancy.Quota{Jobs: 2},
		PodsPerJob: 4, LongRunning: 1, Retention: 0, JobTTL: config.DefaultJobTTL, Watch: config.WatchFor(5 * time.Second),
	}
	got := seen{
		cfg.Policy.MaxGPUs, cfg.JobsTable, cfg.CapacityTypeLabel, cfg.Policy.ServiceAccounts, cfg.Policy.TrustedRegistries,
		cfg.RegionGPUs, cfg.RateLimit, cfg.DefaultQuota, cfg.Isolation.PodsPerJob, cfg.LongRunning.PerTenant,
		cfg.JobRetention, cfg.JobTTL, cfg.Watch,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("devConfig(tunables) (-want +got):\n%s", diff)
	}
}

// TestDevSettingsPrecedence: a dev setting given is used in place of the deployment's variable,
// and `tidegate dev` says so; one not given leaves the variable's value.
func TestDevSettingsPrecedence(t *testing.T) {
	env := envOf(map[string]string{
		config.EnvRegionCapacity: "us-east-1=5", config.EnvRateLimit: "9", config.EnvRateBurst: "30",
		config.EnvDefaultQuota: "4:1", config.EnvJobTTLSeconds: "600",
	})
	tests := []struct {
		name      string
		opt       Options
		capacity  map[string]int
		rate      float64
		burst     int
		quota     tenancy.Quota
		ttl       time.Duration
		overrides []string
	}{
		{
			name: "none given", opt: Options{Env: env},
			capacity: map[string]int{"us-east-1": 5}, rate: 9, burst: 30, quota: tenancy.Quota{Jobs: 4, GPUs: 1}, ttl: 10 * time.Minute,
		},
		{
			name:     "every one given",
			opt:      Options{Env: env, RegionCapacity: "us-east-1=1", RateLimit: 2, RateBurst: 3, DefaultQuota: "1", JobTTL: 6 * time.Second},
			capacity: map[string]int{"us-east-1": 1}, rate: 2, burst: 3, quota: tenancy.Quota{Jobs: 1}, ttl: 6 * time.Second,
			overrides: []string{
				"--region-capacity us-east-1=1 is used in place of TIDEGATE_REGION_CAPACITY=us-east-1=5",
				"--rate 2 is used in place of TIDEGATE_RATE_LIMIT=9",
				"--burst 3 is used in place of TIDEGATE_RATE_BURST=30",
				"--default-quota 1 is used in place of TIDEGATE_DEFAULT_QUOTA=4:1",
				"--job-ttl 6s is used in place of TIDEGATE_JOB_TTL_SECONDS=600",
			},
		},
		{
			name: "given without the variable", opt: Options{RateLimit: 2},
			capacity: map[string]int{}, rate: 2, ttl: config.DefaultJobTTL,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := configFor(t, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(cfg.RegionCapacity, tt.capacity) || cfg.RateLimit != tt.rate || cfg.RateBurst != tt.burst || !cmp.Equal(cfg.DefaultQuota, tt.quota) || cfg.JobTTL != tt.ttl {
				t.Errorf("devConfig = capacity %v, rate %v, burst %d, quota %+v, TTL %s; want %v, %v, %d, %+v, %s",
					cfg.RegionCapacity, cfg.RateLimit, cfg.RateBurst, cfg.DefaultQuota, cfg.JobTTL, tt.capacity, tt.rate, tt.burst, tt.quota, tt.ttl)
			}
			if diff := cmp.Diff(tt.overrides, overrides(tt.opt)); diff != "" {
				t.Errorf("overrides (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDevRefusesBadTunables: a malformed tunable stops `tidegate dev` before it starts anything,
// with the message the function that reads it would refuse to start with, naming the variable;
// so does a cap for a region dev does not have.
func TestDevRefusesBadTunables(t *testing.T) {
	base := Options{Addr: "127.0.0.1:0", Beat: time.Second}
	for _, tt := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{config.EnvPolicyMaxGPUs: "two"}, []string{config.EnvPolicyMaxGPUs, `"two" is not a Kubernetes quantity`}},
		{map[string]string{config.EnvRateLimit: "fast"}, []string{config.EnvRateLimit, `"fast" is not a number`}},
		{map[string]string{config.EnvPodCIDRs: "0.0.0.0/0"}, []string{config.EnvPodCIDRs, "every address"}},
		{map[string]string{config.EnvPolicyAllowServiceAccountToken: "sometimes"}, []string{config.EnvPolicyAllowServiceAccountToken, "true or false"}},
		{map[string]string{config.EnvContainerMemory: "4Gi", config.EnvPolicyMaxMemory: "2Gi"}, []string{"TIDEGATE_CONTAINER_DEFAULT_*", "above the policy's cap"}},
		{map[string]string{config.EnvRegionGPUs: "eu-west-1=8"}, []string{config.EnvRegionGPUs, `"eu-west-1"`, "us-east-1 and us-west-2"}},
		{map[string]string{config.EnvRegionCapacity: "eu-west-1=8"}, []string{config.EnvRegionCapacity, `"eu-west-1"`}},
	} {
		o := base
		o.Env = envOf(tt.env)
		err := o.Validate()
		if err == nil {
			t.Errorf("Validate(%v) = nil, want a refusal", tt.env)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%v) = %q; want it to say %s", tt.env, err, w)
			}
		}
	}
	// Every problem at once, config's and the API's.
	o := base
	o.Env = envOf(map[string]string{config.EnvRateLimit: "fast", config.EnvPolicyMaxGPUs: "two"})
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), config.EnvRateLimit) || !strings.Contains(err.Error(), config.EnvPolicyMaxGPUs) {
		t.Errorf("Validate(a bad rate and a bad GPU cap) = %v; want both named", err)
	}
	// A variable a given flag sets aside is not held against the stack.
	o = base
	o.Env, o.RegionCapacity = envOf(map[string]string{config.EnvRegionCapacity: "eu-west-1=8"}), "us-east-1=2"
	if err := o.Validate(); err != nil {
		t.Errorf("Validate(--region-capacity over TIDEGATE_REGION_CAPACITY=eu-west-1=8) = %v, want nil", err)
	}
}

// TestDevJobTTL: --job-ttl may go below TIDEGATE_JOB_TTL_SECONDS' five minutes, down to five of
// the dev stack's own beats, and reaches the functions' config; 0 is the default hour.
func TestDevJobTTL(t *testing.T) {
	base := Options{Addr: "127.0.0.1:0", Beat: time.Second}
	for _, tt := range []struct {
		ttl, beat time.Duration
		ok        bool
	}{
		{0, time.Second, true},
		{5 * time.Second, time.Second, true},
		{4 * time.Second, time.Second, false},
		{10 * time.Second, 5 * time.Second, false},
		{25 * time.Second, 5 * time.Second, true},
		{5500 * time.Millisecond, time.Second, false},
	} {
		o := base
		o.JobTTL, o.Beat = tt.ttl, tt.beat
		if err := o.Validate(); (err == nil) != tt.ok || err != nil && !strings.Contains(err.Error(), "--job-ttl") {
			t.Errorf("Validate(--job-ttl %s --beat %s) = %v, want ok %v (a refusal naming --job-ttl)", tt.ttl, tt.beat, err, tt.ok)
		}
	}
	for ttl, want := range map[time.Duration]time.Duration{0: config.DefaultJobTTL, 6 * time.Second: 6 * time.Second} {
		cfg, err := configFor(t, Options{JobTTL: ttl})
		if err != nil || cfg.JobTTL != want {
			t.Errorf("devConfig(--job-ttl %s) = JobTTL %s, %v; want %s", ttl, cfg.JobTTL, err, want)
		}
	}
}
