package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSubmitDependsOn: a job that depends on jobs not ended is blocked on them; one whose
// dependency ended otherwise is stored cancelled dependency_not_met; a dependency cancelled
// through the API releases its dependents at once, down the graph; and a job of another tenant,
// or none, is a 404 naming it, never a job blocked for ever.
func TestSubmitDependsOn(t *testing.T) {
	st := newStack(t)
	submit := func(key, ns string, deps ...map[string]any) (int, map[string]any) {
		t.Helper()
		body := map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": ns}
		if deps != nil {
			body["depends_on"] = deps
		}
		return st.do(t, 0, "POST", "/api/v1/jobs", key, "application/json", mustJSON(body), nil)
	}
	job := func(status int, out map[string]any) map[string]any {
		t.Helper()
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs = %d %v, want 202", status, out)
		}
		return out["job"].(map[string]any)
	}
	get := func(id string) map[string]any {
		t.Helper()
		status, out := st.do(t, 0, "GET", "/api/v1/jobs/"+id, st.member, "", "", nil)
		if status != 200 {
			t.Fatalf("GET /api/v1/jobs/%s = %d %v", id, status, out)
		}
		return out
	}
	lastReason := func(j map[string]any) string {
		h := j["status_history"].([]any)
		return fmt.Sprint(h[len(h)-1].(map[string]any)["reason"])
	}

	a := job(submit(st.member, "team-a"))
	aID := fmt.Sprint(a["id"])
	b := job(submit(st.member, "team-a", map[string]any{"job": aID}))
	if b["status"] != "blocked" || b["pending_reason"] != "waiting_for_dependencies" || fmt.Sprint(b["waiting_on"]) != "["+aID+"]" {
		t.Errorf("a job on a queued one = %v, %v, waiting on %v; want blocked waiting_for_dependencies on %s", b["status"], b["pending_reason"], b["waiting_on"], aID)
	}
	if deps := fmt.Sprint(b["depends_on"]); !strings.Contains(deps, "on:succeeded") {
		t.Errorf("depends_on = %s, want the default condition filled in", deps)
	}
	c := job(submit(st.member, "team-b", map[string]any{"job": fmt.Sprint(b["id"]), "on": "succeeded"}))
	d := job(submit(st.member, "team-a", map[string]any{"job": aID, "on": "ended"}))
	status, listed := st.do(t, 0, "GET", "/api/v1/jobs?status=blocked", st.member, "", "", nil)
	if items, _ := listed["items"].([]any); status != 200 || len(items) != 3 {
		t.Errorf("GET ?status=blocked = %d with %d jobs, want 200 and 3", status, len(items))
	}

	// Hostile: another tenant names ml's job, or a job that is not there.
	for _, id := range []string{aID, "job-nowhere"} {
		status, out := submit(st.rival, "team-z", map[string]any{"job": id})
		if status != 404 || !strings.Contains(fmt.Sprint(out["detail"]), id) {
			t.Errorf("rival depending on %s = %d %v, want 404 naming it", id, status, out)
		}
	}
	if j := get(aID); j["status"] != "queued" {
		t.Errorf("after the rival's tries %s is %v, want queued and untouched", aID, j["status"])
	}
	if status, _ := st.do(t, 0, "DELETE", "/api/v1/jobs/"+fmt.Sprint(b["id"]), st.rival, "", "", nil); status != 404 {
		t.Errorf("rival cancelling ml's blocked job = %d, want 404", status)
	}

	// Bad requests name the field.
	many := make([]map[string]any, 51)
	for i := range many {
		many[i] = map[string]any{"job": fmt.Sprintf("job-%d", i)}
	}
	for name, tc := range map[string]struct {
		deps  []map[string]any
		field string
	}{
		"unknown condition": {[]map[string]any{{"job": aID, "on": "whenever"}}, "depends_on[0].on"},
		"named twice":       {[]map[string]any{{"job": aID}, {"job": aID}}, "depends_on[1].job"},
		"no id":             {[]map[string]any{{"on": "ended"}}, "depends_on[0].job"},
		"n_to_n, no array":  {[]map[string]any{{"job": aID, "mode": "n_to_n"}}, "depends_on[0].mode"},
		"unknown mode":      {[]map[string]any{{"job": aID, "mode": "zip"}}, "depends_on[0].mode"},
		"51 of them":        {many, "depends_on"},
	} {
		status, out := submit(st.member, "team-a", tc.deps...)
		fields, _ := out["fields"].([]any)
		if status != 400 || !slices.ContainsFunc(fields, func(f any) bool { return f.(map[string]any)["field"] == tc.field }) {
			t.Errorf("%s: = %d %v, want 400 naming %s", name, status, out, tc.field)
		}
	}

	// Cancelling a cancels b (it waited for a's success), then c (for b's), and queues d.
	if status, out := st.do(t, 0, "DELETE", "/api/v1/jobs/"+aID, st.member, "", "", nil); status != 200 {
		t.Fatalf("DELETE %s = %d %v", aID, status, out)
	}
	for id, want := range map[string]string{fmt.Sprint(b["id"]): aID + " cancelled", fmt.Sprint(c["id"]): fmt.Sprint(b["id"]) + " cancelled"} {
		j := get(id)
		if j["status"] != "cancelled" || !strings.HasPrefix(lastReason(j), "dependency_not_met: "+want) {
			t.Errorf("%s after the cancel: %v, %q; want cancelled dependency_not_met: %s…", id, j["status"], lastReason(j), want)
		}
	}
	if j := get(fmt.Sprint(d["id"])); j["status"] != "queued" || j["waiting_on"] != nil {
		t.Errorf("the job waiting for any end of %s: %v waiting on %v, want queued", aID, j["status"], j["waiting_on"])
	}

	// Submitted after its dependency ended otherwise: stored cancelled, with why.
	late := job(submit(st.member, "team-a", map[string]any{"job": aID, "on": "succeeded"}))
	if late["status"] != "cancelled" || !strings.HasPrefix(lastReason(late), "dependency_not_met: "+aID) {
		t.Errorf("a job on a cancelled one, for its success = %v, %q; want cancelled dependency_not_met", late["status"], lastReason(late))
	}
	// And after it ended as asked: queued at once.
	if ok := job(submit(st.member, "team-a", map[string]any{"job": aID, "on": "ended"})); ok["status"] != "queued" {
		t.Errorf("a job on a cancelled one, for any end = %v, want queued", ok["status"])
	}
}
