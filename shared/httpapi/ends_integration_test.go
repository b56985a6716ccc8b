package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNeverEndingBesideAJobRefused: a Deployment beside a Job in one submission answers 422
// policy_violation naming the Deployment's document and field and saying what to do, and so does
// a Pod left to Kubernetes' default restartPolicy beside a CronJob; nothing is stored. A
// Deployment alone is a long-running job, and is not refused.
func TestNeverEndingBesideAJobRefused(t *testing.T) {
	st := newStack(t)
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":20,` +
		`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{` +
		`"securityContext":{"runAsNonRoot":true,"runAsUser":1000,"seccompProfile":{"type":"RuntimeDefault"}},` +
		`"containers":[{"name":"web","image":"busybox:1.36","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}}}`
	job := mustJSON(restrictedJob(nil))
	status, out := st.do(t, 0, "POST", "/api/v1/manifests", st.member, "application/json",
		`{"manifests":[`+job+`,`+deployment+`],"namespace":"team-a","region":"us-east-1"}`, nil)
	if status != 422 || out["error"] != "policy_violation" {
		t.Fatalf("POST /api/v1/manifests (a Job and a Deployment) = %d %v, want 422 policy_violation", status, out)
	}
	vs, _ := out["violations"].([]any)
	if len(vs) != 1 {
		t.Fatalf("POST /api/v1/manifests (a Job and a Deployment) violations %v, want one", vs)
	}
	v := vs[0].(map[string]any)
	got := []string{fmt.Sprint(v["document"]), fmt.Sprint(v["kind"]), fmt.Sprint(v["name"]), fmt.Sprint(v["field"])}
	if diff := cmp.Diff([]string{"1", "Deployment", "web", "kind"}, got); diff != "" {
		t.Errorf("POST /api/v1/manifests (a Job and a Deployment) violation (-want +got):\n%s", diff)
	}
	if msg, _ := v["message"].(string); !strings.Contains(msg, "never ends") || !strings.Contains(msg, "job of its own") {
		t.Errorf("POST /api/v1/manifests (a Job and a Deployment) says %q; want it to say the Deployment never ends and to submit it as a job of its own", msg)
	}

	cronAndPod := `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
          containers:
          - {name: main, image: "busybox:1.36", securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: sidecar}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
  containers:
  - {name: main, image: "busybox:1.36", securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
`
	status, out = st.do(t, 0, "POST", "/api/v1/manifests?namespace=team-a&region=us-east-1", st.member, "application/yaml", cronAndPod, nil)
	if status != 422 || out["error"] != "policy_violation" {
		t.Fatalf("POST /api/v1/manifests (a CronJob and a Pod) = %d %v, want 422 policy_violation", status, out)
	}
	if diff := cmp.Diff([]string{"spec.restartPolicy"}, violationFields(out)); diff != "" {
		t.Errorf("POST /api/v1/manifests (a CronJob and a Pod) violation fields (-want +got):\n%s\nbody: %v", diff, out)
	}

	status, out = st.do(t, 0, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if status != 200 {
		t.Fatalf("GET /api/v1/jobs = %d %v", status, out)
	}
	if items, _ := out["items"].([]any); len(items) != 0 {
		t.Errorf("after two refused submissions GET /api/v1/jobs lists %d jobs, want none", len(items))
	}

	status, out = st.do(t, 0, "POST", "/api/v1/manifests", st.member, "application/json",
		`{"manifests":[`+deployment+`],"namespace":"team-a","region":"us-east-1"}`, nil)
	if status != 201 && status != 202 {
		t.Errorf("POST /api/v1/manifests (a Deployment alone) = %d %v, want it accepted as a long-running job", status, out)
	}
}
