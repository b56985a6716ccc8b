package reconcilehandler

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

// Unset defaults give way to lower caps; a request follows its limit down.
func TestIsolationSettingsDefaultsUnderCaps(t *testing.T) {
	s, err := IsolationSettings(baseConfig(t, map[string]string{config.EnvPolicyMaxCPU: "500m", config.EnvPolicyMaxMemory: "128Mi"}))
	if err != nil {
		t.Fatalf("IsolationSettings(caps 500m, 128Mi) = %v", err)
	}
	c := s.Containers
	if c.CPU.String() != "500m" || c.Memory.String() != "128Mi" || c.CPURequest.String() != "100m" || c.MemoryRequest.String() != "128Mi" {
		t.Errorf("containers = cpu %s/%s memory %s/%s; want 500m/100m and 128Mi/128Mi", c.CPU.String(), c.CPURequest.String(), c.Memory.String(), c.MemoryRequest.String())
	}
	if s.Owner != "c" || s.PodsPerJob != config.DefaultPodsPerJob {
		t.Errorf("owner %q, pods a job %d; want c, %d", s.Owner, s.PodsPerJob, config.DefaultPodsPerJob)
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
		_, err := IsolationSettings(baseConfig(t, tc.env))
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("IsolationSettings(%v) = %v; want it to say %q", tc.env, err, w)
			}
		}
	}
}

func TestClusters(t *testing.T) {
	aws := Clusters(baseConfig(t, nil))
	dev := Clusters(baseConfig(t, map[string]string{config.EnvKubeconfig: "/k"}))
	if len(aws) != 2 || len(aws[0].Regions) != 1 || len(dev) != 1 || len(dev[0].Regions) != 2 {
		t.Errorf("Clusters: AWS %+v, dev %+v; want two clusters of one region, and one of two", aws, dev)
	}
}
