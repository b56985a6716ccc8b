package policy

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

// box is a compliant container named name asking for requests (and limits, if given).
func box(t *testing.T, name, requests, limits string) map[string]any {
	c := fromYAML(t, goodContainer)
	c["name"] = name
	res := map[string]any{"requests": fromYAML(t, requests)}
	if limits != "" {
		res["limits"] = fromYAML(t, limits)
	}
	c["resources"] = res
	return c
}

func sidecar(c map[string]any) map[string]any {
	c["restartPolicy"] = "Always"
	return c
}

func TestCheckCaps(t *testing.T) {
	gpus, cpu, mem := resource.MustParse("2"), resource.MustParse("4"), resource.MustParse("8Gi")
	c := mustChecker(t, Config{MaxGPUs: &gpus, MaxCPU: &cpu, MaxMemory: &mem})
	const pod = "spec.template.spec"
	tests := []struct {
		name       string
		init       []map[string]any
		containers []map[string]any
		podLevel   string
		want       []located
	}{
		{name: "within every cap",
			containers: []map[string]any{box(t, "a", "{cpu: 2, memory: 4Gi, nvidia.com/gpu: 2}", "{nvidia.com/gpu: 2}")}},
		{name: "GPU limit over the cap",
			containers: []map[string]any{box(t, "a", "{cpu: 1}", "{nvidia.com/gpu: 4}")},
			want:       []located{{0, pod + ".containers[0].resources"}}},
		{name: "CPU summed over containers",
			containers: []map[string]any{box(t, "a", "{cpu: 3}", ""), box(t, "b", "{cpu: 1500m}", "")},
			want:       []located{{0, pod + ".containers"}}},
		{name: "memory limit over the cap though the request is not",
			containers: []map[string]any{box(t, "a", "{memory: 1Gi}", "{memory: 16Gi}")},
			want:       []located{{0, pod + ".containers[0].resources"}}},
		{name: "init containers run one at a time, so they are not summed",
			init:       []map[string]any{box(t, "fetch", "{cpu: 3}", ""), box(t, "unpack", "{cpu: 3}", "")},
			containers: []map[string]any{box(t, "a", "{cpu: 1}", "")}},
		{name: "one init container over the cap",
			init:       []map[string]any{box(t, "fetch", "{cpu: 6}", "")},
			containers: []map[string]any{box(t, "a", "{cpu: 1}", "")},
			want:       []located{{0, pod + ".initContainers[0].resources"}}},
		{name: "a sidecar runs beside the containers",
			init:       []map[string]any{sidecar(box(t, "proxy", "{cpu: 2}", ""))},
			containers: []map[string]any{box(t, "a", "{cpu: 3}", "")},
			want:       []located{{0, pod + ".containers"}}},
		{name: "an init container runs beside the sidecars started before it",
			init:       []map[string]any{sidecar(box(t, "proxy", "{cpu: 2}", "")), box(t, "migrate", "{cpu: 3}", "")},
			containers: []map[string]any{box(t, "a", "{cpu: 1}", "")},
			want:       []located{{0, pod + ".initContainers[1].resources"}}},
		{name: "pod-level resources",
			containers: []map[string]any{box(t, "a", "{cpu: 1}", "")},
			podLevel:   "{limits: {cpu: 8}}",
			want:       []located{{0, pod + ".resources"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := fromYAML(t, goodPodSpec)
			spec["containers"] = anys(tt.containers)
			if tt.init != nil {
				spec["initContainers"] = anys(tt.init)
			}
			if tt.podLevel != "" {
				spec["resources"] = fromYAML(t, tt.podLevel)
			}
			res := c.Check(tenantRequest(workloads[1].wrap(spec)))
			if diff := cmp.Diff(tt.want, fieldsOf(res.Violations)); diff != "" {
				t.Errorf("Check(Job, %s) fields (-want +got):\n%s\nviolations: %v", tt.name, diff, res.Violations)
			}
		})
	}
}

func TestCheckCapMessage(t *testing.T) {
	cpu := resource.MustParse("4")
	c := mustChecker(t, Config{MaxCPU: &cpu})
	spec := fromYAML(t, goodPodSpec)
	spec["initContainers"] = []any{sidecar(box(t, "proxy", "{cpu: 500m}", "")), box(t, "migrate", "{cpu: 4}", "")}
	res := c.Check(tenantRequest(workloads[0].wrap(spec)))
	want := []Violation{{Document: 0, Kind: "Pod", Name: "p", Field: "spec.initContainers[1].resources",
		Message: `the pod asks for 4500m CPU (init container "migrate", with the sidecars started before it), over the cap of 4: lower resources.requests and resources.limits so that the pod's total is at most 4`}}
	if diff := cmp.Diff(want, res.Violations); diff != "" {
		t.Errorf("Check(Pod over the CPU cap) violations (-want +got):\n%s", diff)
	}
}

func TestCheckZeroGPUCap(t *testing.T) {
	zero := resource.MustParse("0")
	c := mustChecker(t, Config{MaxGPUs: &zero})
	for _, gpus := range []int{0, 1} {
		spec := fromYAML(t, goodPodSpec)
		// Kubernetes refuses a GPU request without an equal limit, so both are given.
		gpuAmount := fmt.Sprintf("{nvidia.com/gpu: %d}", gpus)
		spec["containers"] = []any{box(t, "a", gpuAmount, gpuAmount)}
		res := c.Check(tenantRequest(workloads[0].wrap(spec)))
		if got, want := res.Allowed(), gpus == 0; got != want {
			t.Errorf("Check(Pod asking for %d GPUs under a cap of 0).Allowed() = %v, want %v: %v", gpus, got, want, res.Violations)
		}
	}
}

func anys(ms []map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// TestMemoryHeadroom: how many times the hungriest pod's memory fits the cap on a pod's memory,
// which bounds how far a retry rule may raise it; 0 with no cap, or no memory asked.
func TestMemoryHeadroom(t *testing.T) {
	mem := resource.MustParse("8Gi")
	capped := mustChecker(t, Config{MaxMemory: &mem})
	for _, tt := range []struct {
		name   string
		c      *Checker
		limits string
		want   float64
	}{
		{"a 2Gi pod under an 8Gi cap", capped, "{memory: 2Gi}", 4},
		{"a 6Gi pod under an 8Gi cap", capped, "{memory: 6Gi}", 8.0 / 6},
		{"no memory asked", capped, "", 0},
		{"no cap", mustChecker(t, Config{}), "{memory: 2Gi}", 0},
	} {
		spec := fromYAML(t, goodPodSpec)
		spec["containers"] = []any{box(t, "a", tt.limits, tt.limits)}
		if got := tt.c.Check(tenantRequest(workloads[0].wrap(spec))).MemoryHeadroom; got != tt.want {
			t.Errorf("%s: MemoryHeadroom = %v, want %v", tt.name, got, tt.want)
		}
	}
}
