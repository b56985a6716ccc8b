package devstack

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/flavors"
)

// devSpotAndOnDemand are the flavors devFlavors gives region r.
func devSpotAndOnDemand(r string) []flavors.Flavor {
	return []flavors.Flavor{
		{Name: "spot", NodeLabels: map[string]string{"karpenter.sh/capacity-type": "spot", "topology.kubernetes.io/region": r, "tidegate.io/dev-flavor-node": "tidegate"},
			Resources: map[string]string{"cpu": "16", "memory": "64Gi", "pods": "110"}},
		{Name: "on-demand", NodeLabels: map[string]string{"karpenter.sh/capacity-type": "on-demand", "topology.kubernetes.io/region": r, "tidegate.io/dev-flavor-node": "tidegate"},
			Resources: map[string]string{"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "8"}},
	}
}

// TestDevFlavors: each dev region the older settings' caps do not name gets a spot and an
// on-demand flavor selecting its own region's flavor nodes, as JSON flavors.Parse reads; a region named in
// TIDEGATE_REGION_CAPACITY or TIDEGATE_REGION_GPUS keeps their room; with both named there is none.
func TestDevFlavors(t *testing.T) {
	for _, tt := range []struct {
		name           string
		capacity, gpus map[string]int
		want           flavors.Set
	}{
		{"none named", nil, nil, flavors.Set{"us-east-1": devSpotAndOnDemand("us-east-1"), "us-west-2": devSpotAndOnDemand("us-west-2")}},
		{"capacity names us-east-1", map[string]int{"us-east-1": 10}, nil, flavors.Set{"us-west-2": devSpotAndOnDemand("us-west-2")}},
		{"GPUs name us-west-2", map[string]int{}, map[string]int{"us-west-2": 2}, flavors.Set{"us-east-1": devSpotAndOnDemand("us-east-1")}},
		{"both named", map[string]int{"us-east-1": 1, "us-west-2": 4}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := devFlavors(DevRegions, tt.capacity, tt.gpus)
			got, err := flavors.Parse(s)
			if err != nil {
				t.Fatalf("flavors.Parse(devFlavors(%v, %v)) = %v; the JSON: %s", tt.capacity, tt.gpus, err, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("devFlavors(%v, %v) (-want +got):\n%s", tt.capacity, tt.gpus, diff)
			}
		})
	}
}

// TestDevFlavorsSettings: --flavors is used in place of TIDEGATE_FLAVORS, and the stack says so;
// either is used as given; with neither, the sandbox's stack runs dev's own in the regions
// --region-capacity leaves out, and a stack on an operator's cluster (--kubeconfig) none.
func TestDevFlavorsSettings(t *testing.T) {
	const given, env = `{"*": [{"name": "any", "resources": {"pods": "3"}}]}`, `{"us-west-2": [{"name": "big", "resources": {"pods": "50"}}]}`
	for _, tt := range []struct {
		name     string
		opt      Options
		want     string
		override []string
	}{
		{"--flavors over the variable", Options{Flavors: given, Env: envOf(map[string]string{config.EnvFlavors: env})}, given,
			[]string{"--flavors " + given + " is used in place of TIDEGATE_FLAVORS=" + env}},
		{"the variable", Options{Env: envOf(map[string]string{config.EnvFlavors: env})}, env, nil},
		{"neither", Options{}, devFlavors(DevRegions), nil},
		{"neither, us-east-1's capacity given", Options{RegionCapacity: "us-east-1=10"}, devFlavors([]string{"us-west-2"}), nil},
		{"neither, on an operator's cluster", Options{Kubeconfig: "/elsewhere"}, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.opt.settings()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Flavors != tt.want {
				t.Errorf("settings(%+v).Flavors = %s, want %s", tt.opt, cfg.Flavors, tt.want)
			}
			if diff := cmp.Diff(tt.override, overrides(tt.opt)); diff != "" {
				t.Errorf("overrides (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDevRefusesBadFlavors: flavors the functions would refuse, or for a region dev does not have,
// stop the stack before it starts, naming where they came from.
func TestDevRefusesBadFlavors(t *testing.T) {
	for _, tt := range []struct {
		opt  Options
		want []string
	}{
		{Options{Flavors: `{"us-east-1": [`}, []string{"--flavors", "JSON by region"}},
		{Options{Flavors: `{"us-east-1": [{"name": "spot", "resources": {}}]}`}, []string{"--flavors", "region us-east-1", "lists no resources"}},
		{Options{Env: envOf(map[string]string{config.EnvFlavors: `{"eu-west-1": [{"name": "x", "resources": {"pods": "1"}}]}`})},
			[]string{config.EnvFlavors, `"eu-west-1"`, "us-east-1 and us-west-2"}},
	} {
		o := tt.opt
		o.Addr, o.Beat = "127.0.0.1:0", DefaultBeat
		err := o.Validate()
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(--flavors %q, env %q) = %v; want it to say %s", o.Flavors, o.getenv(config.EnvFlavors), err, w)
			}
		}
	}
}

// TestFlavorNodes: a node for each flavor of each region the set gives flavors, "*" standing for
// each region it does not name; a region left to the fallback gets none; a node has the flavor's
// resources, and the pods, CPU and memory it does not count.
func TestFlavorNodes(t *testing.T) {
	set, err := flavors.Parse(`{
		"us-east-1": [{"name": "gpu", "node_labels": {"pool": "gpu"}, "resources": {"nvidia.com/gpu": "4", "pods": "20"}}],
		"*": [{"name": "any", "resources": {"cpu": "8", "memory": "32Gi"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := flavorNodes(set, DevRegions)
	if err != nil {
		t.Fatal(err)
	}
	q := resource.MustParse
	want := []sandbox.FlavorNode{
		{Region: "us-east-1", Flavor: "gpu", Labels: map[string]string{"pool": "gpu"},
			Resources: corev1.ResourceList{"nvidia.com/gpu": q("4"), "pods": q("20"), "cpu": q("64"), "memory": q("256Gi")}},
		{Region: "us-west-2", Flavor: "any", Resources: corev1.ResourceList{"cpu": q("8"), "memory": q("32Gi"), "pods": q("110")}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flavorNodes (-want +got):\n%s", diff)
	}
	if got, err := flavorNodes(nil, DevRegions); err != nil || len(got) != 0 {
		t.Errorf("flavorNodes(no flavors) = %v, %v; want none: every region has the fallback", got, err)
	}
}

// TestFlavorLines: the start says each region's flavors with their resources, and where they came
// from; a region with the fallback, its room in jobs.
func TestFlavorLines(t *testing.T) {
	cfg := config.Config{RegionCapacity: map[string]int{"us-west-2": 4}, Flavors: devFlavors(DevRegions, map[string]int{"us-west-2": 4})}
	got, err := flavorLines(cfg, DevRegions, "dev's own")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"us-east-1 runs flavors (dev's own): spot cpu=16,memory=64Gi,pods=110; on-demand cpu=16,memory=64Gi,nvidia.com/gpu=8,pods=110",
		"us-west-2 runs flavors (4 jobs as pods): default pods=4",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flavorLines (-want +got):\n%s", diff)
	}
}
