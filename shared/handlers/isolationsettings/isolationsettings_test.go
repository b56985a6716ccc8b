package isolationsettings

import (
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/config"
)

func baseConfig(t *testing.T, extra map[string]string) config.Config {
	t.Helper()
	m := map[string]string{
		config.EnvJobsTable: "j", config.EnvEventsTable: "e", config.EnvControlTable: "c",
		config.EnvDispatchQueueURL: "http://q/d", config.EnvWebhookQueueURL: "http://q/w", config.EnvSourcesBucket: "b",
		config.EnvRegions: "us-east-1=east,us-west-2=west",
	}
	for k, v := range extra {
		m[k] = v
	}
	cfg, err := config.Parse(func(k string) string { return m[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Unset limits are the policy's caps, where set, so that no request the policy admits is above
// the limit a container is given; a request follows its limit down.
func TestIsolationSettingsDefaults(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want [4]string // CPU limit, request; memory limit, request
	}{
		{nil, [4]string{"1", "100m", "1Gi", "256Mi"}},
		{map[string]string{config.EnvPolicyMaxCPU: "500m", config.EnvPolicyMaxMemory: "128Mi"}, [4]string{"500m", "100m", "128Mi", "128Mi"}},
		{map[string]string{config.EnvPolicyMaxCPU: "64", config.EnvPolicyMaxMemory: "256Gi"}, [4]string{"64", "100m", "256Gi", "256Mi"}},
		{map[string]string{config.EnvPolicyMaxCPU: "64", config.EnvContainerCPU: "2", config.EnvContainerMemoryRequest: "1Gi"}, [4]string{"2", "100m", "1Gi", "1Gi"}},
	} {
		s, err := Read(baseConfig(t, tc.env))
		if err != nil {
			t.Fatalf("Read(%v) = %v", tc.env, err)
		}
		c := s.Containers
		got := [4]string{c.CPU.String(), c.CPURequest.String(), c.Memory.String(), c.MemoryRequest.String()}
		if got != tc.want {
			t.Errorf("Read(%v) containers = %v; want %v", tc.env, got, tc.want)
		}
		if s.Owner != "c" || s.PodsPerJob != config.DefaultPodsPerJob {
			t.Errorf("owner %q, pods a job %d; want c, %d", s.Owner, s.PodsPerJob, config.DefaultPodsPerJob)
		}
	}
}

func TestIsolationSettingsProblems(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{config.EnvContainerCPU: "lots", config.EnvPolicyMaxMemory: "-1Gi"}, []string{config.EnvContainerCPU, config.EnvPolicyMaxMemory}},
		{map[string]string{config.EnvContainerMemory: "2Gi", config.EnvPolicyMaxMemory: "1Gi"}, []string{"TIDEGATE_CONTAINER_DEFAULT_*", "default memory limit 2Gi is above the policy's cap on a pod, 1Gi"}},
		{map[string]string{config.EnvContainerCPURequest: "2"}, []string{"default CPU request 2 is above its default limit 1"}},
	} {
		_, err := Read(baseConfig(t, tc.env))
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Read(%v) = %v; want it to say %q", tc.env, err, w)
			}
		}
	}
}
