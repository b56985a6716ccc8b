package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/wake"
)

// TestReachRefusals: what a tenant writes to reach past its namespace or pass for Tidegate
// (Tidegate's own keys, finalizers, ownerReferences, an inline CSI volume, a node label not
// allowed, pod affinity by another namespace) answers 422 naming the field, in a Pod and in the
// pod templates of a Job, a CronJob and a Deployment, and nothing is stored.
func TestReachRefusals(t *testing.T) {
	st := newStack(t)
	fields := []struct {
		name string
		// edit changes the pod spec, and meta the pod's metadata (a template's, or a Pod's own).
		edit  func(pod map[string]any)
		meta  func(meta map[string]any)
		field string // under the pod spec, or under its metadata when meta is set
	}{
		{name: "Tidegate's attempt annotation", meta: func(m map[string]any) {
			m["annotations"] = map[string]any{"tidegate.io/attempt": "99"}
		}, field: ".annotations[tidegate.io/attempt]"},
		{name: "a subdomain's label", meta: func(m map[string]any) {
			m["labels"] = map[string]any{"app": "web", "foo.tidegate.io/x": "y"}
		}, field: ".labels[foo.tidegate.io/x]"},
		{name: "finalizers", meta: func(m map[string]any) { m["finalizers"] = []any{"example.com/hold"} }, field: ".finalizers"},
		{name: "ownerReferences", meta: func(m map[string]any) {
			m["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "8d6f4f1e-0000-4000-8000-000000000001"}}
		}, field: ".ownerReferences"},
		{name: "inline CSI volume", edit: func(pod map[string]any) {
			pod["volumes"] = []any{map[string]any{"name": "secrets", "csi": map[string]any{"driver": "secrets-store.csi.k8s.io"}}}
		}, field: ".volumes[0].csi.driver"},
		{name: "nodeSelector on a system pool", edit: func(pod map[string]any) {
			pod["nodeSelector"] = map[string]any{"eks.amazonaws.com/nodegroup": "system"}
		}, field: ".nodeSelector[eks.amazonaws.com/nodegroup]"},
		{name: "node affinity on an unlisted label", edit: func(pod map[string]any) {
			pod["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": []any{"48xlarge"}}}}}}}}
		}, field: ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key"},
		{name: "pod affinity by every namespace", edit: func(pod map[string]any) {
			pod["affinity"] = map[string]any{"podAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{
				map[string]any{"topologyKey": "kubernetes.io/hostname", "namespaceSelector": map[string]any{}}}}}
		}, field: ".affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector"},
		{name: "pod anti-affinity naming another namespace", edit: func(pod map[string]any) {
			pod["affinity"] = map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{
				map[string]any{"topologyKey": "kubernetes.io/hostname", "namespaces": []any{"team-b"}}}}}
		}, field: ".affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaces[0]"},
	}
	for _, k := range podIn {
		for _, f := range fields {
			t.Run(k.kind+"/"+f.name, func(t *testing.T) {
				pod := restrictedJob(f.edit)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				doc := k.wrap(pod)
				want := k.specPath + f.field
				if f.meta != nil {
					meta, metaPath := templateMeta(doc, k.kind)
					f.meta(meta)
					want = metaPath + f.field
				}
				body := mustJSON(map[string]any{"manifest": doc, "region": "us-east-1", "namespace": "team-a"})
				status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", body, nil)
				if status != 422 || out["error"] != "policy_violation" {
					t.Fatalf("POST /api/v1/jobs (%s with %s) = %d %v, want 422 policy_violation", k.kind, f.name, status, out)
				}
				if diff := cmp.Diff([]string{want}, violationFields(out)); diff != "" {
					t.Errorf("POST /api/v1/jobs (%s with %s) violation fields (-want +got):\n%s\nbody: %v", k.kind, f.name, diff, out)
				}
			})
		}
	}
	status, out := st.do(t, 0, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if items, _ := out["items"].([]any); status != 200 || len(items) != 0 {
		t.Errorf("after only refusals, GET /api/v1/jobs = %d %v, want no jobs", status, out)
	}
	// Within the allow-list and the pod's own namespace, placement is admitted.
	pod := restrictedJob(func(pod map[string]any) {
		pod["nodeSelector"] = map[string]any{"karpenter.sh/capacity-type": "spot", "kubernetes.io/arch": "amd64"}
		pod["affinity"] = map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{
			map[string]any{"topologyKey": "kubernetes.io/hostname", "namespaces": []any{"team-a"}}}}}
	})
	body := mustJSON(map[string]any{"manifests": []any{pod}, "namespace": "team-a"})
	if status, out := st.do(t, 0, "POST", "/api/v1/manifests/validate", st.member, "application/json", body, nil); status != 200 || out["valid"] != true {
		t.Errorf("POST /api/v1/manifests/validate (default node labels, anti-affinity in its own namespace) = %d %v, want 200 valid", status, out)
	}
}

// templateMeta is the metadata of the pod in doc, made if missing, and its path.
func templateMeta(doc map[string]any, kind string) (map[string]any, string) {
	holder, path := doc, "metadata"
	switch kind {
	case "Pod":
	case "CronJob":
		holder, path = doc["spec"].(map[string]any)["jobTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any), "spec.jobTemplate.spec.template.metadata"
	default:
		holder, path = doc["spec"].(map[string]any)["template"].(map[string]any), "spec.template.metadata"
	}
	meta, _ := holder["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		holder["metadata"] = meta
	}
	return meta, path
}

// TestReservedNamespaceRefused: a tenant whose record names kube-system (written past the admin
// CLI, which refuses it) still cannot submit there: 422 policy_violation at metadata.namespace,
// as for any namespace not the tenant's, and nothing is stored; its own namespace still works.
func TestReservedNamespaceRefused(t *testing.T) {
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	ctx := context.Background()
	store := dynamo.NewTenantStore(db, tables.Control)
	now := time.Now()
	if err := store.PutTenant(ctx, tenancy.Tenant{Name: "sys", Org: "acme", Namespaces: []string{"team-a", "kube-system", "tidegate-apps"}, Role: tenancy.RoleMember, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	key, _ := tenancy.NewKey()
	if err := store.AddKey(ctx, "sys", key, now); err != nil {
		t.Fatal(err)
	}
	checker, err := policy.NewChecker(policy.Config{AppsNamespace: "tidegate-apps"})
	if err != nil {
		t.Fatal(err)
	}
	st := stack{queueURL: queueURL, sqs: q, member: key}
	st.apis[0] = served(t, httpapi.Deps{
		Principals: store, Jobs: dynamo.NewJobStore(db, tables), Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1"},
	})
	for _, ns := range []string{"kube-system", "tidegate-apps"} {
		body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": ns})
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", key, "application/json", body, nil)
		if status != 422 || out["error"] != "policy_violation" {
			t.Fatalf("POST /api/v1/jobs in %s (the tenant's record names it) = %d %v, want 422 policy_violation", ns, status, out)
		}
		if diff := cmp.Diff([]string{"metadata.namespace"}, violationFields(out)); diff != "" {
			t.Errorf("POST /api/v1/jobs in %s violation fields (-want +got):\n%s\nbody: %v", ns, diff, out)
		}
	}
	status, out := st.do(t, 0, "GET", "/api/v1/jobs", key, "", "", nil)
	if items, _ := out["items"].([]any); status != 200 || len(items) != 0 {
		t.Errorf("after only refusals, GET /api/v1/jobs = %d %v, want no jobs", status, out)
	}
	body := mustJSON(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"})
	if status, out := st.do(t, 0, "POST", "/api/v1/jobs", key, "application/json", body, nil); status != 202 {
		t.Errorf("POST /api/v1/jobs in team-a = %d %v, want 202", status, out)
	}
}
