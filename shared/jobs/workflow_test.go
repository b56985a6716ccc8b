package jobs

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func TestCheckGraph(t *testing.T) {
	steps := []Step{{Name: "report", After: []string{"train", "eval"}}, {Name: "prep"}, {Name: "train", After: []string{"prep"}}, {Name: "eval", After: []string{"prep"}}}
	order, bad, cycle := CheckGraph(steps, tenancy.IsDNSLabel)
	if len(bad) > 0 || cycle != "" {
		t.Fatalf("CheckGraph(a diamond) = %v, %q", bad, cycle)
	}
	pos := map[string]int{}
	for i, k := range order {
		pos[steps[k].Name] = i
	}
	for _, s := range steps {
		for _, a := range s.After {
			if pos[a] >= pos[s.Name] {
				t.Errorf("order %v puts %s before %s, which it comes after", order, s.Name, a)
			}
		}
	}
	_, _, cycle = CheckGraph([]Step{{Name: "a", After: []string{"c"}}, {Name: "b", After: []string{"a"}}, {Name: "c", After: []string{"b"}}, {Name: "d"}}, tenancy.IsDNSLabel)
	if cycle != "a → c → b → a" {
		t.Errorf("the cycle named %q, want a → c → b → a", cycle)
	}
	for _, tc := range []struct {
		steps []Step
		field string
	}{
		{[]Step{{Name: "a"}, {Name: "a"}}, "jobs[1].name"},
		{[]Step{{Name: "A b"}}, "jobs[0].name"},
		{[]Step{{Name: "a", After: []string{"z"}}}, "jobs[0].after[0]"},
		{[]Step{{Name: "a", After: []string{"a"}}}, "jobs[0].after[0]"},
		{nil, "jobs"},
	} {
		if _, bad, _ := CheckGraph(tc.steps, tenancy.IsDNSLabel); !slices.ContainsFunc(bad, func(b [2]string) bool { return b[0] == tc.field }) {
			t.Errorf("CheckGraph(%v) = %v, want a problem naming %s", tc.steps, bad, tc.field)
		}
	}
	many := make([]Step, MaxWorkflowSteps+1)
	for i := range many {
		many[i] = Step{Name: fmt.Sprintf("s%d", i)}
	}
	if _, bad, _ := CheckGraph(many, tenancy.IsDNSLabel); len(bad) != 1 {
		t.Errorf("CheckGraph(%d steps) = %v, want one problem", len(many), bad)
	}
}

// TestWorkflowEvents: a workflow's parent writes workflow.* events at its ends, and none when it
// starts; a job's moves write a job's.
func TestWorkflowEvents(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	wf := New("wf-1", "ml", "team-a", "us-east-1", 50, nil, nil, at)
	wf.Workflow = &Workflow{Name: "w", Steps: []Step{{Name: "a", Job: "job-a"}}}
	wf.Status = StatusBlocked
	running, c, err := Started(wf, at)
	if err != nil || c.Event != nil {
		t.Fatalf("Started(workflow) = %+v, %v; want running, no event", c.Event, err)
	}
	for to, want := range map[Status]outbox.Type{StatusSucceeded: outbox.WorkflowSucceeded, StatusFailed: outbox.WorkflowFailed, StatusCancelled: outbox.WorkflowCancelled} {
		if _, c, err := Move(running, to, "why", at); err != nil || c.Event == nil || c.Event.Type != want {
			t.Errorf("Move(workflow → %s) event = %v, %v; want %s", to, c.Event, err, want)
		}
	}
}
