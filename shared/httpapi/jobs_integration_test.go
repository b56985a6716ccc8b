package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func TestSubmitCompliantJob(t *testing.T) {
	st := newStack(t)
	body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-west-2", "namespace": "team-a", "priority": 70, "labels": map[string]string{"team": "ml"}})
	status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", body, nil)
	if status != 202 {
		t.Fatalf("POST /api/v1/jobs = %d %v, want 202", status, out)
	}
	job := out["job"].(map[string]any)
	if job["status"] != "queued" || job["region"] != "us-west-2" || job["namespace"] != "team-a" || job["priority"] != json.Number("70") {
		t.Errorf("job = %v, want queued in us-west-2/team-a at priority 70", job)
	}
	id := job["id"].(string)

	status, got := st.do(t, 1, "GET", "/api/v1/jobs/"+id, st.viewer, "", "", nil)
	if status != 200 || got["id"] != id {
		t.Fatalf("GET /api/v1/jobs/%s from the other process = %d %v", id, status, got)
	}
	ms, _ := got["manifests"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["metadata"].(map[string]any)["namespace"] != "team-a" {
		t.Errorf("stored manifests = %v, want the one Job with namespace team-a filled in", got["manifests"])
	}
	hist, _ := got["status_history"].([]any)
	if len(hist) != 1 || hist[0].(map[string]any)["status"] != "queued" {
		t.Errorf("status_history = %v, want [queued]", got["status_history"])
	}

	msgs, err := st.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &st.queueURL, WaitTimeSeconds: 1, MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs.Messages) != 1 || aws.ToString(msgs.Messages[0].Body) != `{"region":"us-west-2"}` {
		t.Errorf("dispatch queue holds %d messages (%v), want one ring for us-west-2", len(msgs.Messages), msgs.Messages)
	}

	status, list := st.do(t, 0, "GET", "/api/v1/jobs?region=us-west-2&label_selector=team=ml", st.member, "", "", nil)
	if items, _ := list["items"].([]any); status != 200 || len(items) != 1 {
		t.Errorf("GET /api/v1/jobs filtered = %d %v, want the one job", status, list)
	}
	status, _ = st.do(t, 0, "GET", "/api/v1/jobs?status=bogus", st.member, "", "", nil)
	if status != 400 {
		t.Errorf("GET /api/v1/jobs?status=bogus = %d, want 400", status)
	}
	status, _ = st.do(t, 0, "GET", "/api/v1/jobs?namespace=kube-system", st.member, "", "", nil)
	if status != 403 {
		t.Errorf("GET /api/v1/jobs?namespace=kube-system = %d, want 403", status)
	}
}

// TestPolicyRefusals: each unsafe manifest answers 422 naming the exact field.
func TestPolicyRefusals(t *testing.T) {
	st := newStack(t)
	cronWithHostPath := map[string]any{
		"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "nightly"},
		"spec": map[string]any{"schedule": "0 3 * * *", "jobTemplate": map[string]any{"spec": restrictedJob(func(pod map[string]any) {
			pod["volumes"] = []any{map[string]any{"name": "host", "hostPath": map[string]any{"path": "/etc"}}}
		})["spec"]}},
	}
	tests := []struct {
		name      string
		manifest  map[string]any
		namespace string
		wantField string
	}{
		{"privileged container", restrictedJob(func(pod map[string]any) {
			container(pod)["securityContext"].(map[string]any)["privileged"] = true
		}), "team-a", "spec.template.spec.containers[0].securityContext.privileged"},
		{"hostPath in a CronJob's job template", cronWithHostPath, "team-a", "spec.jobTemplate.spec.template.spec.volumes[0].hostPath"},
		{"missing runAsNonRoot", restrictedJob(func(pod map[string]any) {
			delete(pod["securityContext"].(map[string]any), "runAsNonRoot")
		}), "team-a", "runAsNonRoot"},
		{"kind outside the allow-list", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "x"}}, "team-a", "kind"},
		{"namespace outside the tenant's", restrictedJob(nil), "kube-system", "metadata.namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := mustJSON(map[string]any{"manifest": tt.manifest, "region": "us-east-1", "namespace": tt.namespace})
			status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", body, nil)
			if status != 422 || out["error"] != "policy_violation" {
				t.Fatalf("POST /api/v1/jobs = %d %v, want 422 policy_violation", status, out)
			}
			fields := violationFields(out)
			if !slices.ContainsFunc(fields, func(f string) bool { return strings.Contains(f, tt.wantField) }) {
				t.Errorf("violations name %v, want one naming %s", fields, tt.wantField)
			}
		})
	}
	status, out := st.do(t, 0, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if items, _ := out["items"].([]any); status != 200 || len(items) != 0 {
		t.Errorf("after only refusals, GET /api/v1/jobs = %d %v, want no jobs", status, out)
	}
}

// spotJob is a capped submission with spot_deadline and on_deadline as given ("" leaves one out).
func spotJob(deadline, onDeadline string) map[string]any {
	b := map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "max_spot_price": 0.4, "spot_instance_type": "g5.xlarge"}
	if deadline != "" {
		b["spot_deadline"] = deadline
	}
	if onDeadline != "" {
		b["on_deadline"] = onDeadline
	}
	return b
}

// TestSubmitSpotDeadline: a duration is kept as the time it ends, a time as itself, and
// on_deadline defaults to fail.
func TestSubmitSpotDeadline(t *testing.T) {
	st := newStack(t)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	for _, tc := range []struct {
		deadline, onDeadline string
		near                 time.Time
		want                 string
	}{
		{"30s", "on_demand", time.Now().Add(30 * time.Second), "on_demand"},
		{at.Format(time.RFC3339), "", at, "fail"},
	} {
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", mustJSON(spotJob(tc.deadline, tc.onDeadline)), nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs with spot_deadline %q = %d %v, want 202", tc.deadline, status, out)
		}
		spot, _ := out["job"].(map[string]any)["spot"].(map[string]any)
		got, err := time.Parse(time.RFC3339Nano, fmt.Sprint(spot["deadline"]))
		if err != nil || got.Sub(tc.near).Abs() > 5*time.Second || spot["on_deadline"] != tc.want {
			t.Errorf("spot_deadline %q, on_deadline %q: spot = %v; want the deadline near %s and on_deadline %s", tc.deadline, tc.onDeadline, spot, tc.near, tc.want)
		}
		if tc.deadline != "30s" {
			continue
		}
		// A retry waits as long again, from its own submission.
		id := fmt.Sprint(out["job"].(map[string]any)["id"])
		status, out = st.do(t, 0, "POST", "/api/v1/jobs/"+id+"/retry", st.member, "", "", nil)
		if status != 202 {
			t.Fatalf("POST /api/v1/jobs/%s/retry = %d %v, want 202", id, status, out)
		}
		spot, _ = out["job"].(map[string]any)["spot"].(map[string]any)
		got, err = time.Parse(time.RFC3339Nano, fmt.Sprint(spot["deadline"]))
		if err != nil || got.Sub(time.Now().Add(30*time.Second)).Abs() > 5*time.Second || spot["on_deadline"] != "on_demand" {
			t.Errorf("the retry's spot = %v; want a deadline 30s off, on_demand", spot)
		}
	}
}

func TestSubmitFieldErrors(t *testing.T) {
	st := newStack(t)
	tests := []struct {
		name      string
		body      map[string]any
		wantField string
	}{
		{"unknown region", map[string]any{"manifest": restrictedJob(nil), "region": "mars-1", "namespace": "team-a"}, "region"},
		{"priority out of range", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "priority": 101}, "priority"},
		{"price without type", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "max_spot_price": 0.4}, "spot_instance_type"},
		{"type without price", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "spot_instance_type": "g5.xlarge"}, "max_spot_price"},
		{"negative price", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "max_spot_price": -1, "spot_instance_type": "g5.xlarge"}, "max_spot_price"},
		{"bad label", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "labels": map[string]string{"bad key!": "x"}}, "labels.bad key!"},
		{"deadline without a cap", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "spot_deadline": "30s"}, "spot_deadline"},
		{"on_deadline without a cap", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "on_deadline": "fail"}, "on_deadline"},
		{"on_deadline without a deadline", spotJob("", "on_demand"), "spot_deadline"},
		{"deadline not a time", spotJob("soon", "on_demand"), "spot_deadline"},
		{"deadline past", spotJob("-5s", "on_demand"), "spot_deadline"},
		{"deadline zero", spotJob("0s", "fail"), "spot_deadline"},
		{"deadline past as a time", spotJob("2001-01-01T00:00:00Z", "fail"), "spot_deadline"},
		{"deadline beyond a week", spotJob("169h", "fail"), "spot_deadline"},
		{"deadline far off as a time", spotJob("9999-12-31T23:59:59Z", "fail"), "spot_deadline"},
		{"deadline overflowing", spotJob("99999999999999999h", "fail"), "spot_deadline"},
		{"unknown on_deadline", spotJob("30s", "spot_anyway"), "on_deadline"},
		{"unknown field", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "colour": "red"}, "colour"},
		{"no namespace", map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1"}, "namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", mustJSON(tt.body), nil)
			if status != 400 {
				t.Fatalf("POST /api/v1/jobs = %d %v, want 400", status, out)
			}
			fields, _ := out["fields"].([]any)
			if !slices.ContainsFunc(fields, func(f any) bool { return f.(map[string]any)["field"] == tt.wantField }) {
				t.Errorf("fields = %v, want one naming %s", fields, tt.wantField)
			}
		})
	}
	status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.viewer, "application/json", mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"}), nil)
	if status != 403 {
		t.Errorf("a viewer's submission = %d %v, want 403", status, out)
	}
}

// TestIdempotencyAcrossProcesses sends the same key to two API processes on the same tables.
func TestIdempotencyAcrossProcesses(t *testing.T) {
	st := newStack(t)
	body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"})
	key := map[string]string{"Idempotency-Key": "3f0c3a52-retry-me"}
	s1, first := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", body, key)
	s2, second := st.do(t, 1, "POST", "/api/v1/jobs", st.member, "application/json", body, key)
	if s1 != 202 || s2 != 200 {
		t.Fatalf("same key and body on two processes = %d then %d, want 202 then 200", s1, s2)
	}
	if a, b := first["job"].(map[string]any)["id"], second["job"].(map[string]any)["id"]; a != b {
		t.Errorf("the retry answered job %v, want the original %v", b, a)
	}
	other := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-b"})
	if s3, out := st.do(t, 1, "POST", "/api/v1/jobs", st.member, "application/json", other, key); s3 != 409 || out["error"] != "conflict" {
		t.Errorf("same key, other body = %d %v, want 409 conflict", s3, out)
	}
	_, list := st.do(t, 0, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if items, _ := list["items"].([]any); len(items) != 1 {
		t.Errorf("after a replay and a conflict there are %d jobs, want 1", len(items))
	}
}

func TestManifestRoutes(t *testing.T) {
	st := newStack(t)
	good := `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
---
` + yamlJob
	status, out := st.do(t, 0, "POST", "/api/v1/manifests?namespace=team-b&dry_run=true", st.member, "application/yaml", good, nil)
	if status != 200 || out["valid"] != true || len(out["manifests"].([]any)) != 2 {
		t.Fatalf("YAML dry run = %d %v, want 200 valid with 2 manifests", status, out)
	}
	status, out = st.do(t, 0, "POST", "/api/v1/manifests/validate", st.viewer, "application/json", mustJSON(map[string]any{"manifests": []any{restrictedJob(func(pod map[string]any) {
		container(pod)["securityContext"].(map[string]any)["privileged"] = true
	})}, "namespace": "team-a"}), nil)
	if status != 200 || out["valid"] != false || len(violationFields(out)) == 0 {
		t.Errorf("validate of a privileged Job = %d %v, want 200 invalid with violations", status, out)
	}
	status, out = st.do(t, 0, "POST", "/api/v1/manifests?namespace=team-b", st.member, "application/yaml", good, nil)
	if status != 202 || len(out["job"].(map[string]any)["manifests"].([]any)) != 2 {
		t.Errorf("YAML submission = %d %v, want 202 with a job of 2 manifests", status, out)
	}

	bomb := `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`
	start := time.Now()
	status, out = st.do(t, 0, "POST", "/api/v1/manifests?namespace=team-a", st.member, "application/yaml", bomb, nil)
	if took := time.Since(start); status != 400 || took > time.Second {
		t.Errorf("YAML alias bomb = %d %v in %s, want 400 well under a second", status, out, took)
	}
}

const yamlJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        seccompProfile: {type: RuntimeDefault}
      containers:
        - name: main
          image: busybox:1.36
          securityContext:
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
`
