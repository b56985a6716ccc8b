package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestCheckpointPrefixIsTheJobsOwn: a job submitted gets the checkpoint prefix of its own tenant
// and id, shown on it; a hostile submission naming another tenant's prefix is refused, naming the
// field, and no job is made.
func TestCheckpointPrefixIsTheJobsOwn(t *testing.T) {
	st := newStack(t)
	status, out := st.do(t, 0, "POST", "/api/v1/manifests", st.member, "application/json",
		mustJSON(map[string]any{"manifests": []any{restrictedJob(nil)}, "namespace": "team-a"}), nil)
	if status != 202 {
		t.Fatalf("POST /api/v1/manifests = %d %v", status, out)
	}
	job := out["job"].(map[string]any)
	if want := "s3://ckpt/ml/" + job["id"].(string) + "/"; job["checkpoint_uri"] != want {
		t.Errorf("checkpoint_uri = %v, want %s", job["checkpoint_uri"], want)
	}
	if _, got := st.do(t, 1, "GET", "/api/v1/jobs/"+job["id"].(string), st.member, "", "", nil); got["checkpoint_uri"] != job["checkpoint_uri"] {
		t.Errorf("GET the job: checkpoint_uri %v, want %v", got["checkpoint_uri"], job["checkpoint_uri"])
	}
	for _, route := range []string{"/api/v1/manifests", "/api/v1/jobs"} {
		body := map[string]any{"manifests": []any{restrictedJob(nil)}, "namespace": "team-a", "checkpoint_uri": "s3://ckpt/watch/job-theirs/"}
		if route == "/api/v1/jobs" {
			body = map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "checkpoint_uri": "s3://ckpt/watch/job-theirs/"}
		}
		status, out := st.do(t, 0, "POST", route, st.member, "application/json", mustJSON(body), nil)
		if status != 400 || !strings.Contains(mustJSON(out), "checkpoint_uri") {
			t.Errorf("POST %s naming another tenant's prefix = %d %v; want 400 naming checkpoint_uri", route, status, out)
		}
	}
	_, list := st.do(t, 1, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if items, _ := list["items"].([]any); len(items) != 1 {
		t.Errorf("jobs after the refused submissions: %d, want the first alone", len(items))
	}
}

// TestMaxPreemptions: max_preemptions is kept and shown when 0–100, and a 400 naming the field
// otherwise, on each route that makes one job.
func TestMaxPreemptions(t *testing.T) {
	st := newStack(t)
	for _, n := range []int{-1, 101} {
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json",
			mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "region": "us-east-1", "max_preemptions": n}), nil)
		if status != 400 || !strings.Contains(mustJSON(out), "max_preemptions") {
			t.Errorf("max_preemptions %d = %d %v; want 400 naming max_preemptions", n, status, out)
		}
	}
	status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json",
		mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "region": "us-east-1", "max_preemptions": 0}), nil)
	job, _ := out["job"].(map[string]any)
	if status != 202 || fmt.Sprint(job["max_preemptions"]) != "0" {
		t.Fatalf("max_preemptions 0 = %d %v; want 202 showing it", status, out)
	}
	if _, got := st.do(t, 1, "GET", "/api/v1/jobs/"+job["id"].(string), st.member, "", "", nil); fmt.Sprint(got["max_preemptions"]) != "0" {
		t.Errorf("GET the job: max_preemptions %v, want 0", got["max_preemptions"])
	}
}

// TestRetryRulesSubmitted: a retry policy of rules is kept and shown; a malformed rule is a 400
// naming its field.
func TestRetryRulesSubmitted(t *testing.T) {
	st := newStack(t)
	submit := func(retry map[string]any) (int, map[string]any) {
		return st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json",
			mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "region": "us-east-1", "retry": retry}), nil)
	}
	status, out := submit(map[string]any{"attempts": 3, "rules": []any{map[string]any{"on": []any{"OOMKilled"}, "action": "maybe"}}})
	if status != 400 || !strings.Contains(mustJSON(out), "retry.rules[0].action") {
		t.Errorf("a rule whose action is maybe = %d %v; want 400 naming retry.rules[0].action", status, out)
	}
	rules := []any{map[string]any{"on": []any{"exit:3"}, "action": "fail"}, map[string]any{"on": []any{"OOMKilled"}, "action": "retry", "memory_factor": 1.5}}
	status, out = submit(map[string]any{"attempts": 3, "rules": rules})
	job, _ := out["job"].(map[string]any)
	got, _ := job["retry"].(map[string]any)
	if status != 202 || mustJSON(got["rules"]) != mustJSON(rules) {
		t.Errorf("a policy of rules = %d %v; want 202 showing the rules %v", status, out, rules)
	}
}

// TestOnRegionLost: on_region_lost requeue is kept and shown; anything else is a 400 naming the
// field.
func TestOnRegionLost(t *testing.T) {
	st := newStack(t)
	status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json",
		mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "region": "us-east-1", "on_region_lost": "retry"}), nil)
	if status != 400 || !strings.Contains(mustJSON(out), "on_region_lost") {
		t.Errorf("on_region_lost retry = %d %v; want 400 naming on_region_lost", status, out)
	}
	status, out = st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json",
		mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "region": "us-east-1", "on_region_lost": "requeue"}), nil)
	job, _ := out["job"].(map[string]any)
	if status != 202 || job["on_region_lost"] != "requeue" {
		t.Fatalf("on_region_lost requeue = %d %v; want 202 showing it", status, out)
	}
	if _, got := st.do(t, 1, "GET", "/api/v1/jobs/"+job["id"].(string), st.member, "", "", nil); got["on_region_lost"] != "requeue" {
		t.Errorf("GET the job: on_region_lost %v, want requeue", got["on_region_lost"])
	}
}

// TestWhatIfRefusals: what_if is true or false, a 400 naming it otherwise; a what-if is checked as
// a submission is (a refusal is the same 4xx); an API without the admission wired says it does
// not serve what-ifs (503), and stores nothing either way.
func TestWhatIfRefusals(t *testing.T) {
	st := newStack(t)
	body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "region": "us-east-1"})
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs?what_if=maybe", st.member, "application/json", body, nil); status != 400 || !strings.Contains(mustJSON(out), "what_if") {
		t.Errorf("what_if=maybe = %d %v; want 400 naming what_if", status, out)
	}
	bad := mustJSON(map[string]any{"manifest": restrictedJob(nil), "namespace": "team-a", "region": "us-east-1", "priority": 101})
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs?what_if=true", st.member, "application/json", bad, nil); status != 400 || !strings.Contains(mustJSON(out), "priority") {
		t.Errorf("a what-if of a job with priority 101 = %d %v; want the submission's 400 naming priority", status, out)
	}
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs?what_if=true", st.member, "application/json", body, nil); status != 503 {
		t.Errorf("a what-if where the admission is not wired = %d %v; want 503", status, out)
	}
	if status, out := st.do(t, 0, "GET", "/api/v1/jobs", st.member, "", "", nil); status != 200 || len(out["items"].([]any)) != 0 {
		t.Errorf("jobs after what-ifs = %d %v; want none stored", status, out)
	}
}
