package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSubmitWorkflow: a workflow is stored at once, every job blocked on the steps it comes
// after and none let in before the whole graph is stored; the graph is checked (a cycle is a
// 422 naming it, an unknown step or a name given twice a 400 naming the field, a job's own
// problem named under its index); another tenant cannot read or cancel it; and a cancel cancels
// every job not ended.
func TestSubmitWorkflow(t *testing.T) {
	st := newStack(t)
	job := func(name string, after ...string) map[string]any {
		j := map[string]any{"name": name, "manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"}
		j["manifest"].(map[string]any)["metadata"].(map[string]any)["name"] = name
		if after != nil {
			j["after"] = after
		}
		return j
	}
	post := func(key string, body map[string]any) (int, map[string]any) {
		t.Helper()
		return st.do(t, 0, "POST", "/api/v1/workflows", key, "application/json", mustJSON(body), nil)
	}
	status, wf := post(st.member, map[string]any{"name": "pipeline", "jobs": []any{
		job("a"), job("b", "a"), job("c", "a"), job("d", "b", "c"),
	}})
	if status != 202 || wf["status"] != "running" {
		t.Fatalf("POST /api/v1/workflows = %d %v, want 202, running", status, wf)
	}
	id := fmt.Sprint(wf["id"])
	states := map[string]string{}
	for _, j := range wf["jobs"].([]any) {
		m := j.(map[string]any)
		states[fmt.Sprint(m["name"])] = fmt.Sprint(m["status"])
	}
	if want := map[string]string{"a": "queued", "b": "blocked", "c": "blocked", "d": "blocked"}; fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("the workflow's jobs = %v, want %v", states, want)
	}
	dID := fmt.Sprint(wf["jobs"].([]any)[3].(map[string]any)["id"])
	status, d := st.do(t, 0, "GET", "/api/v1/jobs/"+dID, st.member, "", "", nil)
	if waiting := fmt.Sprint(d["waiting_on"]); status != 200 || strings.Count(waiting, "job-") != 2 || d["parent"] != id || d["step"] != "d" {
		t.Errorf("job d = %d, waiting on %s, parent %v, step %v; want blocked on b and c, of %s", status, waiting, d["parent"], d["step"], id)
	}
	if status, ns := st.do(t, 0, "GET", "/api/v1/jobs?namespace=team-a", st.member, "", "", nil); status != 200 || len(ns["items"].([]any)) != 0 {
		t.Errorf("the namespace's job listing = %d with %d jobs, want a workflow's jobs listed under it, not there", status, len(ns["items"].([]any)))
	}

	for name, tc := range map[string]struct {
		jobs  []any
		code  int
		field string
		in    string
	}{
		"a cycle":       {[]any{job("x", "z"), job("y", "x"), job("z", "y")}, 422, "", "x → z → y → x"},
		"unknown after": {[]any{job("x", "nowhere")}, 400, "jobs[0].after[0]", ""},
		"itself":        {[]any{job("x", "x")}, 400, "jobs[0].after[0]", ""},
		"name twice":    {[]any{job("x"), job("x")}, 400, "jobs[1].name", ""},
		"a job's own":   {[]any{job("x"), map[string]any{"name": "y", "manifest": restrictedJob(nil), "priority": 500}}, 400, "jobs[1].priority", ""},
		"no jobs":       {[]any{}, 400, "jobs", ""},
		"over 500 jobs": {manyJobs(501, job), 400, "jobs", ""},
		"bad step name": {[]any{job("Not A Label")}, 400, "jobs[0].name", ""},
		"another's dep": {[]any{map[string]any{"name": "x", "manifest": restrictedJob(nil), "namespace": "team-a", "region": "us-east-1", "depends_on": []any{map[string]any{"job": "job-elsewhere"}}}}, 404, "jobs[0].depends_on[0].job", ""},
	} {
		status, out := post(st.member, map[string]any{"name": "bad", "jobs": tc.jobs})
		fields, _ := out["fields"].([]any)
		named := tc.field == "" || slices.ContainsFunc(fields, func(f any) bool { return f.(map[string]any)["field"] == tc.field })
		if status != tc.code || !named || !strings.Contains(fmt.Sprint(out["detail"]), tc.in) {
			t.Errorf("%s: = %d %v, want %d naming %q %q", name, status, out, tc.code, tc.field, tc.in)
		}
	}

	// A step may be a template of the tenant's, filled with its parameters.
	if status, out := st.do(t, 0, "POST", "/api/v1/templates", st.member, "application/json", mustJSON(map[string]any{"name": "step-tmpl", "manifest": restrictedJob(nil)}), nil); status != 201 {
		t.Fatalf("POST /api/v1/templates = %d %v", status, out)
	}
	status, templated := post(st.member, map[string]any{"name": "from-templates", "jobs": []any{
		map[string]any{"name": "first", "template": "step-tmpl", "namespace": "team-a", "region": "us-east-1"},
		job("second", "first"),
	}})
	if status != 202 {
		t.Fatalf("a workflow with a template step = %d %v, want 202", status, templated)
	}
	firstID := fmt.Sprint(templated["jobs"].([]any)[0].(map[string]any)["id"])
	if _, first := st.do(t, 0, "GET", "/api/v1/jobs/"+firstID, st.member, "", "", nil); first["template"] != "step-tmpl" || first["name"] != "first" {
		t.Errorf("the template step = template %v, name %v; want step-tmpl, first", first["template"], first["name"])
	}
	if status, out := post(st.member, map[string]any{"name": "no-such", "jobs": []any{map[string]any{"name": "x", "template": "nowhere", "namespace": "team-a", "region": "us-east-1"}}}); status != 404 || !strings.Contains(fmt.Sprint(out["detail"]), `job "x" (jobs[0])`) {
		t.Errorf("a step of a template that is not there = %d %v, want 404 naming the step", status, out)
	}

	// Listed among the tenant's workflows, newest first; never among another's.
	status, listed := st.do(t, 0, "GET", "/api/v1/workflows", st.member, "", "", nil)
	items, _ := listed["items"].([]any)
	if status != 200 || len(items) != 2 || items[0].(map[string]any)["name"] != "from-templates" || items[1].(map[string]any)["id"] != id || fmt.Sprint(items[1].(map[string]any)["jobs"]) != "4" {
		t.Errorf("GET /api/v1/workflows = %d %v, want from-templates then pipeline (4 jobs)", status, listed)
	}
	if status, listed := st.do(t, 0, "GET", "/api/v1/workflows", st.rival, "", "", nil); status != 200 || len(listed["items"].([]any)) != 0 {
		t.Errorf("rival's GET /api/v1/workflows = %d %v, want none", status, listed)
	}
	if status, _ := st.do(t, 0, "GET", "/api/v1/workflows?namespace=team-a", st.rival, "", "", nil); status != 403 {
		t.Errorf("rival listing ml's namespace's workflows = %d, want 403", status)
	}

	// Hostile: another tenant can neither read nor cancel it, nor list its jobs.
	for _, m := range []string{"GET", "DELETE"} {
		if status, _ := st.do(t, 0, m, "/api/v1/workflows/"+id, st.rival, "", "", nil); status != 404 {
			t.Errorf("rival %s the workflow = %d, want 404", m, status)
		}
	}
	if status, _ := st.do(t, 0, "GET", "/api/v1/jobs?parent="+id, st.rival, "", "", nil); status != 404 {
		t.Errorf("rival listing the workflow's jobs = %d, want 404", status)
	}
	if status, _ := st.do(t, 0, "GET", "/api/v1/workflows/"+dID, st.member, "", "", nil); status != 404 {
		t.Errorf("GET /api/v1/workflows/ of a job's id = %d, want 404", status)
	}

	status, cancelled := st.do(t, 0, "DELETE", "/api/v1/workflows/"+id, st.member, "", "", nil)
	if status != 200 || cancelled["status"] != "cancelled" {
		t.Fatalf("DELETE the workflow = %d %v, want 200, cancelled", status, cancelled)
	}
	for tries := 0; ; tries++ {
		_, got := st.do(t, 0, "GET", "/api/v1/workflows/"+id, st.member, "", "", nil)
		counts := got["counts"].(map[string]any)
		if fmt.Sprint(counts["cancelled"]) == "4" {
			break
		}
		if tries == 50 {
			t.Fatalf("the workflow's jobs after its cancel: %v, want all 4 cancelled", counts)
		}
		sleep()
	}
}

func manyJobs(n int, job func(string, ...string) map[string]any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = job(fmt.Sprintf("j%d", i))
	}
	return out
}

// sleep is a poll's pause.
func sleep() { time.Sleep(100 * time.Millisecond) }
