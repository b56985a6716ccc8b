package devstack_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/metrics"
)

// gpuJob is a restricted one-pod Job in team-a asking for gpus nvidia.com/gpu, requests and
// limits, as POST /api/v1/jobs takes it.
func gpuJob(name string, gpus int) string {
	gpu := map[string]any{"nvidia.com/gpu": gpus}
	job := map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", name, os.Getpid()), "namespace": "team-a"},
		"spec": map[string]any{"backoffLimit": 0, "template": map[string]any{
			"spec": map[string]any{
				"restartPolicy":   "Never",
				"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
				"containers": []any{map[string]any{
					"name": "main", "image": "busybox:1.36",
					"resources": map[string]any{"requests": gpu, "limits": gpu},
					"securityContext": map[string]any{
						"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}},
				}},
			},
		}},
	}
	b, _ := json.Marshal(map[string]any{"manifest": job, "region": "us-east-1", "namespace": "team-a"})
	return string(b)
}

// TestPolicyPassThrough: TIDEGATE_POLICY_MAX_GPUS=1 in the stack's environment is the API's cap, as
// in AWS: a Job asking for 2 GPUs is refused with 422 naming the cap, one asking for 1 is
// accepted. Once it is dispatched, `tidegate dev metrics`' reading of the dev folder holds the
// drain's queue gauges and the dispatch's outcome.
func TestPolicyPassThrough(t *testing.T) {
	kube := testenv.Kube(t)
	dir := t.TempDir()
	env := map[string]string{config.EnvPolicyMaxGPUs: "1"}
	st := startDev(t, devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: dir,
		Standins: &kube, Prefix: fmt.Sprintf("settings-%d", os.Getpid()),
		Env: func(name string) string { return env[name] },
	})
	c := client{t: t, url: st.URL}

	code, body := c.do("POST", "/api/v1/jobs", gpuJob("two-gpus", 2))
	if code != 422 || !strings.Contains(body, "nvidia.com/gpu") || !strings.Contains(body, "cap") {
		t.Errorf("POST a Job asking for 2 GPUs under a cap of 1 = %d %s; want 422 naming the nvidia.com/gpu cap", code, body)
	}
	code, body = c.do("POST", "/api/v1/jobs", gpuJob("one-gpu", 1))
	var resp struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if code != 202 || json.Unmarshal([]byte(body), &resp) != nil {
		t.Fatalf("POST a Job asking for 1 GPU under a cap of 1 = %d %s; want 202", code, body)
	}
	waitDispatched(t, c, resp.Job.ID)

	want := map[string]bool{
		"QueuedJobs Region=us-east-1":                          false,
		"ActiveJobs Region=us-east-1":                          false,
		"DispatchOutcomes Region=us-east-1 Outcome=dispatched": false,
	}
	// The drain records its gauges after it dispatched; give it a beat to have written them.
	var seen []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		points, err := devstack.ReadMetrics(dir)
		if err != nil {
			t.Fatalf("ReadMetrics(the stack's folder) = %v", err)
		}
		seen = seen[:0]
		for _, l := range metrics.Newest(points) {
			key := l.Metric.Name
			for _, d := range l.Metric.Dimensions {
				key += " " + d + "=" + l.Dimensions[d]
			}
			seen = append(seen, key)
			if _, ok := want[key]; ok {
				want[key] = true
			}
		}
		if want["QueuedJobs Region=us-east-1"] && want["ActiveJobs Region=us-east-1"] && want["DispatchOutcomes Region=us-east-1 Outcome=dispatched"] {
			return
		}
	}
	t.Errorf("the stack's metrics after a dispatch: found %v among %v", want, seen)
}

// waitDispatched waits until job id has left the queue and dispatch: its objects are applied.
func waitDispatched(t *testing.T, c client, id string) {
	t.Helper()
	var j jobView
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if j = c.job(id); j.Status != "queued" && j.Status != "dispatching" {
			if j.Status == "failed" {
				t.Fatalf("job %s failed: %+v", id, j.StatusHistory)
			}
			return
		}
	}
	t.Fatalf("job %s was not dispatched within a minute; last %s, history %+v", id, j.Status, j.StatusHistory)
}
