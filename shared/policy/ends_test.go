package policy

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Objects that never end are refused beside one that does, naming the document, the field and
// what to do; on their own, or beside objects that run nothing, they are not.
func TestCheckEnds(t *testing.T) {
	c := mustChecker(t, Config{Kinds: append(DefaultKinds(), Kind{"apps/v1", "ReplicaSet"}, Kind{"apps/v1", "DaemonSet"})})
	of := func(k Kind) func(t *testing.T) map[string]any {
		return func(t *testing.T) map[string]any {
			for _, w := range workloads {
				if w.kind == k {
					return w.wrap(fromYAML(t, goodPodSpec))
				}
			}
			spec := fromYAML(t, goodPodSpec) // a ReplicaSet or a DaemonSet
			return map[string]any{"apiVersion": k.APIVersion, "kind": k.Kind, "metadata": meta("r"), "spec": map[string]any{
				"selector": selector, "template": template(spec)}}
		}
	}
	pod := func(restart any) func(t *testing.T) map[string]any {
		return func(t *testing.T) map[string]any {
			p := of(Kind{"v1", "Pod"})(t)
			if restart != nil {
				p["spec"].(map[string]any)["restartPolicy"] = restart
			}
			return p
		}
	}
	job, cron := of(Kind{"batch/v1", "Job"}), of(Kind{"batch/v1", "CronJob"})
	deployment, statefulSet := of(Kind{"apps/v1", "Deployment"}), of(Kind{"apps/v1", "StatefulSet"})
	replicaSet := of(Kind{"apps/v1", "ReplicaSet"})
	configMap := func(*testing.T) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("cm")}
	}
	service := func(*testing.T) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta("svc"),
			"spec": map[string]any{"selector": map[string]any{"app": "x"}, "ports": []any{map[string]any{"port": 80.0}}}}
	}
	endsWithJob := `document 0, Job "j"`
	names := map[string]string{"Deployment": "d", "StatefulSet": "s", "ReplicaSet": "r"} // as of() names them
	never := func(doc int, kind string) Violation {
		return Violation{Document: doc, Kind: kind, Name: names[kind], Field: "kind"}
	}
	tests := []struct {
		name string
		docs []func(*testing.T) map[string]any
		want []Violation
	}{
		{"a Job and a Deployment", []func(*testing.T) map[string]any{job, deployment}, []Violation{
			withMessage(never(1, "Deployment"), msgNeverEnds, "Deployment", endsWithJob, "Deployment")}},
		{"a Job, a StatefulSet and a ReplicaSet", []func(*testing.T) map[string]any{job, statefulSet, replicaSet}, []Violation{
			withMessage(never(1, "StatefulSet"), msgNeverEnds, "StatefulSet", endsWithJob, "StatefulSet"),
			withMessage(never(2, "ReplicaSet"), msgNeverEnds, "ReplicaSet", endsWithJob, "ReplicaSet")}},
		{"a Deployment before a CronJob", []func(*testing.T) map[string]any{deployment, cron}, []Violation{
			withMessage(never(0, "Deployment"), msgNeverEnds, "Deployment", `document 1, CronJob "cj"`, "Deployment")}},
		{"a Job and a Pod of Kubernetes' default restartPolicy", []func(*testing.T) map[string]any{job, pod(nil)}, []Violation{
			withMessage(Violation{Document: 1, Kind: "Pod", Name: "p", Field: "spec.restartPolicy"}, msgPodNeverEnds, endsWithJob)}},
		{"a Job and a Pod restarting Always", []func(*testing.T) map[string]any{job, pod("Always")}, []Violation{
			withMessage(Violation{Document: 1, Kind: "Pod", Name: "p", Field: "spec.restartPolicy"}, msgPodNeverEnds, endsWithJob)}},
		{"a Pod that ends and a Deployment", []func(*testing.T) map[string]any{pod("Never"), deployment}, []Violation{
			withMessage(never(1, "Deployment"), msgNeverEnds, "Deployment", `document 0, Pod "p"`, "Deployment")}},
		{"a Job, a Pod restarting OnFailure, a ConfigMap and a Service", []func(*testing.T) map[string]any{job, pod("OnFailure"), configMap, service}, nil},
		{"a CronJob alone", []func(*testing.T) map[string]any{cron}, nil},
		{"long-running: a Deployment, a StatefulSet, a ConfigMap and a Service", []func(*testing.T) map[string]any{deployment, statefulSet, configMap, service}, nil},
		{"a Pod restarting Always alone", []func(*testing.T) map[string]any{pod(nil)}, nil},
		{"a Pod restarting Always and a Deployment: neither ends, the job runs until cancelled", []func(*testing.T) map[string]any{pod("Always"), deployment}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ms []map[string]any
			for _, d := range tt.docs {
				ms = append(ms, d(t))
			}
			res := c.Check(tenantRequest(ms...))
			if diff := cmp.Diff(tt.want, res.Violations); diff != "" {
				t.Errorf("Check(%s) violations (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// A document refused for its own reasons keeps them, in document order, with its never-ending
// one after them; a kind not allowed is not judged on its end.
func TestCheckEndsAfterEachDocument(t *testing.T) {
	c := mustChecker(t, Config{})
	bundle := docs(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-c}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: web
        image: nginx:1.27
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: main
        image: ghcr.io/acme/migrate:1.0
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`)
	res := c.Check(Request{Manifests: bundle, Namespaces: []string{"team-a"}, DefaultNamespace: "team-a"})
	want := []located{{0, "metadata.namespace"}, {0, "kind"}, {1, "kind"}}
	if diff := cmp.Diff(want, fieldsOf(res.Violations)); diff != "" {
		t.Errorf("Check(Deployment elsewhere, DaemonSet, Job) fields (-want +got):\n%s\nviolations: %v", diff, res.Violations)
	}
	if got := res.Violations[1].Message; got != `a Deployment never ends, and this job ends when document 2, Job "migrate" does, which deletes everything it applied: submit the Deployment as a job of its own (with only Deployments and StatefulSets, and their ConfigMaps and Services, it is long-running), or remove it` {
		t.Errorf("Check(Deployment beside a Job) says %q", got)
	}
}

func withMessage(v Violation, format string, args ...any) Violation {
	v.Message = fmt.Sprintf(format, args...)
	return v
}
