package demand

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// tidegate is the LimitRange's defaultRequest Tidegate keeps by default
// (config.DefaultContainerCPURequest and DefaultContainerMemoryRequest).
var tidegate = Defaults{CPU: resource.MustParse("100m"), Memory: resource.MustParse("256Mi")}

func podSpec(t *testing.T, doc string) *corev1.PodSpec {
	t.Helper()
	var s corev1.PodSpec
	if err := yaml.UnmarshalStrict([]byte(doc), &s); err != nil {
		t.Fatalf("pod spec %s: %v", doc, err)
	}
	return &s
}

// texts is a ResourceList as canonical quantities, to compare.
func texts(l corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for name, q := range l {
		out[string(name)] = q.String()
	}
	return out
}

func TestPod(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want map[string]string
	}{{
		name: "requests as given",
		spec: `{containers: [{name: a, resources: {requests: {cpu: 500m, memory: 1Gi, ephemeral-storage: 2Gi}}}]}`,
		want: map[string]string{"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "2Gi"},
	}, {
		name: "containers summed",
		spec: `{containers: [{name: a, resources: {requests: {cpu: 500m, memory: 1Gi}}}, {name: b, resources: {requests: {cpu: "1", memory: 512Mi}}}]}`,
		want: map[string]string{"cpu": "1500m", "memory": "1536Mi"},
	}, {
		name: "only limits: the request is the limit",
		spec: `{containers: [{name: a, resources: {limits: {cpu: "2", memory: 4Gi}}}]}`,
		want: map[string]string{"cpu": "2", "memory": "4Gi"},
	}, {
		name: "a request below its limit counts the request",
		spec: `{containers: [{name: a, resources: {requests: {cpu: 250m}, limits: {cpu: "2", memory: 4Gi}}}]}`,
		want: map[string]string{"cpu": "250m", "memory": "4Gi"},
	}, {
		name: "nothing set: the LimitRange's defaults",
		spec: `{containers: [{name: a}, {name: b}]}`,
		want: map[string]string{"cpu": "200m", "memory": "512Mi"},
	}, {
		name: "memory set, CPU defaulted",
		spec: `{containers: [{name: a, resources: {requests: {memory: 2Gi}}}]}`,
		want: map[string]string{"cpu": "100m", "memory": "2Gi"},
	}, {
		name: "an explicit zero is not defaulted",
		spec: `{containers: [{name: a, resources: {requests: {cpu: "0", memory: 64Mi}}}]}`,
		want: map[string]string{"cpu": "0", "memory": "64Mi"},
	}, {
		name: "extended resources from their limits",
		spec: `{containers: [{name: a, resources: {limits: {nvidia.com/gpu: "2", vendor.example/fpga: "1", cpu: "4", memory: 16Gi}}}]}`,
		want: map[string]string{"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "2", "vendor.example/fpga": "1"},
	}, {
		name: "an init container bigger than the containers",
		spec: `{initContainers: [{name: fetch, resources: {requests: {cpu: "4", memory: 8Gi}}}, {name: small, resources: {requests: {cpu: 100m, memory: 64Mi}}}],
		        containers: [{name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}]}`,
		want: map[string]string{"cpu": "4", "memory": "8Gi"},
	}, {
		name: "init containers run one at a time: not summed",
		spec: `{initContainers: [{name: i1, resources: {requests: {cpu: "2", memory: 1Gi}}}, {name: i2, resources: {requests: {cpu: "2", memory: 1Gi}}}],
		        containers: [{name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}]}`,
		want: map[string]string{"cpu": "2", "memory": "1Gi"},
	}, {
		name: "a sidecar adds to the containers",
		spec: `{initContainers: [{name: proxy, restartPolicy: Always, resources: {requests: {cpu: 500m, memory: 128Mi}}}],
		        containers: [{name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}]}`,
		want: map[string]string{"cpu": "1500m", "memory": "1152Mi"},
	}, {
		name: "an init container after a sidecar runs beside it",
		spec: `{initContainers: [{name: proxy, restartPolicy: Always, resources: {requests: {cpu: "1", memory: 128Mi}}},
		                         {name: migrate, resources: {requests: {cpu: "2", memory: 128Mi}}}],
		        containers: [{name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}]}`,
		want: map[string]string{"cpu": "3", "memory": "1152Mi"},
	}, {
		name: "init containers take the defaults too",
		spec: `{initContainers: [{name: i}], containers: [{name: a, resources: {requests: {cpu: 50m, memory: 64Mi}}}]}`,
		want: map[string]string{"cpu": "100m", "memory": "256Mi"},
	}, {
		name: "overhead added",
		spec: `{overhead: {cpu: 250m, memory: 120Mi}, containers: [{name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}]}`,
		want: map[string]string{"cpu": "1250m", "memory": "1144Mi"},
	}, {
		name: "pod-level requests replace the containers'",
		spec: `{resources: {requests: {cpu: "3"}}, containers: [{name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}]}`,
		want: map[string]string{"cpu": "3", "memory": "1Gi"},
	}, {
		name: "a pod-level limit where no container sets one is the pod's request",
		spec: `{resources: {limits: {cpu: "4", memory: 8Gi}}, containers: [{name: a, resources: {requests: {memory: 1Gi}}}]}`,
		want: map[string]string{"cpu": "4", "memory": "1Gi"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := texts(Pod(podSpec(t, tt.spec), tidegate))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Pod(%s): -want +got\n%s", tt.spec, diff)
			}
		})
	}
}

// Pod must not change the spec it counts: its quantities are the manifest's.
func TestPodLeavesTheSpec(t *testing.T) {
	spec := podSpec(t, `{overhead: {cpu: 1e-9}, initContainers: [{name: s, restartPolicy: Always, resources: {requests: {cpu: 1e-9}}}], containers: [{name: a, resources: {requests: {cpu: 1e-9}}}]}`)
	before := spec.DeepCopy()
	Pod(spec, tidegate)
	if diff := cmp.Diff(before.String(), spec.String()); diff != "" {
		t.Errorf("Pod changed its spec: -before +after\n%s", diff)
	}
}
