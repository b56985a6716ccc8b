package main

import (
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// TestDrawWorkflow: the graph is drawn by depth, each job under the steps it comes after, with
// its status and, for an end that is not a success, why.
func TestDrawWorkflow(t *testing.T) {
	wf := apiclient.Workflow{ID: "wf-1", Name: "pipeline", Status: "running", Counts: apiclient.ArrayStatus{Blocked: 1, Active: 1, Succeeded: 1, Cancelled: 1},
		Jobs: []apiclient.WorkflowJob{
			{Name: "report", After: []string{"train", "evaluate"}, Status: "blocked"},
			{Name: "prepare", Status: "succeeded"},
			{Name: "train", After: []string{"prepare"}, Status: "running"},
			{Name: "evaluate", After: []string{"prepare"}, Status: "cancelled", Reason: "dependency_not_met: job-x failed, not succeeded"},
		}}
	var b strings.Builder
	drawWorkflow(&b, wf)
	want := `pipeline (wf-1)  running: 1 blocked, 1 active, 1 succeeded, 0 failed, 1 cancelled
  ✓ prepare     succeeded
  ▶   train     running     after prepare
  ⊘   evaluate  cancelled   after prepare  (dependency_not_met: job-x failed, not succeeded)
  ·     report  blocked     after train, evaluate
`
	if b.String() != want {
		t.Errorf("drawWorkflow =\n%s\nwant\n%s", b.String(), want)
	}
}
