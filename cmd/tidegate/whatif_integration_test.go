package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
}
