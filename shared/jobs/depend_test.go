package jobs

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOutcome: each condition against each status, written out rather than read from the code.
func TestOutcome(t *testing.T) {
	type result struct{ met, final bool }
	want := map[Condition]map[Status]result{
		OnSucceeded: {StatusSucceeded: {true, true}, StatusFailed: {false, true}, StatusCancelled: {false, true}},
		OnFailed:    {StatusSucceeded: {false, true}, StatusFailed: {true, true}, StatusCancelled: {false, true}},
		OnEnded:     {StatusSucceeded: {true, true}, StatusFailed: {true, true}, StatusCancelled: {true, true}},
	}
	for c, byStatus := range want {
		for _, s := range []Status{StatusBlocked, StatusQueued, StatusDispatching, StatusPending, StatusRunning, StatusSucceeded, StatusFailed, StatusCancelled} {
			met, final := c.Outcome(s)
			if got := (result{met, final}); got != byStatus[s] {
				t.Errorf("%s.Outcome(%s) = %+v, want %+v", c, s, got, byStatus[s])
			}
		}
	}
}

func TestCheckDependencies(t *testing.T) {
	ok, bad := CheckDependencies([]Dependency{{Job: "job-a"}, {Job: "job-b", On: OnFailed}})
	if len(bad) > 0 || ok[0].On != OnSucceeded || ok[1].On != OnFailed {
		t.Errorf("CheckDependencies(good) = %v, %v; want the default filled in and no problem", ok, bad)
	}
	_, bad = CheckDependencies([]Dependency{{Job: ""}, {Job: "job-a", On: "done"}, {Job: "job-b"}, {Job: "job-b"}})
	fields := []string{}
	for _, b := range bad {
		fields = append(fields, b[0])
	}
	if want := []string{"depends_on[0].job", "depends_on[1].on", "depends_on[3].job"}; !slices.Equal(fields, want) {
		t.Errorf("CheckDependencies(bad) named %v, want %v (%v)", fields, want, bad)
	}
	many := make([]Dependency, MaxDependencies+1)
	for i := range many {
		many[i] = Dependency{Job: fmt.Sprintf("job-%d", i)}
	}
	if _, bad := CheckDependencies(many); len(bad) != 1 || bad[0][0] != "depends_on" {
		t.Errorf("CheckDependencies(%d) = %v, want one problem naming depends_on", len(many), bad)
	}
}

func TestSettle(t *testing.T) {
	ds := []Dependency{{Job: "a", On: OnSucceeded}, {Job: "b", On: OnEnded}, {Job: "c", On: OnFailed}}
	tests := []struct {
		statuses    map[string]Status
		want        Status
		waiting     []string
		reasonStart string
	}{
		{map[string]Status{"a": StatusRunning, "b": StatusQueued, "c": StatusBlocked}, StatusBlocked, []string{"a", "b", "c"}, ReasonWaitingForDependencies},
		{map[string]Status{"a": StatusSucceeded, "b": StatusCancelled, "c": StatusRunning}, StatusBlocked, []string{"c"}, ReasonWaitingForDependencies},
		{map[string]Status{"a": StatusSucceeded, "b": StatusFailed, "c": StatusFailed}, StatusQueued, nil, ""},
		{map[string]Status{"a": StatusRunning, "b": StatusQueued, "c": StatusSucceeded}, StatusCancelled, nil, "dependency_not_met: c succeeded, not failed"},
	}
	for _, tt := range tests {
		got, waiting, reason := Settle(ds, tt.statuses)
		if got != tt.want || !slices.Equal(waiting, tt.waiting) || !strings.HasPrefix(reason, tt.reasonStart) {
			t.Errorf("Settle(%v) = %s, %v, %q; want %s, %v, %q", tt.statuses, got, waiting, reason, tt.want, tt.waiting, tt.reasonStart)
		}
	}
}

func TestBlock(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	j := New("job-1", "ml", "team-a", "us-east-1", 50, nil, nil, at)
	if b := Block(j, StatusQueued, nil, "", at); b.Status != StatusQueued || len(b.StatusHistory) != 1 {
		t.Errorf("Block(queued) = %+v, want the job as it was", b)
	}
	b := Block(j, StatusBlocked, []string{"job-0"}, ReasonWaitingForDependencies, at)
	if b.Status != StatusBlocked || b.PendingReason != ReasonWaitingForDependencies || !slices.Equal(b.WaitingOn, []string{"job-0"}) ||
		len(b.StatusHistory) != 1 || b.StatusHistory[0].Status != StatusBlocked {
		t.Errorf("Block(blocked) = %+v", b)
	}
	c := Block(j, StatusCancelled, nil, "dependency_not_met: job-0 failed, not succeeded", at)
	if c.Status != StatusCancelled || c.PendingReason != "" || c.StatusHistory[0].Reason == "" {
		t.Errorf("Block(cancelled) = %+v, want cancelled with its reason in its history", c)
	}
	released, ch, err := Move(b, StatusQueued, ReasonDependenciesMet, at)
	if err != nil || released.WaitingOn != nil || released.PendingReason != "" || ch.Event == nil {
		t.Errorf("Move(blocked → queued) = %+v, %+v, %v; want waiting and reason cleared, job.queued written", released, ch, err)
	}
}
