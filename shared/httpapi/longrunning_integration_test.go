package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/wake"
)

// restrictedDeployment is restrictedJob's pod as a Deployment's template, named name.
func restrictedDeployment(name string) map[string]any {
	pod := restrictedJob(nil)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	pod["restartPolicy"] = "Always"
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}}, "spec": pod},
		},
	}
}

// TestLongRunningKindAndQueueStats: a submission whose manifests run only a Deployment is
// long_running; one that runs a Deployment beside a batch Job is batch; a tenant cannot say which
// (kind is not a field a submission takes). GET /api/v1/queue/stats counts the long-running jobs
// apart from the batch ones, and a dispatched one holds no job slot but is counted as its
// tenant's.
func TestLongRunningKindAndQueueStats(t *testing.T) {
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	tenants := dynamo.NewTenantStore(db, tables.Control)
	tn := tenancy.Tenant{Name: "svc", Org: "acme", Role: tenancy.RoleMember, Namespaces: []string{"team-a"}, CreatedAt: time.Now()}
	if err := tenants.PutTenant(context.Background(), tn); err != nil {
		t.Fatal(err)
	}
	key, _ := tenancy.NewKey()
	if err := tenants.AddKey(context.Background(), tn.Name, key, time.Now()); err != nil {
		t.Fatal(err)
	}
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	js := dynamo.NewJobStore(db, tables)
	api := served(t, httpapi.Deps{
		Principals: tenants, Jobs: js, Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, queueURL), Regions: []string{"us-east-1"},
		Capacity: func(string) int { return 4 }, LongRunningPerTenant: 3,
	})
	st := stack{apis: [2]http.Handler{api, api}, queueURL: queueURL, sqs: q}

	submit := func(body map[string]any) (int, map[string]any) {
		t.Helper()
		return st.do(t, 0, "POST", "/api/v1/jobs", key, "application/json", mustJSON(body), nil)
	}
	status, out := submit(map[string]any{"manifest": restrictedDeployment("web"), "region": "us-east-1", "namespace": "team-a"})
	if status != 202 {
		t.Fatalf("POST /api/v1/jobs with a Deployment = %d %v", status, out)
	}
	web := out["job"].(map[string]any)
	if web["kind"] != "long_running" {
		t.Errorf("a Deployment's job has kind %v, want long_running", web["kind"])
	}
	// A Deployment beside a Job would be cut off at the Job's end: refused, naming the Deployment.
	status, out = st.do(t, 0, "POST", "/api/v1/manifests", key, "application/json",
		mustJSON(map[string]any{"manifests": []any{restrictedDeployment("web2"), restrictedJob(nil)}, "region": "us-east-1", "namespace": "team-a"}), nil)
	if status != 422 || !strings.Contains(mustJSON(out["violations"]), `"kind":"Deployment"`) {
		t.Fatalf("POST /api/v1/manifests with a Deployment and a Job = %d %v, want 422 naming the Deployment", status, out)
	}
	status, out = st.do(t, 0, "POST", "/api/v1/manifests", key, "application/json",
		mustJSON(map[string]any{"manifests": []any{restrictedJob(nil)}, "region": "us-east-1", "namespace": "team-a"}), nil)
	if status != 202 {
		t.Fatalf("POST /api/v1/manifests with a Job = %d %v", status, out)
	}
	if k := out["job"].(map[string]any)["kind"]; k != "batch" {
		t.Errorf("a Job makes a job of kind %v, want batch: it ends, and holds a slot", k)
	}
	// Hostile: GPUs spread over replicas count in full against the region and the tenant's share.
	gpuDep := restrictedDeployment("gpu")
	gpuDep["spec"].(map[string]any)["replicas"] = 3
	gpuPod := gpuDep["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	gpuPod["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": 2}}
	status, out = submit(map[string]any{"manifest": gpuDep, "region": "us-east-1", "namespace": "team-a"})
	if status != 202 || fmt.Sprint(out["job"].(map[string]any)["gpus"]) != "6" {
		t.Errorf("POST /api/v1/jobs with a Deployment of 3 replicas of 2 GPUs = %d %v, want 202 and gpus 6", status, out)
	} else {
		cancelJob(t, st, key, out["job"].(map[string]any)["id"].(string))
	}
	// Hostile: a batch Job that says it is long-running, to hold no slot.
	status, out = submit(map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a", "kind": "long_running"})
	if status != 400 || !mentions(out, "kind") {
		t.Errorf("POST /api/v1/jobs with kind set = %d %v, want 400 naming kind", status, out)
	}

	now := time.Now()
	if _, err := js.Claim(context.Background(), web["id"].(string), "us-east-1", "tok", now, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	takeCensus(t, js, dynamo.NewLeaseStore(db, tables.Control), "us-east-1") // the queued batch job's count
	status, out = st.do(t, 0, "GET", "/api/v1/queue/stats", key, "", "", nil)
	regions, _ := out["regions"].([]any)
	if status != 200 || len(regions) != 1 {
		t.Fatalf("GET /api/v1/queue/stats = %d %v", status, out)
	}
	r := regions[0].(map[string]any)
	for _, c := range []struct{ field, want string }{
		{"counts", `{"queued":1}`},
		{"long_running", `{"counts":{"dispatching":1},"holds_slot":false,"per_tenant_limit":3}`},
		// A long-running job holds its pods like any job: the region's one pod is in use.
		{"capacity_in_use", `1`},
		{"tenants", `[{"long_running":1,"share":{"gpus":0,"jobs":0},"tenant":"svc","use":{"gpus":0,"jobs":1}}]`},
	} {
		if got := mustJSON(r[c.field]); got != c.want {
			t.Errorf("GET /api/v1/queue/stats: %s = %s, want %s", c.field, got, c.want)
		}
	}
}

// mentions reports whether an error body names field among its fields or in its detail.
func mentions(body map[string]any, field string) bool {
	if fs, ok := body["fields"].([]any); ok {
		for _, f := range fs {
			if f.(map[string]any)["field"] == field {
				return true
			}
		}
	}
	d, _ := body["detail"].(string)
	return strings.Contains(d, field)
}

// TestLiveServingView: GET /api/v1/jobs/{id} of an active long-running job shows its Deployment
// as the cluster has it now: its replicas and whether it is available (here it is not: no node
// takes its pods). A batch job's view has no serving section.
func TestLiveServingView(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	ns, kst := testenv.Namespace(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	key := memberKey(t, tenants, "ml", "acme", ns)
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: store, Clusters: typed.New(regionCluster(t, kst.Kubeconfig)), Regions: []string{"us-east-1"}})

	now := time.Now()
	j := jobs.New("job-serving", "ml", ns, "us-east-1", 50, nil, []map[string]any{restrictedDeployment("web")}, now)
	if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Claim(ctx, j.ID, "us-east-1", "drainer", now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	cs, err := sandbox.KubeClient(kst.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	three := int32(3)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{jobs.IDKey: j.ID}},
		Spec: appsv1.DeploymentSpec{Replicas: &three, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"tidegate.io/no-such-node": "true"},
					Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}}}},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var view struct {
		Kind         string           `json:"kind"`
		Serving      []map[string]any `json:"serving"`
		ServingError string           `json:"serving_error"`
	}
	req := httptest.NewRequest("GET", "/api/v1/jobs/"+j.ID, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET /api/v1/jobs/%s = %d %s", j.ID, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &view); err != nil {
		t.Fatal(err)
	}
	if view.Kind != "long_running" || view.ServingError != "" || len(view.Serving) != 1 {
		t.Fatalf("GET /api/v1/jobs/%s: kind %q, serving %v (%q); want long_running with its one Deployment", j.ID, view.Kind, view.Serving, view.ServingError)
	}
	if s := view.Serving[0]; s["kind"] != "Deployment" || s["name"] != "web" || s["replicas"] != 3.0 || s["available"] != false || s["available_replicas"] != 0.0 {
		t.Errorf("serving = %v; want Deployment web, 3 replicas, none available, not available", s)
	}
}

// cancelJob cancels job id, so it leaves the stats.
func cancelJob(t *testing.T, st stack, key, id string) {
	t.Helper()
	if status, out := st.do(t, 0, "DELETE", "/api/v1/jobs/"+id, key, "", "", nil); status != 200 {
		t.Fatalf("DELETE /api/v1/jobs/%s = %d %v", id, status, out)
	}
}
