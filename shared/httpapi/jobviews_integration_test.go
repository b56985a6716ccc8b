package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/outbox"
)

// TestLiveJobViews: a job's pod, running on the sandbox's kwok node, is shown with its images
// (init containers apart), addresses and start time; its events with first and last time and
// source; and the job's live placement with the node's hardware, the pods on it, their shared
// phase and the counts.
func TestLiveJobViews(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	ns, kst := testenv.Namespace(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	now := time.Now()
	key := memberKey(t, tenants, "ml", "acme", ns)
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: store, Clusters: typed.New(regionCluster(t, kst.Kubeconfig)), Regions: []string{"us-east-1"}})

	j := jobs.New("job-views", "ml", ns, "us-east-1", 50, nil, []map[string]any{
		{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "views"}, "spec": map[string]any{
			"restartPolicy": "Never", "containers": []any{map[string]any{"name": "main", "image": "python:3.13-slim"}}}},
		{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "views-batch"}, "spec": map[string]any{
			"parallelism": json.Number("2"), "backoffLimit": json.Number("0"),
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "b", "image": "busybox:1.36"}}}}}},
	}, now)
	if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", j.CreatedAt), nil, j.CreatedAt); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Claim(ctx, j.ID, "us-east-1", "drainer", now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	cs, err := sandbox.KubeClient(kst.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "views", Namespace: ns, Labels: map[string]string{jobs.IDKey: j.ID}},
		Spec: corev1.PodSpec{
			RestartPolicy:  corev1.RestartPolicyNever,
			InitContainers: []corev1.Container{{Name: "fetch", Image: "busybox:1.36"}},
			Containers:     []corev1.Container{{Name: "main", Image: "python:3.13-slim"}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The batch Job carries the job's label, its pods do not: they stay out of the pod views.
	batch := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "views-batch", Namespace: ns, Labels: map[string]string{jobs.IDKey: j.ID}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "b", Image: "busybox:1.36"}},
		}}},
	}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, batch, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func(path string, into any) {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("GET %s = %d %s", path, rec.Code, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
			t.Fatal(err)
		}
	}
	type container struct {
		Name  string         `json:"name"`
		Image string         `json:"image"`
		State map[string]any `json:"state"`
	}
	var pods struct {
		Items []struct {
			Name           string      `json:"name"`
			Phase          string      `json:"phase"`
			NodeName       string      `json:"node_name"`
			HostIP         string      `json:"host_ip"`
			PodIP          string      `json:"pod_ip"`
			StartTime      *time.Time  `json:"start_time"`
			Containers     []container `json:"containers"`
			InitContainers []container `json:"init_containers"`
		} `json:"items"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		get("/api/v1/jobs/"+j.ID+"/pods", &pods)
		if len(pods.Items) == 1 && pods.Items[0].Phase == "Running" && pods.Items[0].PodIP != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pod is not running with an IP after 30 s: %+v", pods.Items)
		}
		time.Sleep(300 * time.Millisecond)
	}
	p := pods.Items[0]
	if p.NodeName == "" || p.HostIP == "" || p.StartTime == nil {
		t.Errorf("pod view = %+v; want its node, host IP and start time", p)
	}
	if len(p.Containers) != 1 || p.Containers[0].Image != "python:3.13-slim" || p.Containers[0].State["running"] == nil {
		t.Errorf("containers = %+v; want main, python:3.13-slim, running", p.Containers)
	}
	if len(p.InitContainers) != 1 || p.InitContainers[0].Name != "fetch" || p.InitContainers[0].Image != "busybox:1.36" {
		t.Errorf("init_containers = %+v; want fetch, busybox:1.36", p.InitContainers)
	}

	var events struct {
		Items []struct {
			Reason    string            `json:"reason"`
			FirstSeen *time.Time        `json:"first_seen"`
			LastSeen  *time.Time        `json:"last_seen"`
			Source    map[string]string `json:"source"`
		} `json:"items"`
	}
	for deadline = time.Now().Add(20 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		get("/api/v1/jobs/"+j.ID+"/events", &events)
		if len(events.Items) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(events.Items) == 0 {
		t.Fatal("no events about the pod after 20 s; the scheduler records one when it binds a pod")
	}
	for _, e := range events.Items {
		if e.FirstSeen == nil || e.LastSeen == nil || e.LastSeen.Before(*e.FirstSeen) || e.Source["component"] == "" {
			t.Errorf("event %s: first %v, last %v, source %v; want both times, in order, and its source", e.Reason, e.FirstSeen, e.LastSeen, e.Source)
		}
	}

	var view struct {
		Workloads   []jobs.Workload  `json:"workloads"`
		ClusterJobs []map[string]any `json:"cluster_jobs"`
		Placement   struct {
			PodPhase      string           `json:"pod_phase"`
			PhaseCounts   map[string]int   `json:"phase_counts"`
			ScheduledPods int              `json:"scheduled_pods"`
			Nodes         []map[string]any `json:"nodes"`
		} `json:"placement"`
	}
	for deadline = time.Now().Add(20 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		get("/api/v1/jobs/"+j.ID, &view)
		if len(view.ClusterJobs) == 1 && view.ClusterJobs[0]["start_time"] != nil || time.Now().After(deadline) {
			break
		}
	}
	if len(view.ClusterJobs) != 1 || view.ClusterJobs[0]["name"] != "views-batch" || view.ClusterJobs[0]["start_time"] == nil {
		t.Errorf("cluster_jobs = %v; want views-batch with its start time", view.ClusterJobs)
	}
	if len(view.Workloads) != 2 || view.Workloads[1].Kind != "Job" || view.Workloads[1].Parallelism == nil || *view.Workloads[1].Parallelism != 2 ||
		view.Workloads[0].Containers[0].Image != "python:3.13-slim" || view.Workloads[1].Containers[0].Image != "busybox:1.36" {
		t.Errorf("workloads = %+v; want the Pod with its image and the Job with parallelism 2 and its image", view.Workloads)
	}
	pl := view.Placement
	if pl.PodPhase != "Running" || pl.PhaseCounts["Running"] != 1 || pl.ScheduledPods != 1 || len(pl.Nodes) != 1 {
		t.Fatalf("placement = %+v; want one running pod on one node", pl)
	}
	hw, _ := pl.Nodes[0]["hardware"].(map[string]any)
	if pl.Nodes[0]["name"] != p.NodeName || hw["cpu"] == nil || hw["memory"] == nil || fmt.Sprint(pl.Nodes[0]["pods"]) != "[map[name:views phase:Running]]" {
		t.Errorf("placement's node = %v; want %s with its hardware and the pod on it", pl.Nodes[0], p.NodeName)
	}

	// Its end recorded, and the end's details not kept yet: its objects are still what is shown.
	cur, err := store.Job(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []jobs.Status{jobs.StatusPending, jobs.StatusRunning, jobs.StatusSucceeded} {
		next, c, err := jobs.Move(cur, to, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if cur.Status == jobs.StatusDispatching {
			c.Claim = "drainer"
		}
		c.DetailsDue = to.Terminal()
		if err := store.Apply(ctx, cur, c); err != nil {
			t.Fatalf("moving the job to %s: %v", to, err)
		}
		cur = next
	}
	view.ClusterJobs = nil
	get("/api/v1/jobs/"+j.ID, &view)
	if len(view.ClusterJobs) != 1 || view.Placement.PodPhase != "Running" {
		t.Errorf("ended with its details due: cluster_jobs %v, placement %+v; want its Job and its pod as the cluster shows them", view.ClusterJobs, view.Placement)
	}
	// Its details kept: the record's, whatever the cluster holds.
	kept := jobs.Change{From: jobs.StatusSucceeded, To: jobs.StatusSucceeded, At: time.Now(), Detailed: true,
		Placement: map[string]any{"pod_phase": "Succeeded"}, ClusterJobs: []jobs.ClusterJob{}}
	if err := store.Apply(ctx, cur, kept); err != nil {
		t.Fatalf("keeping the end's details: %v", err)
	}
	if err := store.Apply(ctx, cur, kept); err == nil {
		t.Error("the end's details were kept twice; want the second write refused, as they are no longer due")
	}
	view.ClusterJobs = nil
	get("/api/v1/jobs/"+j.ID, &view)
	if len(view.ClusterJobs) != 0 || view.Placement.PodPhase != "Succeeded" {
		t.Errorf("ended with its details kept: cluster_jobs %v, placement %+v; want the record's (none, Succeeded)", view.ClusterJobs, view.Placement)
	}
}
