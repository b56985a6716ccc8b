package devstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/capacitytype"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
)

// submitCapped submits a one-pod Job named name-<pid> to team-a in us-east-1 with a spot cap of
// 0.30 on g5.xlarge and spot_deadline deadline, on_deadline onDeadline (none when empty).
func (c client) submitCapped(t *testing.T, name, deadline, onDeadline string) string {
	t.Helper()
	body := map[string]any{"max_spot_price": 0.30, "spot_instance_type": "g5.xlarge"}
	if deadline != "" {
		body["spot_deadline"], body["on_deadline"] = deadline, onDeadline
	}
	return c.submitJob(t, name, body)
}

// submitPlain submits, as a client does, a one-pod Job named name that succeeds at once.
func (c client) submitPlain(t *testing.T, name string) string {
	t.Helper()
	return c.submitJob(t, name, map[string]any{})
}

// submitJob submits, to team-a in body's region (us-east-1 when it names none), a one-pod Job
// named name (made unique) with body's other fields, and answers the job's id.
func (c client) submitJob(t *testing.T, name string, body map[string]any) string {
	t.Helper()
	if body["region"] == nil {
		body["region"] = "us-east-1"
	}
	return c.submitEdited(t, name, body, nil)
}

// submitEdited submits, to team-a with body's fields, a one-pod Job named name (made unique),
// its pod template edited by edit first (when set), and answers the job's id.
func (c client) submitEdited(t *testing.T, name string, body map[string]any, edit func(template map[string]any)) string {
	t.Helper()
	body["namespace"] = "team-a"
	template := map[string]any{"spec": map[string]any{
		"restartPolicy":   "Never",
		"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"containers": []any{map[string]any{
			"name": "main", "image": "busybox:1.36", "command": []any{"true"},
			"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}},
		}},
	}}
	if edit != nil {
		edit(template)
	}
	body["manifest"] = map[string]any{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": fmt.Sprintf("%s-%d", name, os.Getpid())},
		"spec": map[string]any{"backoffLimit": 0, "template": template},
	}
	code, out := c.do("POST", "/api/v1/jobs", mustMarshal(t, body))
	var created struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if code != 202 || json.Unmarshal([]byte(out), &created) != nil || created.Job.ID == "" {
		t.Fatalf("POST /api/v1/jobs (%s) = %d %s, want 202 with the job", name, code, out)
	}
	return created.Job.ID
}

// placedOn reads the node job id's placement names.
func (c client) placedOn(id string) (node, capacity string) {
	c.t.Helper()
	code, body := c.do("GET", "/api/v1/jobs/"+id, "")
	var j struct {
		Placement struct {
			NodeName     string `json:"node_name"`
			CapacityType string `json:"node_capacity_type"`
		} `json:"placement"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &j) != nil {
		c.t.Fatalf("GET /api/v1/jobs/%s = %d %s", id, code, body)
	}
	return j.Placement.NodeName, j.Placement.CapacityType
}

// inRegion says whether node name is one of region's nodes of capacityType (CapacityTypeLabel's
// value): the sandbox's own, labelled us-east-1, or a flavor's.
func inRegion(t *testing.T, cs kubernetes.Interface, name, region, capacityType string) bool {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("node %s: %v", name, err)
		return false
	}
	return n.Labels["topology.kubernetes.io/region"] == region && n.Labels[sandbox.CapacityTypeLabel] == capacityType
}

// TestSpotDeadlineOnTheDevStack is the spot deadline's promise on `tidegate dev`: with the price
// above the cap, a job with on_deadline on_demand runs, after its deadline, on an on-demand node
// of its region, and one with fail fails with spot_deadline_passed; a job the cap holds with no
// deadline still waits, and an uncapped job runs on a spot node. Which node of its kind a job
// runs on is its flavor's and the scheduler's choice.
func TestSpotDeadlineOnTheDevStack(t *testing.T) {
	kube := testenv.Kube(t)
	st := startDev(t, devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: t.TempDir(),
		Standins: &kube, Prefix: fmt.Sprintf("deadline-%d", os.Getpid()),
	})
	c := client{t: t, url: st.URL}
	if got := st.Env["TIDEGATE_CAPACITY_TYPE_LABEL"]; got != sandbox.CapacityTypeLabel {
		t.Errorf("the dev stack's TIDEGATE_CAPACITY_TYPE_LABEL = %q, want the sandbox nodes' %s", got, sandbox.CapacityTypeLabel)
	}
	cs, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	onDemand, _ := capacitytype.OnDemandValue(sandbox.CapacityTypeLabel)
	for name, want := range map[string]string{sandbox.FakeNodeName: "spot", sandbox.OnDemandNodeName: onDemand} {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || n.Labels[sandbox.CapacityTypeLabel] != want {
			t.Fatalf("sandbox node %s: %v, label %s = %q; want %q", name, err, sandbox.CapacityTypeLabel, n.Labels[sandbox.CapacityTypeLabel], want)
		}
	}

	// The API takes any deadline after submission; 5 s keeps the test short.
	const deadline = 5 * time.Second
	setPrice(t, st.PricesURL, `{"region":"us-east-1","instance_type":"g5.xlarge","price":0.55}`)
	submitted := time.Now()
	toOnDemand := c.submitCapped(t, "ondemand", deadline.String(), "on_demand")
	failing := c.submitCapped(t, "fail", deadline.String(), "fail")
	held := c.submitCapped(t, "held", "", "")
	free := c.submitExample(t, "free")

	ran := c.waitFor(toOnDemand, "succeeded", time.Minute)
	if pending, _ := ran.at("pending"); pending.Sub(submitted) < deadline-time.Second {
		t.Errorf("job %s was dispatched %s after submission, before its %s deadline", toOnDemand, pending.Sub(submitted).Round(100*time.Millisecond), deadline)
	}
	if node, capacity := c.placedOn(toOnDemand); !inRegion(t, cs, node, "us-east-1", onDemand) || capacity != onDemand {
		t.Errorf("job %s ran on %q (%q), want a us-east-1 on-demand node (%s, or its on-demand flavor's)", toOnDemand, node, capacity, sandbox.OnDemandNodeName)
	}
	failed := c.waitFor(failing, "failed", time.Minute)
	if last := failed.StatusHistory[len(failed.StatusHistory)-1]; last.Reason != "spot_deadline_passed" {
		t.Errorf("job %s failed with %q, want spot_deadline_passed", failing, last.Reason)
	}
	c.waitFor(free, "succeeded", time.Minute)
	if node, capacity := c.placedOn(free); !inRegion(t, cs, node, "us-east-1", "spot") || capacity != "spot" {
		t.Errorf("uncapped job %s ran on %q (%q), want a us-east-1 spot node (%s, or its spot flavor's)", free, node, capacity, sandbox.FakeNodeName)
	}
	if j := c.job(held); j.Status != "queued" {
		t.Errorf("capped job %s with no deadline is %s, want still queued under the price", held, j.Status)
	}
}
