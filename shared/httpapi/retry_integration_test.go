package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSubmitRetry: a retry policy is kept on the job as given, from a submission or its
// template (a job's own policy first); an out-of-bounds one, which a hostile tenant could send to
// retry a job forever or hold it queued for days, is a 400 naming the field, on every route.
func TestSubmitRetry(t *testing.T) {
	st := newStack(t)
	policy := map[string]any{"attempts": 2, "on": []string{"spot_interruption", "exit:3"}, "backoff": "30s"}
	body := map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "retry": policy}
	status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", mustJSON(body), nil)
	if status != 202 {
		t.Fatalf("POST /api/v1/jobs with a retry policy = %d %v, want 202", status, out)
	}
	job := out["job"].(map[string]any)
	retry, _ := job["retry"].(map[string]any)
	if fmt.Sprint(retry["attempts"]) != "2" || fmt.Sprint(retry["on"]) != "[spot_interruption exit:3]" || retry["backoff"] != "30s" || fmt.Sprint(job["attempt"]) != "1" {
		t.Errorf("the job's retry = %v, attempt %v; want the policy as given, attempt 1", retry, job["attempt"])
	}
	id := fmt.Sprint(job["id"])
	if status, out = st.do(t, 0, "GET", "/api/v1/jobs/"+id, st.member, "", "", nil); status != 200 || out["retry"] == nil {
		t.Errorf("GET /api/v1/jobs/%s = %d, retry %v; want the policy stored", id, status, out["retry"])
	}

	bad := []struct {
		name  string
		retry any
		field string
	}{
		{"no attempts", map[string]any{"on": []string{"pod_failure"}}, "retry.attempts"},
		{"attempts beyond the bound", map[string]any{"attempts": 1000000, "on": []string{"pod_failure"}}, "retry.attempts"},
		{"negative attempts", map[string]any{"attempts": -1, "on": []string{"pod_failure"}}, "retry.attempts"},
		{"nothing to retry", map[string]any{"attempts": 3}, "retry.on"},
		{"unknown cause", map[string]any{"attempts": 3, "on": []string{"always"}}, "retry.on[0]"},
		{"exit 0", map[string]any{"attempts": 3, "on": []string{"pod_failure", "exit:0"}}, "retry.on[1]"},
		{"backoff of a year", map[string]any{"attempts": 3, "on": []string{"pod_failure"}, "backoff": "8760h"}, "retry.backoff"},
		{"backoff not a duration", map[string]any{"attempts": 3, "on": []string{"pod_failure"}, "backoff": "later"}, "retry.backoff"},
		{"unknown field", map[string]any{"attempts": 3, "on": []string{"pod_failure"}, "forever": true}, "forever"},
		{"wrong type", map[string]any{"attempts": "3", "on": []string{"pod_failure"}}, "retry.attempts"},
	}
	for _, tc := range bad {
		for _, route := range []struct{ path, body string }{
			{"/api/v1/jobs", mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "retry": tc.retry})},
			{"/api/v1/templates", mustJSON(map[string]any{"name": "bad-retry", "manifest": restrictedJob(nil), "retry": tc.retry})},
		} {
			status, out := st.do(t, 0, "POST", route.path, st.member, "application/json", route.body, nil)
			fields, _ := out["fields"].([]any)
			// A wrong type is named by its path through the request's Go types (…retry.attempts).
			if status != 400 || !slices.ContainsFunc(fields, func(f any) bool { return strings.HasSuffix(fmt.Sprint(f.(map[string]any)["field"]), tc.field) }) {
				t.Errorf("%s: POST %s = %d %v, want 400 naming %s", tc.name, route.path, status, out, tc.field)
			}
		}
	}

	// A template's policy is its jobs' unless a job names its own.
	create := mustJSON(map[string]any{"name": "retried", "manifest": restrictedJob(nil), "retry": map[string]any{"attempts": 3, "on": []string{"node_failure"}}})
	if status, out := st.do(t, 0, "POST", "/api/v1/templates", st.member, "application/json", create, nil); status != 201 {
		t.Fatalf("POST /api/v1/templates with a retry policy = %d %v, want 201", status, out)
	}
	for _, tc := range []struct {
		own  any
		want string
	}{{nil, "[node_failure]"}, {map[string]any{"attempts": 2, "on": []string{"pod_failure"}}, "[pod_failure]"}} {
		run := map[string]any{"name": "retried-1", "namespace": "team-a", "region": "us-east-1"}
		if tc.own != nil {
			run["retry"] = tc.own
		}
		status, out := st.do(t, 0, "POST", "/api/v1/templates/retried/jobs", st.member, "application/json", mustJSON(run), nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/templates/retried/jobs = %d %v, want 202", status, out)
		}
		retry, _ := out["job"].(map[string]any)["retry"].(map[string]any)
		if fmt.Sprint(retry["on"]) != tc.want {
			t.Errorf("a template job with its own policy %v: retry %v, want on %s", tc.own, retry, tc.want)
		}
	}
}
