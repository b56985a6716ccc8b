package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tidegate/tidegate/shared/apiclient"
	"github.com/tidegate/tidegate/shared/config"
)

// TestWhatIfOnDev: `jobs submit --what-if` runs the whole admission and stores nothing. A job that
// fits hears where it would run and on which flavor; in a region the operator cordoned it hears
// why it would wait and where it would stand, and submitted for real it waits for that reason;
// `queue ahead` counts none ahead of it; uncordoned, it runs.
func TestWhatIfOnDev(t *testing.T) {
	h := newHarness(t)
	// The admin commands reach the stack's control table and dispatch queue as `tidegate dev env`
	// sets them.
	for _, k := range []string{config.EnvControlTable, config.EnvDynamoDBEndpoint, config.EnvRegions, config.EnvDispatchQueueURL,
		config.EnvSQSEndpoint, "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		t.Setenv(k, h.state.Env[k])
	}
	t.Setenv("AWS_PROFILE", "")
	name := uniqueName("wi")
	h.stdin = exampleJob(t, name)
	var wi apiclient.WhatIf
	if out := h.ok("jobs", "submit", "-f", "-", "--region", "us-east-1", "--what-if", "-o", "json"); json.Unmarshal([]byte(out), &wi) != nil ||
		!wi.Admitted || wi.Region != "us-east-1" || len(wi.Regions) != 1 || wi.Regions[0].Flavor == "" {
		t.Fatalf("jobs submit --what-if = %s; want admitted in us-east-1 on a flavor", out)
	}
	if page, err := h.api.Jobs(context.Background(), apiclient.JobFilter{}, apiclient.ListOptions{Limit: 10}); err != nil || len(page.Items) != 0 {
		t.Fatalf("after a what-if, jobs = %+v (%v); want none stored", page.Items, err)
	}

	h.ok("admin", "regions", "cordon", "us-east-1")
	// A cordon reaches the admission within its 5 s of trust in what it read of the regions.
	var out string
	h.eventually("the what-if to see us-east-1 cordoned", func() bool {
		h.stdin = exampleJob(t, name)
		out = h.ok("jobs", "submit", "-f", "-", "--region", "us-east-1", "--what-if")
		return strings.Contains(out, "region_cordoned")
	})
	if !strings.Contains(out, "It would wait") || !strings.Contains(out, "1st") {
		t.Errorf("jobs submit --what-if in a cordoned region =\n%s\nwant it waiting region_cordoned, 1st", out)
	}
	h.stdin = exampleJob(t, name)
	var j apiclient.Job
	if err := json.Unmarshal([]byte(h.ok("jobs", "submit", "-f", "-", "--region", "us-east-1", "--label", "what=if", "-o", "json")), &j); err != nil {
		t.Fatal(err)
	}
	h.eventually(j.ID+" waiting region_cordoned", func() bool {
		got, err := h.api.Job(context.Background(), j.ID)
		return err == nil && got.Status == "queued" && got.PendingReason == "region_cordoned"
	})
	if out := h.ok("queue", "ahead", j.ID); !strings.Contains(out, "0 jobs ahead of "+j.ID+" in us-east-1, 0 of them yours") {
		t.Errorf("queue ahead %s =\n%s\nwant none ahead", j.ID, out)
	}
	h.ok("admin", "regions", "uncordon", "us-east-1")
	h.eventually(j.ID+" succeeded once uncordoned", func() bool {
		got, err := h.api.Job(context.Background(), j.ID)
		return err == nil && got.Status == "succeeded"
	})

	whatIfWorkflow(t, h)
}

// whatIfWorkflow: POST /api/v1/workflows?what_if=true answers each job: examples/pipeline.yaml's
// first job what its region would decide, the others blocked; nothing is stored.
func whatIfWorkflow(t *testing.T, h *harness) {
	t.Helper()
	b, err := os.ReadFile("../../examples/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var wf map[string]any
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(wf)
	type stepAnswer struct {
		Name     string `json:"name"`
		Admitted bool   `json:"admitted"`
		Blocked  bool   `json:"blocked"`
	}
	var steps []stepAnswer
	// The region was uncordoned a moment ago: the admission trusts what it read of it for 5 s.
	h.eventually("the workflow's what-if to admit its first job", func() bool {
		steps = workflowWhatIf[stepAnswer](t, h, body)
		return len(steps) == 4 && slices.ContainsFunc(steps, func(s stepAnswer) bool { return s.Name == "prepare" && s.Admitted })
	})
	for _, j := range steps {
		if first := j.Name == "prepare"; j.Admitted != first || j.Blocked == first {
			t.Errorf("workflow what-if: %+v; want prepare admitted, the others blocked", j)
		}
	}
	if page, err := h.api.Workflows(context.Background(), "", apiclient.ListOptions{Limit: 10}); err != nil || len(page.Items) != 0 {
		t.Errorf("workflows after a what-if = %+v (%v); want none", page.Items, err)
	}
}

// workflowWhatIf posts workflow body with what_if=true and answers its jobs' answers.
func workflowWhatIf[T any](t *testing.T, h *harness, body []byte) []T {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.state.URL+"/api/v1/workflows?what_if=true", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+h.state.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		WhatIf struct {
			Jobs []T `json:"jobs"`
		} `json:"what_if"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /api/v1/workflows?what_if=true = %d (%v); want 200", resp.StatusCode, err)
	}
	return out.WhatIf.Jobs
}
