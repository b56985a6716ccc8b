package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// TestWorkflowOnDev: examples/pipeline.yaml, made A → (B, C) → D with C failing at once and B
// running three seconds: D is cancelled dependency_not_met (naming C), then B succeeds, then the
// workflow fails, in that order; `workflows get` draws the graph; a cycle is refused naming it.
func TestWorkflowOnDev(t *testing.T) {
	h := newHarness(t)
	b, err := os.ReadFile("../../examples/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var wf map[string]any
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("examples/pipeline.yaml: %v", err)
	}
	wf["name"] = uniqueName("pipe")
	annotate := func(step int, annotations map[string]any) {
		m := wf["jobs"].([]any)[step].(map[string]any)["manifest"].(map[string]any)
		tpl := m["spec"].(map[string]any)["template"].(map[string]any)
		tpl["metadata"] = map[string]any{"annotations": annotations}
	}
	for i, j := range wf["jobs"].([]any) {
		meta := j.(map[string]any)["manifest"].(map[string]any)["metadata"].(map[string]any)
		meta["name"] = uniqueName(meta["name"].(string))
		_ = i
	}
	annotate(1, map[string]any{"pod-complete.stage.kwok.x-k8s.io/delay": "3s"}) // train: B, slow
	annotate(2, map[string]any{"tidegate.io/sandbox-exit-code": "3"})           // evaluate: C, fails
	body, _ := json.Marshal(wf)
	h.stdin = string(body)
	out := h.ok("workflows", "submit", "-f", "-", "-o", "json")
	var got apiclient.Workflow
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Status != "running" || len(got.Jobs) != 4 {
		t.Fatalf("workflows submit -o json = %s (%v), want a running workflow of 4 jobs", out, err)
	}
	h.eventually(got.ID+" ended", func() bool {
		w, err := h.api.Workflow(context.Background(), got.ID)
		if err == nil {
			got = w
		}
		return err == nil && ended(w.Status)
	})
	if got.Status != "failed" {
		t.Fatalf("the workflow = %s, want failed", got.Status)
	}
	ends := map[string]time.Time{}
	for _, j := range got.Jobs {
		job, err := h.api.Job(context.Background(), j.ID)
		if err != nil {
			t.Fatal(err)
		}
		last := job.StatusHistory[len(job.StatusHistory)-1]
		ends[j.Name] = last.At
		want := map[string]string{"prepare": "succeeded", "train": "succeeded", "evaluate": "failed", "report": "cancelled"}[j.Name]
		if job.Status != want {
			t.Errorf("%s = %s, want %s", j.Name, job.Status, want)
		}
		if j.Name == "report" && !strings.HasPrefix(last.Reason, "dependency_not_met: "+got.Jobs[2].ID+" failed") {
			t.Errorf("report's reason = %q, want dependency_not_met naming evaluate (%s)", last.Reason, got.Jobs[2].ID)
		}
	}
	wfEnd := got.StatusHistory[len(got.StatusHistory)-1].At
	if !ends["report"].Before(ends["train"]) || !ends["train"].Before(wfEnd) {
		t.Errorf("ends: report %s, train %s, the workflow %s; want report cancelled, then train succeeded, then the workflow failed",
			ends["report"].Format(time.StampMilli), ends["train"].Format(time.StampMilli), wfEnd.Format(time.StampMilli))
	}
	if listed := h.ok("workflows", "list"); !strings.Contains(listed, got.ID) || !strings.Contains(listed, "failed") {
		t.Errorf("workflows list =\n%s\nwant %s, failed", listed, got.ID)
	}
	drawn := h.ok("workflows", "get", got.ID)
	for _, want := range []string{"failed: 0 blocked, 0 active, 2 succeeded, 1 failed, 1 cancelled", "✗ " + "  evaluate", "after train, evaluate", "(dependency_not_met: "} {
		if !strings.Contains(drawn, want) {
			t.Errorf("workflows get =\n%s\nwant it to contain %q", drawn, want)
		}
	}

	h.stdin = `{"name": "loop", "jobs": [{"name": "x", "after": ["y"], "region": "us-east-1", "manifest": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "team-a"}}},
		{"name": "y", "after": ["x"], "region": "us-east-1", "manifest": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y", "namespace": "team-a"}}}]}`
	if stderr := h.fails("workflows", "submit", "-f", "-"); !strings.Contains(stderr, "x → y → x") {
		t.Errorf("a cycle: stderr %q, want it named", stderr)
	}
}
