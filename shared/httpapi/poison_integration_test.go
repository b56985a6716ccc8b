package httpapi_test

import (
	"slices"
	"testing"
)

// TestPoisonManifestsRefused submits the two manifests the API server refuses but the policy used
// to admit, a container without an image and a GPU request without a limit, through every route
// that takes a manifest: each is a 422 naming the field, or invalid on validate and dry_run, and
// nothing is queued.
func TestPoisonManifestsRefused(t *testing.T) {
	st := newStack(t)
	poisons := []struct {
		name, field string
		edit        func(pod map[string]any)
	}{
		{"no image", "spec.template.spec.containers[0].image", func(pod map[string]any) { delete(container(pod), "image") }},
		{"empty image", "spec.template.spec.containers[0].image", func(pod map[string]any) { container(pod)["image"] = "" }},
		{"GPU request without a limit", "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]", func(pod map[string]any) {
			container(pod)["resources"] = map[string]any{"requests": map[string]any{"nvidia.com/gpu": 1}}
		}},
		{"GPU request below its limit", "spec.template.spec.containers[0].resources.requests[nvidia.com/gpu]", func(pod map[string]any) {
			container(pod)["resources"] = map[string]any{"requests": map[string]any{"nvidia.com/gpu": 1}, "limits": map[string]any{"nvidia.com/gpu": 2}}
		}},
	}
	for i, p := range poisons {
		t.Run(p.name, func(t *testing.T) {
			m := restrictedJob(p.edit)
			refused := func(route string, status int, out map[string]any) {
				t.Helper()
				if status != 422 || out["error"] != "policy_violation" || !slices.Contains(violationFields(out), p.field) {
					t.Errorf("POST %s = %d %v, want 422 policy_violation naming %s", route, status, out, p.field)
				}
			}
			status, out := st.do(t, 0, "POST", "/api/v1/manifests", st.member, "application/json", mustJSON(map[string]any{"manifests": []any{m}, "namespace": "team-a"}), nil)
			refused("/api/v1/manifests", status, out)
			status, out = st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", mustJSON(map[string]any{"manifest": m, "namespace": "team-a", "region": "us-east-1"}), nil)
			refused("/api/v1/jobs", status, out)
			for _, decide := range []struct {
				route  string
				dryRun bool
			}{{"/api/v1/manifests/validate", false}, {"/api/v1/manifests", true}} {
				body := mustJSON(map[string]any{"manifests": []any{m}, "namespace": "team-a", "dry_run": decide.dryRun})
				status, out = st.do(t, 0, "POST", decide.route, st.member, "application/json", body, nil)
				if status != 200 || out["valid"] != false || !slices.Contains(violationFields(out), p.field) {
					t.Errorf("POST %s %s = %d %v, want 200, not valid, naming %s", decide.route, body, status, out, p.field)
				}
			}
			// A template is checked when it runs: its filled manifest meets the same policy.
			name := "poison-" + string(rune('a'+i))
			create := mustJSON(map[string]any{"name": name, "manifest": m})
			if status, out := st.do(t, 0, "POST", "/api/v1/templates", st.member, "application/json", create, nil); status != 201 {
				t.Fatalf("POST /api/v1/templates = %d %v, want 201", status, out)
			}
			route := "/api/v1/templates/" + name + "/jobs"
			status, out = st.do(t, 0, "POST", route, st.member, "application/json", mustJSON(map[string]any{"name": "run-1", "namespace": "team-a", "region": "us-east-1"}), nil)
			refused(route, status, out)
		})
	}
	status, out := st.do(t, 0, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if items, _ := out["items"].([]any); status != 200 || len(items) != 0 {
		t.Errorf("GET /api/v1/jobs after the poison manifests = %d %v, want 200 and no jobs", status, out)
	}
}
