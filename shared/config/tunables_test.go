package config

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tidegate/tidegate/shared/tenancy"
)

// tuned is a value for every tunable, each other than its default.
func tuned() map[string]string {
	return map[string]string{
		EnvRegionCapacity: "us-east-1=3", EnvRegionGPUs: "us-east-1=8", EnvFlavors: `{"*": [{"name": "any", "resources": {"pods": "9"}}]}`,
		EnvRateLimit: "2.5", EnvRateBurst: "7", EnvDefaultQuota: "4:2",
		EnvJobRetentionDays: "7", EnvJobTTLSeconds: "600", EnvAuditRetentionDays: "30",
		EnvOnDemandPrices:    "g5.xlarge=1.006",
		EnvAppRuntimes:       "node22=ghcr.io/acme/node@sha256:" + strings.Repeat("a", 64),
		EnvAppUnreadySeconds: "120", EnvReadyTimeoutMax: "10m", EnvLongRunningHoldsSlot: "true", EnvLongRunningPerTenant: "2", EnvDrainReadBudget: "250",
		EnvMaxQueuedPerTenant: "500", EnvPreemptionsPerMinute: "3", EnvPreemptionCooldown: "5m", EnvPreemptionGraceMax: "30s", EnvRegionLostAfter: "5m",
		EnvPolicyMaxGPUs: "1", EnvPolicyMaxCPU: "4", EnvPolicyMaxMemory: "16Gi", EnvPolicyRegistries: "ghcr.io/acme/",
		EnvPolicyAllowNodeName: "true", EnvPolicyTolerations: "nvidia.com/gpu", EnvPolicyPriorityClasses: "batch",
		EnvPolicyRuntimeClasses: "gvisor", EnvPolicyServiceAccounts: "builder", EnvPolicyAllowServiceAccountToken: "true",
		EnvPolicyStorageClasses: "gp3", EnvPolicyMaxEphemeralStorage: "20Gi", EnvPolicyMaxVolumeSize: "100Gi",
		EnvPolicyCSIDrivers: "ebs.csi.aws.com", EnvPolicyNodeSelectorKeys: "kubernetes.io/arch",
		EnvPodCIDRs: "10.1.0.0/16", EnvServiceCIDRs: "10.2.0.0/16", EnvNodeCIDRs: "10.3.0.0/16", EnvAppsResolvers: "10.0.0.2",
		EnvContainerCPU: "2", EnvContainerMemory: "2Gi", EnvContainerCPURequest: "200m", EnvContainerMemoryRequest: "512Mi",
		EnvPodsPerJob: "3",
	}
}

// TestApplyTunablesAsksForEachTunable: ApplyTunables reads every name of Tunables and nothing
// else, so the list README and `tidegate dev` go by is what it reads.
func TestApplyTunablesAsksForEachTunable(t *testing.T) {
	var asked []string
	var c Config
	if err := c.ApplyTunables(func(name string) string { asked = append(asked, name); return "" }); err != nil {
		t.Fatalf("ApplyTunables(nothing set) = %v", err)
	}
	slices.Sort(asked)
	want := slices.Sorted(slices.Values(Tunables))
	if diff := cmp.Diff(want, slices.Compact(asked)); diff != "" {
		t.Errorf("names ApplyTunables read (-Tunables +read):\n%s", diff)
	}
	if len(tuned()) != len(Tunables) {
		t.Errorf("tuned() sets %d settings, Tunables lists %d: give the new one a value", len(tuned()), len(Tunables))
	}
}

// TestApplyTunablesReadsAsParse: each tunable reaches the Config as Parse reads it, in AWS; the
// settings ApplyTunables does not read are left as they were.
func TestApplyTunablesReadsAsParse(t *testing.T) {
	m := full()
	for k, v := range tuned() {
		m[k] = v
	}
	parsed, err := Parse(env(m))
	if err != nil {
		t.Fatalf("Parse(tuned) = %v", err)
	}
	got := Config{JobsTable: "mine", Watch: time.Second}
	if err := got.ApplyTunables(env(tuned())); err != nil {
		t.Fatalf("ApplyTunables(tuned) = %v", err)
	}
	if got.JobsTable != "mine" || got.Watch != time.Second {
		t.Errorf("ApplyTunables changed JobsTable to %q, Watch to %s; want them left mine and 1s", got.JobsTable, got.Watch)
	}
	// What Parse reads besides the tunables, set aside.
	parsed.JobsTable, parsed.Watch = got.JobsTable, got.Watch
	parsed.EventsTable, parsed.ControlTable, parsed.DispatchQueueURL, parsed.WebhookQueueURL, parsed.SourcesBucket = "", "", "", "", ""
	parsed.Regions, parsed.HostingRegion, parsed.AppsNamespace, parsed.Stack = nil, "", "", ""
	parsed.CapacityTypeLabel = ""
	if diff := cmp.Diff(parsed, got, cmpopts.EquateComparable(netip.Prefix{}, netip.Addr{})); diff != "" {
		t.Errorf("ApplyTunables(tuned) against Parse (-Parse +ApplyTunables):\n%s", diff)
	}
	if got.Policy.MaxGPUs != "1" || !cmp.Equal(got.DefaultQuota, tenancy.Quota{Jobs: 4, GPUs: 2}) || got.Isolation.PodsPerJob != 3 {
		t.Errorf("ApplyTunables(tuned) = max GPUs %q, quota %+v, pods a job %d; want 1, 4:2, 3", got.Policy.MaxGPUs, got.DefaultQuota, got.Isolation.PodsPerJob)
	}
}

// TestApplyTunablesNamesTheBadOnes: every malformed tunable is reported at once, by its variable.
func TestApplyTunablesNamesTheBadOnes(t *testing.T) {
	bad := map[string]string{EnvRateLimit: "fast", EnvPodsPerJob: "0", EnvNodeCIDRs: "10.0.0.1/8", EnvJobTTLSeconds: "60", EnvMaxQueuedPerTenant: "-1",
		EnvPreemptionsPerMinute: "-2", EnvPreemptionCooldown: "forever", EnvPreemptionGraceMax: "2h"}
	var c Config
	err := c.ApplyTunables(env(bad))
	if err == nil {
		t.Fatal("ApplyTunables(bad settings) = nil")
	}
	for name := range bad {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("ApplyTunables error %q does not name %s", err, name)
		}
	}
}
