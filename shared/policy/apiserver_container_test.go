package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// resources sets the main container's resources (requests and limits, each YAML or "" for none).
func resources(t testing.TB, requests, limits string) func(m, spec map[string]any) {
	return func(_, spec map[string]any) {
		res := map[string]any{}
		if requests != "" {
			res["requests"] = fromYAML(t, requests)
		}
		if limits != "" {
			res["limits"] = fromYAML(t, limits)
		}
		at(spec, "containers", 0)["resources"] = res
	}
}

// inPosition adds a good container at position whose edit makes it poisonous.
func inPosition(t testing.TB, position string, mutate func(c map[string]any)) func(m, spec map[string]any) {
	return func(_, spec map[string]any) {
		c := container(t, "extra")
		mutate(c)
		list, _ := spec[position].([]any)
		spec[position] = append(list, c)
	}
}

func TestCheckPoisonContainers(t *testing.T) {
	c := mustChecker(t, Config{Kinds: checkableKinds()})
	noImage := func(c map[string]any) { delete(c, "image") }
	gpuRequestOnly := func(c map[string]any) {
		c["resources"] = map[string]any{"requests": map[string]any{"nvidia.com/gpu": 1.0}}
	}
	tests := []struct {
		name string
		w    workload
		edit func(m, spec map[string]any)
		want []string // the fields of the violations, below the workload's pod spec
	}{
		{"Pod container without an image", pod, func(_, spec map[string]any) { delete(at(spec, "containers", 0), "image") }, []string{"containers[0].image"}},
		{"Job container with an empty image", job, edit([]any{"containers", 0}, "image", ""), []string{"containers[0].image"}},
		{"CronJob container without an image", cronJob, func(_, spec map[string]any) { delete(at(spec, "containers", 0), "image") }, []string{"containers[0].image"}},
		{"Deployment container with an empty image", deployment, edit([]any{"containers", 0}, "image", ""), []string{"containers[0].image"}},
		{"StatefulSet container with white space around its image", statefulSet, edit([]any{"containers", 0}, "image", " ghcr.io/acme/train:1.0"), []string{"containers[0].image"}},
		{"Job's second container without an image", job, inPosition(t, "containers", noImage), []string{"containers[1].image"}},
		{"Job init container without an image", job, inPosition(t, "initContainers", noImage), []string{"initContainers[0].image"}},
		{"CronJob init container with an empty image", cronJob, inPosition(t, "initContainers", func(c map[string]any) { c["image"] = "" }), []string{"initContainers[0].image"}},
		{"Pod ephemeral container without an image", pod, inPosition(t, "ephemeralContainers", noImage), []string{"ephemeralContainers[0].image"}},

		{"Pod GPU request without a limit", pod, resources(t, "{cpu: 1, nvidia.com/gpu: 1}", "{cpu: 2}"), []string{"containers[0].resources.limits[nvidia.com/gpu]"}},
		{"Job GPU request without any limits", job, resources(t, "{nvidia.com/gpu: 2}", ""), []string{"containers[0].resources.limits[nvidia.com/gpu]"}},
		{"CronJob extended resource request without a limit", cronJob, resources(t, "{example.com/foo: 1}", ""), []string{"containers[0].resources.limits[example.com/foo]"}},
		{"Deployment hugepages request without a limit", deployment, resources(t, "{memory: 1Gi, hugepages-2Mi: 64Mi}", "{memory: 1Gi}"), []string{"containers[0].resources.limits[hugepages-2Mi]"}},
		{"Job GPU request below its limit", job, resources(t, "{nvidia.com/gpu: 1}", "{nvidia.com/gpu: 2}"), []string{"containers[0].resources.requests[nvidia.com/gpu]"}},
		{"StatefulSet GPU request above its limit", statefulSet, resources(t, "{nvidia.com/gpu: 4}", "{nvidia.com/gpu: 2}"), []string{"containers[0].resources.requests[nvidia.com/gpu]"}},
		{"Job init container GPU request without a limit", job, inPosition(t, "initContainers", gpuRequestOnly), []string{"initContainers[0].resources.limits[nvidia.com/gpu]"}},
		{"Job two extended resources, both refused, in name order", job, resources(t, "{nvidia.com/gpu: 1, example.com/foo: 1}", "{nvidia.com/gpu: 2}"),
			[]string{"containers[0].resources.limits[example.com/foo]", "containers[0].resources.requests[nvidia.com/gpu]"}},
		{"Job container without an image and with a GPU request alone", job, func(m, spec map[string]any) {
			resources(t, "{nvidia.com/gpu: 1}", "")(m, spec)
			delete(at(spec, "containers", 0), "image")
		}, []string{"containers[0].image", "containers[0].resources.limits[nvidia.com/gpu]"}},

		{"GPU limit alone (the request defaults to it)", job, resources(t, "", "{nvidia.com/gpu: 1}"), nil},
		{"GPU request equal to its limit, written differently", job, resources(t, "{nvidia.com/gpu: 1}", "{nvidia.com/gpu: \"1\"}"), nil},
		{"hugepages request equal to its limit", deployment, resources(t, "{memory: 1Gi, hugepages-2Mi: 64Mi}", "{memory: 1Gi, hugepages-2Mi: 64Mi}"), nil},
		{"cpu, memory and ephemeral storage requests without limits", cronJob, resources(t, "{cpu: 2, memory: 4Gi, ephemeral-storage: 1Gi}", ""), nil},
		{"cpu request below its limit", pod, resources(t, "{cpu: 1}", "{cpu: 2}"), nil},
		{"init container with an image and a GPU limit", job, inPosition(t, "initContainers", func(c map[string]any) {
			c["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": 1.0}}
		}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Check(tenantRequest(withPod(t, tt.w, tt.edit)))
			var want []located
			for _, f := range tt.want {
				want = append(want, located{0, tt.w.specPath + "." + f})
			}
			if diff := cmp.Diff(want, fieldsOf(res.Violations)); diff != "" {
				t.Errorf("Check(%s) fields (-want +got):\n%s\nviolations: %v", tt.name, diff, res.Violations)
			}
		})
	}
}

// TestPoisonMessages pins what a tenant reads: what Kubernetes would say, and what to change.
func TestPoisonMessages(t *testing.T) {
	c := mustChecker(t, Config{})
	m := withPod(t, job, func(m, spec map[string]any) {
		resources(t, "{nvidia.com/gpu: 1, example.com/foo: 2}", "{example.com/foo: 3}")(m, spec)
		at(spec, "containers", 0)["image"] = ""
	})
	want := []Violation{
		{Kind: "Job", Name: "j", Field: "spec.template.spec.containers[0].image", Message: msgImageRequired},
		{Kind: "Job", Name: "j", Field: "spec.template.spec.containers[0].resources.requests[example.com/foo]",
			Message: `example.com/foo is requested at 2 but limited to 3, and Kubernetes refuses that for a resource it cannot overcommit ("must be equal to example.com/foo limit of 3"): make the request equal to the limit, or set only the limit, which the request then defaults to`},
		{Kind: "Job", Name: "j", Field: "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]",
			Message: `nvidia.com/gpu is requested (1) without a limit, and Kubernetes refuses that for a resource it cannot overcommit ("Limit must be set for non overcommitable resources"): set resources.limits[nvidia.com/gpu] to 1, or set only the limit, which the request then defaults to`},
	}
	if diff := cmp.Diff(want, c.Check(tenantRequest(m)).Violations); diff != "" {
		t.Errorf("Check(Job with an empty image and extended resources) violations (-want +got):\n%s", diff)
	}
}

func TestOvercommitAllowed(t *testing.T) {
	for name, want := range map[corev1.ResourceName]bool{
		"cpu": true, "memory": true, "ephemeral-storage": true, "kubernetes.io/batch-cpu": true,
		"hugepages-2Mi": false, "hugepages-1Gi": false, "nvidia.com/gpu": false, "amd.com/gpu": false, "example.com/foo": false,
	} {
		if got := overcommitAllowed(name); got != want {
			t.Errorf("overcommitAllowed(%s) = %v, want %v", name, got, want)
		}
	}
}
