package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// endedJob stores a job of tenant in namespace that ended at end with a cost estimate of total
// (nil cost when total is negative: a job that ended before costs were kept).
func endedJob(t *testing.T, js *dynamo.JobStore, id, tenant, namespace string, labels map[string]string, end time.Time, total float64) {
	t.Helper()
	j := jobs.New(id, tenant, namespace, "us-east-1", jobs.DefaultPriority, labels,
		[]map[string]any{{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": id}}}, end.Add(-time.Hour))
	for _, s := range []jobs.Status{jobs.StatusDispatching, jobs.StatusPending, jobs.StatusRunning, jobs.StatusSucceeded} {
		j.Status = s
		j.StatusHistory = append(j.StatusHistory, jobs.Transition{Status: s, At: end.UTC()})
	}
	if total >= 0 {
		j.Cost = &jobs.Cost{Currency: "USD", Total: total, Nodes: []jobs.NodeCost{}, Complete: true}
	}
	if _, _, err := js.Create(context.Background(), j, jobs.Event(outbox.JobCompleted, j, "", end), nil, end); err != nil {
		t.Fatal(err)
	}
}

// TestCosts: GET /api/v1/costs sums the estimates of the jobs that ended in [from, to), by
// tenant, namespace or a label; a member, and a tenant's admin, see only their own tenant's,
// whatever they ask, and the operator every tenant's.
func TestCosts(t *testing.T) {
	st, keys, js := limitStack(t,
		tenancy.Tenant{Name: "a", Namespaces: []string{"team-a", "team-a2"}},
		tenancy.Tenant{Name: "b", Namespaces: []string{"team-b"}},
		tenancy.Tenant{Name: "boss", Namespaces: []string{"ops"}, Role: tenancy.RoleAdmin, Operator: true},
		tenancy.Tenant{Name: "lead", Namespaces: []string{"team-l"}, Role: tenancy.RoleAdmin},
	)
	day := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	endedJob(t, js, "job-a1", "a", "team-a", map[string]string{"team": "vision"}, day, 1.25)
	endedJob(t, js, "job-a2", "a", "team-a2", map[string]string{"team": "nlp"}, day.Add(time.Hour), 0.5)
	endedJob(t, js, "job-a3", "a", "team-a", nil, day.Add(2*time.Hour), -1)          // no estimate
	endedJob(t, js, "job-a-late", "a", "team-a", nil, day.Add(10*24*time.Hour), 100) // after to
	endedJob(t, js, "job-b1", "b", "team-b", map[string]string{"team": "vision"}, day, 7)

	window := "&from=2026-11-01T00:00:00Z&to=2026-11-20T00:00:00Z"
	for _, tt := range []struct{ caller, query, want string }{
		{"a", "group_by=tenant", `[{"incomplete_jobs":1,"jobs":3,"key":"a","total":1.75}]`},
		{"a", "group_by=namespace", `[{"incomplete_jobs":1,"jobs":2,"key":"team-a","total":1.25},{"incomplete_jobs":0,"jobs":1,"key":"team-a2","total":0.5}]`},
		{"a", "group_by=label:team", `[{"incomplete_jobs":1,"jobs":1,"key":"","total":0},{"incomplete_jobs":0,"jobs":1,"key":"nlp","total":0.5},{"incomplete_jobs":0,"jobs":1,"key":"vision","total":1.25}]`},
		{"b", "group_by=tenant", `[{"incomplete_jobs":0,"jobs":1,"key":"b","total":7}]`},
		{"boss", "group_by=tenant", `[{"incomplete_jobs":1,"jobs":3,"key":"a","total":1.75},{"incomplete_jobs":0,"jobs":1,"key":"b","total":7}]`},
		// A tenant's admin is no operator: other tenants' names, namespaces, label values and
		// spend stay theirs, whatever it groups by.
		{"lead", "group_by=tenant", `[]`},
		{"lead", "group_by=namespace", `[]`},
		{"lead", "group_by=label:team", `[]`},
		// A day is the UTC date each job ended: a1 and a2 on the 10th, a3 too, late after to.
		{"a", "group_by=day", `[{"incomplete_jobs":1,"jobs":3,"key":"2026-11-10","total":1.75}]`},
		// b's label values are its own: a asking for the same label sees only a's jobs (above).
		{"b", "group_by=label:team", `[{"incomplete_jobs":0,"jobs":1,"key":"vision","total":7}]`},
	} {
		status, out := st.do(t, 0, "GET", "/api/v1/costs?"+tt.query+window, keys[tt.caller], "", "", nil)
		if status != 200 || out["currency"] != "USD" || out["truncated"] != false {
			t.Fatalf("GET /api/v1/costs?%s as %s = %d %v", tt.query, tt.caller, status, out)
		}
		if got := mustJSON(out["groups"]); got != tt.want {
			t.Errorf("GET /api/v1/costs?%s as %s: groups = %s, want %s", tt.query, tt.caller, got, tt.want)
		}
	}
	// The late job counts once to is past its end; from is included, to is not.
	status, out := st.do(t, 0, "GET", "/api/v1/costs?from=2026-11-10T12:00:00Z&to="+url.QueryEscape(day.Add(10*24*time.Hour).Format(time.RFC3339)), keys["a"], "", "", nil)
	if status != 200 || fmt.Sprint(out["total"]) != "1.75" {
		t.Errorf("GET /api/v1/costs from a1's end to the late job's = %d %v, want a1, a2 and a3: 1.75", status, out)
	}
}

// TestCostsBadParams: each bad parameter is a 400 naming it.
func TestCostsBadParams(t *testing.T) {
	st, keys, _ := limitStack(t, tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}})
	for _, tt := range []struct{ query, field string }{
		{"group_by=region", "group_by"},
		{"group_by=label:", "group_by"},
		{"group_by=label:" + strings.Repeat("k", 400), "group_by"},
		{"from=yesterday", "from"},
		{"to=2026-13-01T00:00:00Z", "to"},
		{"from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z", "from"},
		{"from=2025-01-01T00:00:00Z&to=2026-11-01T00:00:00Z", "from"},
	} {
		status, out := st.do(t, 0, "GET", "/api/v1/costs?"+tt.query, keys["a"], "", "", nil)
		if status != 400 || !strings.Contains(fmt.Sprint(out), tt.field) {
			t.Errorf("GET /api/v1/costs?%s = %d %v, want 400 naming %s", tt.query, status, out, tt.field)
		}
	}
}

// TestCostsOfArraysAndWorkflows: an array's children and a workflow's jobs, listed under their
// parent rather than among the namespace's jobs, are counted all the same, and group_by=group
// sums each array or workflow (an array inside a workflow counting toward the workflow).
func TestCostsOfArraysAndWorkflows(t *testing.T) {
	st, keys, js := limitStack(t, tenancy.Tenant{Name: "a", Namespaces: []string{"team-a"}})
	ctx := context.Background()
	day := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	endedJob(t, js, "job-alone", "a", "team-a", nil, day, 1)
	group := func(id string, array *jobs.Array, workflow *jobs.Workflow, parent string) {
		p := jobs.New(id, "a", "team-a", "us-east-1", jobs.DefaultPriority, nil, nil, day.Add(-time.Hour))
		p.Array, p.Workflow, p.Parent, p.Step = array, workflow, parent, id
		p.Status = jobs.StatusRunning
		if _, _, err := js.Create(ctx, p, outbox.Event{}, nil, day); err != nil {
			t.Fatal(err)
		}
	}
	child := func(id, parent string, index *int, cost float64) {
		endedJob(t, js, id, "a", "team-a", nil, day, cost)
		j, err := js.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := js.Purge(ctx, j); err != nil {
			t.Fatal(err)
		}
		j.Parent, j.ArrayIndex, j.Step = parent, index, id
		if _, _, err := js.Create(ctx, j, outbox.Event{}, nil, day); err != nil {
			t.Fatal(err)
		}
	}
	group("wf-1", nil, &jobs.Workflow{Name: "w", Steps: []jobs.Step{{Name: "s1", Job: "job-s1"}, {Name: "arr", Job: "job-arr"}}}, "")
	child("job-s1", "wf-1", nil, 2)
	group("job-arr", &jobs.Array{Size: 2, Parallelism: 2}, nil, "wf-1")
	zero, one := 0, 1
	child("job-arr-0", "job-arr", &zero, 4)
	child("job-arr-1", "job-arr", &one, 8)

	window := "&from=2026-11-01T00:00:00Z&to=2026-11-20T00:00:00Z"
	for query, want := range map[string]string{
		"group_by=tenant": `[{"incomplete_jobs":0,"jobs":4,"key":"a","total":15}]`,
		"group_by=group":  `[{"incomplete_jobs":0,"jobs":1,"key":"job-alone","total":1},{"incomplete_jobs":0,"jobs":3,"key":"wf-1","total":14}]`,
	} {
		status, out := st.do(t, 0, "GET", "/api/v1/costs?"+query+window, keys["a"], "", "", nil)
		if got := mustJSON(out["groups"]); status != 200 || got != want {
			t.Errorf("GET /api/v1/costs?%s = %d %s, want %s", query, status, got, want)
		}
	}
}
