package httpapi_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A job's demand is worked out at submission and shown wherever the job is: the submission's
// answer, GET, the listing, a retry's new job; and dry_run and validate show what they would
// submit.
func TestDemandShown(t *testing.T) {
	st := newStack(t)
	job := restrictedJob(func(pod map[string]any) {
		container(pod)["resources"] = map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "32Mi"}}
	})
	job["spec"].(map[string]any)["parallelism"] = 200
	want := map[string]any{"cpu": "20", "memory": "6400Mi", "pods": "200"}
	body := mustJSON(map[string]any{"manifests": []any{job}, "namespace": "team-a"})
	demandOf := func(v any) any {
		m, _ := v.(map[string]any)
		return m["demand"]
	}

	dryRun := mustJSON(map[string]any{"manifests": []any{job}, "namespace": "team-a", "dry_run": true})
	for _, call := range []struct{ route, body string }{{"/api/v1/manifests/validate", body}, {"/api/v1/manifests", dryRun}} {
		status, out := st.do(t, 0, "POST", call.route, st.member, "application/json", call.body, nil)
		if diff := cmp.Diff(want, demandOf(out)); status != 200 || diff != "" {
			t.Errorf("POST %s %s = %d %v; demand -want +got\n%s", call.route, call.body, status, out, diff)
		}
	}
	status, out := st.do(t, 0, "POST", "/api/v1/manifests", st.member, "application/json", body, nil)
	if diff := cmp.Diff(want, demandOf(out["job"])); status != 202 || diff != "" {
		t.Fatalf("POST /api/v1/manifests = %d %v; demand -want +got\n%s", status, out, diff)
	}
	id := out["job"].(map[string]any)["id"].(string)
	if _, got := st.do(t, 1, "GET", "/api/v1/jobs/"+id, st.member, "", "", nil); !cmp.Equal(want, demandOf(got)) {
		t.Errorf("GET the job: demand %v, want %v", demandOf(got), want)
	}
	_, list := st.do(t, 1, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if items, _ := list["items"].([]any); len(items) != 1 || !cmp.Equal(want, demandOf(items[0])) {
		t.Errorf("the listing = %v, want the one job with demand %v", list, want)
	}
	status, out = st.do(t, 0, "POST", "/api/v1/jobs/"+id+"/retry", st.member, "", "", nil)
	if status != 202 || !cmp.Equal(want, demandOf(out["job"])) {
		t.Errorf("retry = %d %v, want a new job with demand %v", status, out, want)
	}

	// A container that sets nothing is counted at the LimitRange's defaults; a ConfigMap alone
	// runs no pods and has no demand.
	bare := mustJSON(map[string]any{"manifests": []any{restrictedJob(nil)}, "namespace": "team-a"})
	if _, out := st.do(t, 0, "POST", "/api/v1/manifests/validate", st.member, "application/json", bare, nil); !cmp.Equal(map[string]any{"cpu": "100m", "memory": "256Mi", "pods": "1"}, demandOf(out)) {
		t.Errorf("validate a Job that sets no resources: %v, want the defaults' demand", out)
	}
	cm := mustJSON(map[string]any{"manifests": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}, "namespace": "team-a"})
	if _, out := st.do(t, 0, "POST", "/api/v1/manifests", st.member, "application/json", cm, nil); demandOf(out["job"]) != nil {
		t.Errorf("a ConfigMap's job = %v, want no demand", out)
	}
}

// A CronJob whose runs may overlap is refused where it is submitted, naming the field.
func TestDemandCronJobConcurrency(t *testing.T) {
	st := newStack(t)
	job := restrictedJob(nil)
	cron := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "nightly"},
		"spec": map[string]any{"schedule": "0 3 * * *", "concurrencyPolicy": "Allow", "jobTemplate": map[string]any{"spec": job["spec"]}}}
	status, out := st.do(t, 0, "POST", "/api/v1/manifests", st.member, "application/json", mustJSON(map[string]any{"manifests": []any{cron}, "namespace": "team-a"}), nil)
	if status != 422 || out["error"] != "policy_violation" || !slices.Contains(violationFields(out), "spec.concurrencyPolicy") {
		b, _ := json.Marshal(out)
		t.Errorf("a CronJob with concurrencyPolicy Allow = %d %s, want 422 naming spec.concurrencyPolicy", status, b)
	}
}
