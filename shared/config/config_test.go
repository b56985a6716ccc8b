package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/hostplan"
	"github.com/tidegate/tidegate/shared/ratelimit"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func full() map[string]string {
	return map[string]string{
		EnvJobsTable: "j", EnvEventsTable: "e", EnvControlTable: "c",
		EnvDispatchQueueURL: "http://q/d", EnvWebhookQueueURL: "http://q/w", EnvSourcesBucket: "b",
		EnvRegions: "us-west-2=west, us-east-1=east", EnvRegionCapacity: "us-east-1=1",
	}
}

func TestParse(t *testing.T) {
	c, err := Parse(env(full()))
	if err != nil {
		t.Fatalf("Parse(full) = %v", err)
	}
	if diff := cmp.Diff([]string{"us-east-1", "us-west-2"}, c.RegionNames()); diff != "" {
		t.Errorf("RegionNames (-want +got):\n%s", diff)
	}
	if c.HostingRegion != "us-east-1" || c.Capacity("us-east-1") != 1 || c.Capacity("us-west-2") != DefaultCapacity {
		t.Errorf("hosting %q, capacities %d/%d; want us-east-1, 1, %d", c.HostingRegion, c.Capacity("us-east-1"), c.Capacity("us-west-2"), DefaultCapacity)
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	m := full()
	delete(m, EnvJobsTable)
	delete(m, EnvSourcesBucket)
	m[EnvRegionCapacity] = "us-east-1=lots"
	m[EnvHostingRegion] = "eu-west-1"
	m[EnvWebhooksAllowPrivate] = "maybe"
	_, err := Parse(env(m))
	if err == nil {
		t.Fatal("Parse accepted a broken environment")
	}
	for _, want := range []string{EnvJobsTable, EnvSourcesBucket, EnvRegionCapacity, EnvHostingRegion, EnvWebhooksAllowPrivate} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse error %q does not name %s", err, want)
		}
	}
}

// The policy's settings pass through as written: the API reads them into a policy.Config (and
// says what is wrong with them), so a function that admits nothing never fails on them.
func TestParsePolicySettings(t *testing.T) {
	m := full()
	m[EnvPolicyMaxGPUs] = " 2 "
	m[EnvPolicyMaxCPU] = "a lot"
	m[EnvPolicyRegistries] = "ghcr.io/acme, ,docker.io/library/nginx,"
	m[EnvPolicyAllowNodeName] = "perhaps"
	m[EnvPolicyTolerations] = "nvidia.com/gpu, example.com/spot"
	m[EnvPolicyPriorityClasses] = "batch-low"
	m[EnvPolicyRuntimeClasses] = "gvisor,"
	m[EnvPolicyServiceAccounts] = "builder"
	m[EnvPolicyAllowServiceAccountToken] = " true"
	m[EnvPolicyStorageClasses] = "gp3,io2"
	m[EnvPolicyMaxEphemeralStorage] = "40Gi"
	m[EnvPolicyMaxVolumeSize] = "1Ti "
	m[EnvPolicyCSIDrivers] = "ebs.csi.aws.com, "
	m[EnvPolicyNodeSelectorKeys] = "karpenter.sh/capacity-type, kubernetes.io/arch"
	c, err := Parse(env(m))
	if err != nil {
		t.Fatalf("Parse with policy settings = %v", err)
	}
	want := PolicySettings{MaxGPUs: "2", MaxCPU: "a lot", TrustedRegistries: []string{"ghcr.io/acme", "docker.io/library/nginx"},
		AllowNodeName: "perhaps", Tolerations: []string{"nvidia.com/gpu", "example.com/spot"}, PriorityClasses: []string{"batch-low"},
		RuntimeClasses: []string{"gvisor"}, ServiceAccounts: []string{"builder"}, AllowServiceAccountToken: "true",
		StorageClasses: []string{"gp3", "io2"}, MaxEphemeralStorage: "40Gi", MaxVolumeSize: "1Ti",
		CSIDrivers: []string{"ebs.csi.aws.com"}, NodeSelectorKeys: []string{"karpenter.sh/capacity-type", "kubernetes.io/arch"}}
	if diff := cmp.Diff(want, c.Policy); diff != "" {
		t.Errorf("Parse: Policy (-want +got):\n%s", diff)
	}
}

func TestParseStack(t *testing.T) {
	for _, tt := range []struct{ stack, want string }{{"", "c"}, {"tidegate-prod", "tidegate-prod"}} {
		e := full()
		e[EnvStack] = tt.stack
		if c, err := Parse(env(e)); err != nil || c.Stack != tt.want {
			t.Errorf("Parse with %s=%q: Stack %q, %v; want %q (the control table's name when unset)", EnvStack, tt.stack, c.Stack, err, tt.want)
		}
	}
}

func TestParseRegions(t *testing.T) {
	for _, bad := range []string{"", "us-east-1", "us-east-1=", "=c", "a=b,a=c"} {
		if _, err := ParseRegions(bad); err == nil {
			t.Errorf("ParseRegions(%q) accepted it", bad)
		}
	}
	got, err := ParseRegions("a=x, b=y,")
	if err != nil || !cmp.Equal(got, map[string]string{"a": "x", "b": "y"}) {
		t.Errorf("ParseRegions(a=x, b=y,) = %v, %v", got, err)
	}
}

func TestParseCapacity(t *testing.T) {
	for _, bad := range []string{"a", "a=-1", "a=1.5", "=3"} {
		if _, err := ParseCapacity(bad); err == nil {
			t.Errorf("ParseCapacity(%q) accepted it", bad)
		}
	}
	got, err := ParseCapacity("us-east-1=1,us-west-2=4")
	if err != nil || !cmp.Equal(got, map[string]int{"us-east-1": 1, "us-west-2": 4}) {
		t.Errorf("ParseCapacity = %v, %v", got, err)
	}
}

// A tenant's default request budget: each half set or left to its default; anything but a number
// ≥ 0 (and a whole one for the burst) is refused, naming the setting.
func TestParseRate(t *testing.T) {
	tests := []struct {
		name        string
		rate, burst string
		want        ratelimit.Limit
		wantErr     []string
	}{
		{name: "unset", want: ratelimit.Limit{Rate: DefaultRateLimit, Burst: DefaultRateBurst}},
		{name: "both set", rate: "2.5", burst: " 10 ", want: ratelimit.Limit{Rate: 2.5, Burst: 10}},
		{name: "only the burst", burst: "7", want: ratelimit.Limit{Rate: DefaultRateLimit, Burst: 7}},
		{name: "zeros are the defaults", rate: "0", burst: "0", want: ratelimit.Limit{Rate: DefaultRateLimit, Burst: DefaultRateBurst}},
		{name: "not numbers", rate: "fast", burst: "1.5", wantErr: []string{EnvRateLimit, EnvRateBurst}},
		{name: "negative or infinite", rate: "+Inf", burst: "-1", wantErr: []string{EnvRateLimit, EnvRateBurst}},
		{name: "not a number", rate: "NaN", wantErr: []string{EnvRateLimit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := full()
			m[EnvRateLimit], m[EnvRateBurst] = tt.rate, tt.burst
			c, err := Parse(env(m))
			if len(tt.wantErr) > 0 {
				for _, w := range tt.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("Parse(%s=%q, %s=%q) = %v, want an error naming %s", EnvRateLimit, tt.rate, EnvRateBurst, tt.burst, err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%s=%q, %s=%q) = %v", EnvRateLimit, tt.rate, EnvRateBurst, tt.burst, err)
			}
			if got := c.Rate(); got != tt.want {
				t.Errorf("Parse(%s=%q, %s=%q).Rate() = %+v, want %+v", EnvRateLimit, tt.rate, EnvRateBurst, tt.burst, got, tt.want)
			}
		})
	}
}

func TestParseDefaultQuota(t *testing.T) {
	for in, want := range map[string]tenancy.Quota{"": {}, "4": {Jobs: 4}, " 4:16 ": {Jobs: 4, GPUs: 16}} {
		m := full()
		m[EnvDefaultQuota] = in
		c, err := Parse(env(m))
		if err != nil || !cmp.Equal(c.DefaultQuota, want) {
			t.Errorf("Parse(%s=%q).DefaultQuota = %+v, %v; want %+v", EnvDefaultQuota, in, c.DefaultQuota, err, want)
		}
	}
	for _, in := range []string{"four", "4:x", "-1", "us-east-1=4"} {
		m := full()
		m[EnvDefaultQuota] = in
		if _, err := Parse(env(m)); err == nil || !strings.Contains(err.Error(), EnvDefaultQuota) || !strings.Contains(err.Error(), "JOBS[:GPUS]") {
			t.Errorf("Parse(%s=%q) = %v, want an error naming the setting and JOBS[:GPUS]", EnvDefaultQuota, in, err)
		}
	}
}

func TestParseCapacityTypeLabel(t *testing.T) {
	for in, want := range map[string]string{"": "karpenter.sh/capacity-type", " eks.amazonaws.com/capacityType ": "eks.amazonaws.com/capacityType"} {
		m := full()
		m[EnvCapacityTypeLabel] = in
		c, err := Parse(env(m))
		if err != nil || c.CapacityTypeLabel != want {
			t.Errorf("Parse(%s=%q).CapacityTypeLabel = %q, %v; want %q", EnvCapacityTypeLabel, in, c.CapacityTypeLabel, err, want)
		}
	}
	m := full()
	m[EnvCapacityTypeLabel] = "node.kubernetes.io/instance-type"
	if _, err := Parse(env(m)); err == nil || !strings.Contains(err.Error(), EnvCapacityTypeLabel) || !strings.Contains(err.Error(), "karpenter.sh/capacity-type") {
		t.Errorf("Parse(%s=an unknown label) = %v, want an error naming the setting and the labels it takes", EnvCapacityTypeLabel, err)
	}
}

func TestParseOnDemandPrices(t *testing.T) {
	m := full()
	m[EnvOnDemandPrices] = "g5.xlarge=1.006, m5.large=0.096"
	c, err := Parse(env(m))
	if err != nil || len(c.OnDemandPrices) != 2 || c.OnDemandPrices["g5.xlarge"] != 1.006 {
		t.Errorf("Parse(%s).OnDemandPrices = %v, %v", EnvOnDemandPrices, c.OnDemandPrices, err)
	}
	m[EnvOnDemandPrices] = "g5.xlarge=cheap"
	if _, err := Parse(env(m)); err == nil || !strings.Contains(err.Error(), EnvOnDemandPrices) || !strings.Contains(err.Error(), "TYPE=PRICE") {
		t.Errorf("Parse(%s=g5.xlarge=cheap) = %v, want an error naming the setting and TYPE=PRICE", EnvOnDemandPrices, err)
	}
}

// The sealing key is never configuration: the functions name a KMS key, and a secrets key left in
// an environment is refused with what replaces it.
func TestParseKMSKey(t *testing.T) {
	m := full()
	m[EnvKMSKey] = " alias/tidegate-secrets "
	m[EnvKMSEndpoint] = "http://127.0.0.1:4599"
	c, err := Parse(env(m))
	if err != nil || c.KMSKey != "alias/tidegate-secrets" || c.Endpoints.KMS != "http://127.0.0.1:4599" {
		t.Fatalf("Parse = %q, %q, %v; want the KMS key and endpoint", c.KMSKey, c.Endpoints.KMS, err)
	}
	m[EnvSecretsKey] = "bm90IGEga2V5IGJ1dCBsb25nIGVub3VnaCB0byBsb29rIGxpa2Ugb25l"
	_, err = Parse(env(m))
	if err == nil {
		t.Fatalf("Parse accepted %s", EnvSecretsKey)
	}
	for _, want := range []string{EnvSecretsKey, EnvKMSKey, "tidegate admin secrets reseal"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse error %q does not say %q", err, want)
		}
	}
}

func TestParseCleanup(t *testing.T) {
	for _, tt := range []struct {
		days, ttl     string
		wantRetention time.Duration
		wantTTL       time.Duration
	}{
		{"", "", DefaultJobRetentionDays * 24 * time.Hour, DefaultJobTTL},
		{"0", "0", 0, 0},
		{"7", "300", 7 * 24 * time.Hour, 5 * time.Minute},
		{"3650", "86400", 3650 * 24 * time.Hour, 24 * time.Hour},
	} {
		m := full()
		m[EnvJobRetentionDays], m[EnvJobTTLSeconds] = tt.days, tt.ttl
		c, err := Parse(env(m))
		if err != nil || c.JobRetention != tt.wantRetention || c.JobTTL != tt.wantTTL {
			t.Errorf("Parse(%s=%q, %s=%q) = retention %v, TTL %v, %v; want %v, %v", EnvJobRetentionDays, tt.days, EnvJobTTLSeconds, tt.ttl,
				c.JobRetention, c.JobTTL, err, tt.wantRetention, tt.wantTTL)
		}
	}
	for name, bad := range map[string][]string{
		EnvJobRetentionDays: {"-1", "3651", "7d", "1.5"},
		EnvJobTTLSeconds:    {"-1", "60", "299", "1h", "99999999999"},
	} {
		for _, v := range bad {
			m := full()
			m[name] = v
			if _, err := Parse(env(m)); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("Parse(%s=%q) = %v, want an error naming %s", name, v, err, name)
			}
		}
	}
}

func TestParseAppUnreadyLimit(t *testing.T) {
	m := full()
	c, err := Parse(env(m))
	if err != nil || c.AppUnreadyLimit != hostplan.DefaultUnreadyLimit {
		t.Errorf("Parse without %s: AppUnreadyLimit %v, %v; want the default %v", EnvAppUnreadySeconds, c.AppUnreadyLimit, err, hostplan.DefaultUnreadyLimit)
	}
	for in, want := range map[string]time.Duration{"30": 30 * time.Second, "90": 90 * time.Second, "3600": time.Hour} {
		m[EnvAppUnreadySeconds] = in
		if c, err := Parse(env(m)); err != nil || c.AppUnreadyLimit != want {
			t.Errorf("Parse(%s=%s).AppUnreadyLimit = %v, %v; want %v", EnvAppUnreadySeconds, in, c.AppUnreadyLimit, err, want)
		}
	}
	for _, in := range []string{"29", "0", "-60", "3601", "1m", "60s", "9999999999999999999"} {
		m[EnvAppUnreadySeconds] = in
		if _, err := Parse(env(m)); err == nil || !strings.Contains(err.Error(), EnvAppUnreadySeconds) || !strings.Contains(err.Error(), "from 30 to 3600") {
			t.Errorf("Parse(%s=%s) = %v, want an error naming the setting and its bounds", EnvAppUnreadySeconds, in, err)
		}
	}
}

func TestParseWatch(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want time.Duration
	}{
		{"", 59 * time.Second},
		{"0", 0},
		{"30", 30 * time.Second},
		{"58", 58 * time.Second},
	} {
		m := full()
		m[EnvWatchSeconds] = tt.v
		c, err := Parse(env(m))
		if err != nil || c.Watch != tt.want {
			t.Errorf("Parse(%s=%q) = watch %v, %v; want %v", EnvWatchSeconds, tt.v, c.Watch, err, tt.want)
		}
	}
	for _, v := range []string{"-1", "60", "3600", "57s", "1.5"} {
		m := full()
		m[EnvWatchSeconds] = v
		if _, err := Parse(env(m)); err == nil || !strings.Contains(err.Error(), EnvWatchSeconds) {
			t.Errorf("Parse(%s=%q) = %v, want an error naming %s", EnvWatchSeconds, v, err, EnvWatchSeconds)
		}
	}
	if got := WatchFor(6 * time.Second); got != 5900*time.Millisecond {
		t.Errorf("WatchFor(6s) = %v, want 5.9s", got)
	}
}
