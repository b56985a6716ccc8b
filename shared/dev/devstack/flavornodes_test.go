package devstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/capacitytype"
	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/flavors"
)

// TestDevStackFlavorNodes: `tidegate dev` with no flavors given runs each region with dev's spot
// and on-demand flavors, says so at start, exports them to `tidegate dev env`, and gives the
// sandbox a node for each, in its region, with the flavor's labels and its resources as
// allocatable and capacity, where its jobs run; the sandbox's own nodes are left as they were.
func TestDevStackFlavorNodes(t *testing.T) {
	kube := testenv.Kube(t)
	said := &syncBuffer{}
	st := startDevSaying(t, devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("flavors-%d", os.Getpid()),
	}, said)
	for _, r := range devstack.DevRegions {
		if want := "tidegate dev: " + r + " runs flavors (dev's own): spot cpu=16,memory=64Gi,pods=110; on-demand cpu=16,memory=64Gi,nvidia.com/gpu=8,pods=110\n"; !strings.Contains(said.String(), want) {
			t.Errorf("tidegate dev said:\n%s\nwant the line %q", said.String(), want)
		}
	}
	set, err := flavors.Parse(st.Env[config.EnvFlavors])
	if err != nil || !set.Configured("us-east-1") || !set.Configured("us-west-2") {
		t.Errorf("the dev stack's %s = %q (%v); want flavors for both regions", config.EnvFlavors, st.Env[config.EnvFlavors], err)
	}

	cs, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	onDemand, _ := capacitytype.OnDemandValue(sandbox.CapacityTypeLabel)
	q := resource.MustParse
	spot := corev1.ResourceList{"cpu": q("16"), "memory": q("64Gi"), "pods": q("110")}
	gpus := corev1.ResourceList{"cpu": q("16"), "memory": q("64Gi"), "pods": q("110"), "nvidia.com/gpu": q("8")}
	for _, r := range devstack.DevRegions {
		for _, f := range []struct {
			name, capacityType string
			resources          corev1.ResourceList
		}{{"spot", "spot", spot}, {"on-demand", onDemand, gpus}} {
			name := "tidegate-" + r + "-" + f.name
			n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("node %s: %v", name, err)
				continue
			}
			labels := map[string]string{sandbox.CapacityTypeLabel: f.capacityType, "topology.kubernetes.io/region": r, sandbox.FlavorNodeLabel: "tidegate", "type": "kwok"}
			for k, v := range labels {
				if n.Labels[k] != v {
					t.Errorf("node %s label %s = %q, want %q", name, k, n.Labels[k], v)
				}
			}
			for what, got := range map[string]corev1.ResourceList{"allocatable": n.Status.Allocatable, "capacity": n.Status.Capacity} {
				if !sameQuantities(got, f.resources) {
					t.Errorf("node %s %s = %v, want %v", name, what, got, f.resources)
				}
			}
		}
	}
	// Each region's jobs run on its own flavors' nodes: a job asking nothing in particular on the
	// first flavor, spot; a GPU job on the one flavor with GPUs.
	c := client{t: t, url: st.URL}
	var gpu struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if code, body := c.do("POST", "/api/v1/jobs", gpuJob("flavor-gpu", 1)); code != 202 || json.Unmarshal([]byte(body), &gpu) != nil {
		t.Fatalf("POST a Job asking for 1 GPU = %d %s; want 202", code, body)
	}
	for id, node := range map[string]string{
		c.submitJob(t, "flavor-east", map[string]any{}):                      "tidegate-us-east-1-spot",
		c.submitJob(t, "flavor-west", map[string]any{"region": "us-west-2"}): "tidegate-us-west-2-spot",
		gpu.Job.ID: "tidegate-us-east-1-on-demand",
	} {
		c.waitFor(id, "succeeded", time.Minute)
		got, _ := c.placedOn(id)
		t.Logf("job %s ran on %s", id, got)
		if got != node {
			t.Errorf("job %s ran on %q, want its flavor's node %s", id, got, node)
		}
	}

	for name, want := range map[string]string{sandbox.FakeNodeName: "spot", sandbox.OnDemandNodeName: onDemand} {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || n.Labels[sandbox.CapacityTypeLabel] != want || n.Labels[sandbox.FlavorNodeLabel] != "" || n.Status.Allocatable.Pods().Value() != 1000 {
			t.Errorf("the sandbox's node %s: %v; want it as the sandbox made it", name, err)
		}
	}
}

// sameQuantities says whether a and b list the same resources in equal quantities.
func sameQuantities(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if w, ok := b[name]; !ok || w.Cmp(q) != 0 {
			return false
		}
	}
	return true
}
