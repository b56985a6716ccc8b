package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// metaCases each write one piece of metadata a tenant may not: field is the violation's path
// under the metadata it is written in, "" when it is allowed.
func metaCases() []struct {
	name   string
	mutate func(meta map[string]any)
	field  string
} {
	set := func(bag, k, v string) func(meta map[string]any) {
		return func(meta map[string]any) { at(meta, bag)[k] = v }
	}
	return []struct {
		name   string
		mutate func(meta map[string]any)
		field  string
	}{
		{"label tidegate.io/job-id", set("labels", "tidegate.io/job-id", "job-of-another"), ".labels[tidegate.io/job-id]"},
		{"label tidegate.io/stack", set("labels", "tidegate.io/stack", "prod"), ".labels[tidegate.io/stack]"},
		{"label tidegate.io/retry", set("labels", "tidegate.io/retry", "true"), ".labels[tidegate.io/retry]"},
		{"annotation tidegate.io/attempt", set("annotations", "tidegate.io/attempt", "99"), ".annotations[tidegate.io/attempt]"},
		{"label of a subdomain", set("labels", "foo.tidegate.io/x", "y"), ".labels[foo.tidegate.io/x]"},
		{"annotation of a subdomain", set("annotations", "a.b.tidegate.io/x", "y"), ".annotations[a.b.tidegate.io/x]"},
		// Annotation keys may have any case, so this one is Kubernetes' to accept and ours to refuse.
		{"annotation in upper case", set("annotations", "TIDEGATE.IO/attempt", "99"), ".annotations[TIDEGATE.IO/attempt]"},
		{"finalizers", func(meta map[string]any) { meta["finalizers"] = []any{"example.com/hold"} }, ".finalizers"},
		{"ownerReferences", func(meta map[string]any) {
			meta["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "team-b-config", "uid": "8d6f4f1e-0000-4000-8000-000000000001"}}
		}, ".ownerReferences"},
		{"label under another domain ending like it", set("labels", "nottidegate.io/x", "y"), ""},
		{"label under a domain starting like it", set("labels", "tidegate.iox/x", "y"), ""},
		{"annotation naming it in its name", set("annotations", "example.com/tidegate.io", "y"), ""},
		{"annotation without a prefix", set("annotations", "tidegate.io", "y"), ""},
		{"the sandbox's exit code", set("annotations", "tidegate.io/sandbox-exit-code", "3"), ""},
		{"the sandbox's OOM kill", set("annotations", "tidegate.io/sandbox-oom-kill", "true"), ""},
		{"empty finalizers", func(meta map[string]any) { meta["finalizers"] = []any{} }, ""},
	}
}

// Tidegate's keys, finalizers and ownerReferences are refused on the object and on its pod
// template, naming where; other keys and the sandbox's annotations are not.
func TestCheckOwnMetadataInEveryKind(t *testing.T) {
	c := mustChecker(t, Config{})
	for _, w := range workloads {
		templateMeta := strings.TrimSuffix(w.specPath, "spec") + "metadata"
		for _, m := range metaCases() {
			places := []string{"metadata", templateMeta}
			if templateMeta == "metadata" { // a Pod is its own template
				places = places[:1]
			}
			for _, where := range places {
				t.Run(w.kind.Kind+"/"+where+"/"+m.name, func(t *testing.T) {
					doc := w.wrap(fromYAML(t, goodPodSpec))
					if where == "metadata" {
						m.mutate(at(doc, "metadata"))
					} else {
						var path []any
						for _, k := range strings.Split(templateMeta, ".") {
							path = append(path, k)
						}
						m.mutate(at(doc, path...))
					}
					var want []located
					if m.field != "" {
						want = []located{{0, where + m.field}}
					}
					res := c.Check(tenantRequest(doc))
					if diff := cmp.Diff(want, fieldsOf(res.Violations)); diff != "" {
						t.Errorf("Check(%s with %s in %s) fields (-want +got):\n%s\nviolations: %v", w.kind, m.name, where, diff, res.Violations)
					}
				})
			}
		}
	}
}

// The metadata of what a workload makes besides its pods: a CronJob's Jobs, a StatefulSet's
// claims, a pod's ephemeral volume's claim; and a ConfigMap's own.
func TestCheckOwnMetadataOutsideThePod(t *testing.T) {
	c := mustChecker(t, Config{})
	cron := workloads[2].wrap(fromYAML(t, goodPodSpec))
	at(cron, "spec", "jobTemplate", "metadata", "labels")["tidegate.io/stack"] = "prod"
	sts := workloads[4].wrap(fromYAML(t, goodPodSpec))
	at(sts, "spec")["volumeClaimTemplates"] = []any{fromYAML(t, `{metadata: {name: data, finalizers: [example.com/hold]},
		spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}`)}
	spec := fromYAML(t, goodPodSpec)
	spec["volumes"] = []any{map[string]any{"name": "scratch", "ephemeral": map[string]any{"volumeClaimTemplate": fromYAML(t,
		`{metadata: {labels: {tidegate.io/job-id: job-of-another}}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}`)}}}
	job := workloads[1].wrap(spec)
	cm := fromYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {tidegate.io/attempt: "2"}, finalizers: [kubernetes]}}`)
	// A label key Kubernetes refuses is reported as that alone.
	upper := fromYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: u, labels: {TIDEGATE.IO/x: "v"}}}`)
	tests := []struct {
		name string
		doc  map[string]any
		want []string
	}{
		{"CronJob's job template", cron, []string{"spec.jobTemplate.metadata.labels[tidegate.io/stack]"}},
		{"StatefulSet's claim template", sts, []string{"spec.volumeClaimTemplates[0].metadata.finalizers"}},
		{"Job's ephemeral volume claim", job, []string{"spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.labels[tidegate.io/job-id]"}},
		{"ConfigMap", cm, []string{"metadata.annotations[tidegate.io/attempt]", "metadata.finalizers"}},
		{"label in upper case", upper, []string{"metadata.labels[TIDEGATE.IO/x]"}},
	}
	for _, tt := range tests {
		res := c.Check(tenantRequest(tt.doc))
		var got []string
		for _, v := range res.Violations {
			got = append(got, v.Field)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Check(%s) fields (-want +got):\n%s\nviolations: %v", tt.name, diff, res.Violations)
		}
		if tt.name == "label in upper case" && len(res.Violations) == 1 && !strings.Contains(res.Violations[0].Message, "would be refused by Kubernetes") {
			t.Errorf("Check(label TIDEGATE.IO/x) message = %q, want Kubernetes' refusal", res.Violations[0].Message)
		}
	}
}

func TestCheckOwnMetadataMessages(t *testing.T) {
	c := mustChecker(t, Config{})
	doc := fromYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, labels: {tidegate.io/job-id: x}, finalizers: [kubernetes],
		ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: other, uid: 8d6f4f1e-0000-4000-8000-000000000001}]}}`)
	v := func(field, message string) Violation {
		return Violation{Document: 0, Kind: "ConfigMap", Name: "c", Field: field, Message: message}
	}
	want := []Violation{
		v("metadata.labels[tidegate.io/job-id]", `label key "tidegate.io/job-id" is Tidegate's own (tidegate.io/ and its subdomains): Tidegate sets and reads these keys on what it applies, to know a job's objects, attempt and deployment: remove it`),
		v("metadata.finalizers", "finalizers keep an object from being deleted until a controller removes them, and none of this cluster's controllers removes one a manifest names: the object would stay Terminating after the job ends, holding its name and its namespace; remove finalizers"),
		v("metadata.ownerReferences", "ownerReferences tie the object's life to another object's, which may be another job's (deleting that would delete this, or this could hold it up): remove ownerReferences; Tidegate deletes a job's objects when it ends"),
	}
	if diff := cmp.Diff(want, c.Check(tenantRequest(doc)).Violations); diff != "" {
		t.Errorf("Check(ConfigMap with Tidegate's label, a finalizer and an owner) violations (-want +got):\n%s", diff)
	}
}
