package httpapi_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// podIn wraps a pod spec in each of the four kinds a tenant most often submits, and says where
// the pod spec sits in it.
var podIn = []struct {
	kind     string
	specPath string
	wrap     func(pod map[string]any) map[string]any
}{
	{"Pod", "spec", func(pod map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": pod}
	}},
	{"Job", "spec.template.spec", func(pod map[string]any) map[string]any {
		return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"},
			"spec": map[string]any{"template": map[string]any{"spec": pod}}}
	}},
	{"CronJob", "spec.jobTemplate.spec.template.spec", func(pod map[string]any) map[string]any {
		return map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "cj"},
			"spec": map[string]any{"schedule": "0 3 * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": pod}}}}}
	}},
	{"Deployment", "spec.template.spec", func(pod map[string]any) map[string]any {
		pod["restartPolicy"] = "Always"
		labels := map[string]any{"app": "web"}
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"spec": map[string]any{"selector": map[string]any{"matchLabels": labels}, "template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": pod}}}
	}},
}

// TestPodFieldRefusals: each pod field that reaches past the tenant's namespace answers 422
// naming it, in a Pod and in the pod templates of a Job, a CronJob and a Deployment, and nothing
// is stored.
func TestPodFieldRefusals(t *testing.T) {
	st := newStack(t)
	fields := []struct {
		name  string
		edit  func(pod map[string]any)
		field string
	}{
		{"nodeName", func(pod map[string]any) { pod["nodeName"] = "hosting-1" }, ".nodeName"},
		{"toleration", func(pod map[string]any) {
			pod["tolerations"] = []any{map[string]any{"key": "tidegate.io/hosting", "operator": "Exists"}}
		}, ".tolerations[0].key"},
		{"priorityClassName", func(pod map[string]any) { pod["priorityClassName"] = "system-node-critical" }, ".priorityClassName"},
		{"runtimeClassName", func(pod map[string]any) { pod["runtimeClassName"] = "gvisor" }, ".runtimeClassName"},
		{"serviceAccountName", func(pod map[string]any) { pod["serviceAccountName"] = "tidegate" }, ".serviceAccountName"},
		{"automountServiceAccountToken", func(pod map[string]any) { pod["automountServiceAccountToken"] = true }, ".automountServiceAccountToken"},
		{"emptyDir without sizeLimit", func(pod map[string]any) {
			pod["volumes"] = []any{map[string]any{"name": "scratch", "emptyDir": map[string]any{}}}
		}, ".volumes[0].emptyDir.sizeLimit"},
		{"ephemeral storage over the cap", func(pod map[string]any) {
			container(pod)["resources"] = map[string]any{"limits": map[string]any{"ephemeral-storage": "500Gi"}}
		}, ".containers[0].resources"},
		{"ephemeral volume binding a volume by name", func(pod map[string]any) {
			pod["volumes"] = []any{map[string]any{"name": "data", "ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{"spec": map[string]any{
				"volumeName": "team-b-data", "accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}}}}
		}, ".volumes[0].ephemeral.volumeClaimTemplate.spec.volumeName"},
	}
	for _, k := range podIn {
		for _, f := range fields {
			t.Run(k.kind+"/"+f.name, func(t *testing.T) {
				pod := restrictedJob(f.edit)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				body := mustJSON(map[string]any{"manifest": k.wrap(pod), "region": "us-east-1", "namespace": "team-a"})
				status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", body, nil)
				if status != 422 || out["error"] != "policy_violation" {
					t.Fatalf("POST /api/v1/jobs (%s with %s) = %d %v, want 422 policy_violation", k.kind, f.name, status, out)
				}
				want := []string{k.specPath + f.field}
				if diff := cmp.Diff(want, violationFields(out)); diff != "" {
					t.Errorf("POST /api/v1/jobs (%s with %s) violation fields (-want +got):\n%s\nbody: %v", k.kind, f.name, diff, out)
				}
			})
		}
	}
	status, out := st.do(t, 0, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if items, _ := out["items"].([]any); status != 200 || len(items) != 0 {
		t.Errorf("after only refusals, GET /api/v1/jobs = %d %v, want no jobs", status, out)
	}
	// The same pods without those fields are admitted, so each refusal above is the field's.
	for _, k := range podIn {
		pod := restrictedJob(nil)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		body := mustJSON(map[string]any{"manifests": []any{k.wrap(pod)}, "namespace": "team-a"})
		status, out := st.do(t, 0, "POST", "/api/v1/manifests/validate", st.member, "application/json", body, nil)
		if status != 200 || out["valid"] != true {
			t.Errorf("POST /api/v1/manifests/validate (%s without those fields) = %d %v, want 200 valid", k.kind, status, out)
		}
	}
}
