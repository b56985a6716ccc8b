package flavors

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
)

const twoFlavors = `{"us-east-1": [
  {"name": "spot", "node_labels": {"karpenter.sh/capacity-type": "spot"}, "resources": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
  {"name": "a100", "node_labels": {"karpenter.sh/capacity-type": "on-demand", "nvidia.com/gpu.product": "A100"},
   "resources": {"cpu": "4", "memory": "16Gi", "pods": "110", "nvidia.com/gpu": "4"}}],
 "*": [{"name": "any", "resources": {"cpu": "2"}}]}`

func mustParse(t *testing.T, s string) Set {
	t.Helper()
	set, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`[1]`, "flavors are JSON by region"},
		{`{"us-east-1": []}`, "region us-east-1: no flavors"},
		{`{"r": [{"name": "Spot", "resources": {"cpu": "1"}}]}`, `flavor name "Spot"`},
		{`{"r": [{"name": "a", "resources": {"cpu": "1"}}, {"name": "b", "node_labels": {"k": "v"}, "resources": {"cpu": "1"}}]}`, "flavor a has no node labels"},
		{`{"r": [{"name": "a", "node_labels": {"k": "v"}, "resources": {"cpu": "1"}}, {"name": "a", "node_labels": {"k": "w"}, "resources": {"cpu": "1"}}]}`, "flavor a is listed twice"},
		{`{"r": [{"name": "a", "resources": {}}]}`, "flavor a lists no resources"},
		{`{"r": [{"name": "a", "resources": {"cpu": "lots"}}]}`, `cpu "lots" is not a quantity`},
		{`{"r": [{"name": "a", "resources": {"cpu": "-1"}}]}`, `cpu "-1" is negative`},
		{`{"r": [{"name": "a", "node_labels": {"bad key!": "v"}, "resources": {"cpu": "1"}}]}`, `node label key "bad key!"`},
		{`{"r": [{"name": "a", "resources": {"cpu": "1"}, "labels": {}}]}`, `unknown field "labels"`},
	} {
		if _, err := Parse(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) = %v, want an error saying %q", tt.in, err, tt.want)
		}
	}
	if set, err := Parse(" "); err != nil || set != nil {
		t.Errorf("Parse(blank) = %v, %v; want no flavors", set, err)
	}
}

func TestInAndFallback(t *testing.T) {
	set := mustParse(t, twoFlavors)
	if r := set.Of("us-east-1", 10, 0); len(r.Flavors) != 2 || r.Flavors[1].Name != "a100" {
		t.Errorf("us-east-1's flavors = %+v, want spot and a100", r.Flavors)
	}
	if r := set.Of("eu-west-1", 10, 0); len(r.Flavors) != 1 || r.Flavors[0].Name != "any" {
		t.Errorf("a region not named = %+v, want the * flavors", r.Flavors)
	}
	r := Set(nil).Of("eu-west-1", 10, 3)
	if diff := cmp.Diff([]string{"nvidia.com/gpu", "pods"}, r.Resources); diff != "" {
		t.Errorf("the fallback's resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(admission.Vec{3, 10}, r.Flavors[0].Capacity); diff != "" {
		t.Errorf("the fallback's capacity (-want +got):\n%s", diff)
	}
	// The fallback counts only pods and GPUs: a job's CPU and extended resources pass.
	need := r.Need(jobs.Job{Demand: map[string]string{"cpu": "64", "example.com/fpga": "1", "pods": "2"}})
	if diff := cmp.Diff(admission.Vec{0, 2}, need.Demand); diff != "" {
		t.Errorf("a job's need in the fallback (-want +got):\n%s", diff)
	}
}

func TestNeed(t *testing.T) {
	r := mustParse(t, twoFlavors).Of("us-east-1", 0, 0)
	// Resources are sorted per flavor, then added in the flavors' order.
	if diff := cmp.Diff([]string{"cpu", "memory", "pods", "nvidia.com/gpu"}, r.Resources); diff != "" {
		t.Fatalf("resources (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name string
		job  jobs.Job
		want admission.Need
	}{
		{"demand in the scheduler's units", jobs.Job{Demand: map[string]string{"cpu": "1500m", "memory": "1Gi", "pods": "3"}},
			admission.Need{Demand: admission.Vec{1500, 1 << 30, 3, 0}}},
		{"a record from before demand: one pod and its GPUs", jobs.Job{GPUs: 2},
			admission.Need{Demand: admission.Vec{0, 0, 1, 2}}},
		{"a podless job asks nothing", jobs.Job{Podless: true}, admission.Need{Demand: admission.Vec{0, 0, 0, 0}}},
		{"an extended resource no flavor has is past every flavor", jobs.Job{Demand: map[string]string{"pods": "1", "example.com/fpga": "1"}},
			admission.Need{Demand: admission.Vec{0, 0, 1, 0, 1}}},
		{"a selector of the spot label: spot alone", jobs.Job{NodeSelector: map[string]string{"karpenter.sh/capacity-type": "spot"}},
			admission.Need{Demand: admission.Vec{0, 0, 1, 0}, Within: admission.Restricted | 1}},
		{"a GPU model: the A100 flavor alone", jobs.Job{NodeSelector: map[string]string{"nvidia.com/gpu.product": "A100", "kubernetes.io/arch": "amd64"}},
			admission.Need{Demand: admission.Vec{0, 0, 1, 0}, Within: admission.Restricted | 1<<1}},
		{"a value no flavor has: none", jobs.Job{NodeSelector: map[string]string{"karpenter.sh/capacity-type": "reserved"}},
			admission.Need{Demand: admission.Vec{0, 0, 1, 0}, Within: admission.Restricted}},
		{"a key no flavor selects by: any", jobs.Job{NodeSelector: map[string]string{"kubernetes.io/arch": "arm64"}},
			admission.Need{Demand: admission.Vec{0, 0, 1, 0}}},
	} {
		if diff := cmp.Diff(tt.want, r.Need(tt.job)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestQuota(t *testing.T) {
	r := mustParse(t, twoFlavors).Of("us-east-1", 0, 0)
	max := int64(math.MaxInt64)
	all := admission.Vec{max, max, max, max}
	if q := r.Quota(tenancy.Quota{}); q != nil {
		t.Errorf("no quota = %v, want nil", q)
	}
	old := r.Quota(tenancy.Quota{Jobs: 4, GPUs: 2})
	want := admission.Quota{
		{Nominal: admission.Vec{0, 0, 4, 2}, BorrowingLimit: all, LendingLimit: all},
		{Nominal: admission.Vec{0, 0, 4, 2}, BorrowingLimit: all, LendingLimit: all},
	}
	if diff := cmp.Diff(want, old); diff != "" {
		t.Errorf("JOBS:GPUS on every flavor (-want +got):\n%s", diff)
	}
	got := r.Quota(tenancy.Quota{Flavors: map[string]tenancy.FlavorQuota{"a100": {
		Nominal: map[string]string{"nvidia.com/gpu": "2", "cpu": "2"}, BorrowingLimit: map[string]string{"nvidia.com/gpu": "0"}, LendingLimit: map[string]string{"cpu": "500m"}}}})
	want = admission.Quota{
		{Nominal: admission.Vec{0, 0, 0, 0}, BorrowingLimit: all, LendingLimit: all},
		{Nominal: admission.Vec{2000, 0, 0, 2}, BorrowingLimit: admission.Vec{max, max, max, 0}, LendingLimit: admission.Vec{500, max, max, max}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a quota per flavor (-want +got):\n%s", diff)
	}
}

func TestImpossible(t *testing.T) {
	r := mustParse(t, twoFlavors).Of("us-east-1", 0, 0)
	for _, tt := range []struct {
		name string
		job  jobs.Job
		want string // "" for one that fits
	}{
		{"fits spot", jobs.Job{Demand: map[string]string{"cpu": "8", "pods": "1"}}, ""},
		{"20 CPUs", jobs.Job{Demand: map[string]string{"cpu": "20", "pods": "200"}}, "cpu 20, more than any flavor of region us-east-1 it may run on has (spot, a100, at most 8)"},
		{"8 CPUs on the A100s", jobs.Job{Demand: map[string]string{"cpu": "8"}, NodeSelector: map[string]string{"nvidia.com/gpu.product": "A100"}}, "(a100, at most 4)"},
		{"5 GPUs", jobs.Job{Demand: map[string]string{"nvidia.com/gpu": "5"}}, "nvidia.com/gpu 5"},
		{"no such capacity type", jobs.Job{NodeSelector: map[string]string{"karpenter.sh/capacity-type": "reserved"}},
			"agrees with none of region us-east-1's flavors, spot (karpenter.sh/capacity-type=spot), a100 (karpenter.sh/capacity-type=on-demand,nvidia.com/gpu.product=A100)"},
		{"an FPGA", jobs.Job{Demand: map[string]string{"example.com/fpga": "1"}}, "a resource no flavor of region us-east-1 it may run on (spot, a100) has"},
	} {
		err := r.Impossible("us-east-1", r.Need(tt.job))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Impossible = %v, want nil", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: Impossible = %v, want it to say %q", tt.name, err, tt.want)
		}
	}
}

func TestSelectAndUse(t *testing.T) {
	r := mustParse(t, twoFlavors).Of("us-east-1", 0, 0)
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]any{"kubernetes.io/arch": "amd64"}}}}}
	out := Select([]map[string]any{job}, r.Labels[1])
	sel := out[0]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"]
	want := map[string]any{"kubernetes.io/arch": "amd64", "karpenter.sh/capacity-type": "on-demand", "nvidia.com/gpu.product": "A100"}
	if diff := cmp.Diff(want, sel); diff != "" {
		t.Errorf("Select's node selector (-want +got):\n%s", diff)
	}
	if got := job["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"]; len(got.(map[string]any)) != 1 {
		t.Errorf("Select changed the manifest it was given: %v", got)
	}
	active := []jobs.Job{
		{Flavor: "a100", Demand: map[string]string{"cpu": "1", "nvidia.com/gpu": "2", "pods": "1"}},
		{Demand: map[string]string{"cpu": "2", "pods": "2"}}, // before flavors were kept: the first it may run on
		{Flavor: "gone", Demand: map[string]string{"cpu": "1", "pods": "1"}, NodeSelector: map[string]string{"nvidia.com/gpu.product": "A100"}},
	}
	free := r.Free(active)
	if diff := cmp.Diff([]admission.Vec{{6000, 32 << 30, 108, 0}, {2000, 16 << 30, 108, 2}}, free); diff != "" {
		t.Errorf("Free (-want +got):\n%s", diff)
	}
	if r.Room(free, 100) != 216 {
		t.Errorf("Room = %d, want the 216 pods left", r.Room(free, 100))
	}
}
