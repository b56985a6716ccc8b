package jobs

import (
	"slices"
	"testing"
	"time"
)

func TestCheckArray(t *testing.T) {
	if a, bad := CheckArray(&Array{Size: 10}); len(bad) > 0 || a.Parallelism != 10 {
		t.Errorf("CheckArray(size 10) = %+v, %v; want parallelism 10, no problem", a, bad)
	}
	for _, tc := range []struct {
		a     Array
		field string
	}{
		{Array{Size: 1}, "array.size"}, {Array{Size: MaxArraySize + 1}, "array.size"},
		{Array{Size: 4, Parallelism: 5}, "array.parallelism"}, {Array{Size: 4, Parallelism: -2}, "array.parallelism"},
	} {
		if _, bad := CheckArray(&tc.a); len(bad) != 1 || bad[0][0] != tc.field {
			t.Errorf("CheckArray(%+v) = %v, want one problem naming %s", tc.a, bad, tc.field)
		}
	}
	if a, bad := CheckArray(nil); a != nil || bad != nil {
		t.Errorf("CheckArray(nil) = %v, %v", a, bad)
	}
}

func TestChildren(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	p := New("job-p", "ml", "team-a", "us-east-1", 70, map[string]string{"k": "v"},
		[]map[string]any{{"kind": "Job", "metadata": map[string]any{"name": "train", "namespace": "team-a"}}}, at)
	p.Array = &Array{Size: 3, Parallelism: 2}
	p.DependsOn = []Dependency{{Job: "job-x", On: OnSucceeded}}
	cs := Children(p)
	for i, c := range cs {
		meta := c.Manifests[0]["metadata"].(map[string]any)
		if c.ID != ChildID("job-p", i) || c.Parent != "job-p" || *c.ArrayIndex != i || c.Array != nil || c.DependsOn != nil ||
			c.Status != StatusBlocked || !slices.Equal(c.WaitingOn, []string{"job-p"}) || meta["name"] != ChildName("train", i) ||
			meta["namespace"] != "team-a" || c.Priority != 70 || c.Labels["k"] != "v" {
			t.Errorf("child %d = %+v (metadata %v)", i, c, meta)
		}
	}
	if p.Manifests[0]["metadata"].(map[string]any)["name"] != "train" {
		t.Errorf("Children renamed the parent's own manifest")
	}
}

// TestStatusOf: the counts add up to the size at every point of an array's life.
func TestStatusOf(t *testing.T) {
	p := Job{Array: &Array{Size: 10, Parallelism: 3}, Status: StatusBlocked}
	check := func(what string, got, want ArrayStatus) {
		t.Helper()
		if got != want || got.Blocked+got.Active+got.Succeeded+got.Failed+got.Cancelled != 10 {
			t.Errorf("%s: %+v, want %+v (adding up to 10)", what, got, want)
		}
	}
	check("blocked", StatusOf(p, ArrayEnds{}), ArrayStatus{Blocked: 10})
	p.Status = StatusRunning
	check("started", StatusOf(p, ArrayEnds{}), ArrayStatus{Blocked: 7, Active: 3})
	check("four ended", StatusOf(p, ArrayEnds{Succeeded: 3, Failed: 1}), ArrayStatus{Blocked: 3, Active: 3, Succeeded: 3, Failed: 1})
	check("nine ended", StatusOf(p, ArrayEnds{Succeeded: 9}), ArrayStatus{Active: 1, Succeeded: 9})
	p.Status = StatusCancelled
	check("cancelled", StatusOf(p, ArrayEnds{Succeeded: 2, Cancelled: 1}), ArrayStatus{Succeeded: 2, Cancelled: 8})
	if s, _ := ArrayEnd(ArrayEnds{Succeeded: 10}); s != StatusSucceeded {
		t.Errorf("ArrayEnd(all succeeded) = %s", s)
	}
	if s, _ := ArrayEnd(ArrayEnds{Succeeded: 9, Cancelled: 1}); s != StatusFailed {
		t.Errorf("ArrayEnd(one cancelled) = %s, want failed", s)
	}
}
