package jobobjects

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/manifest"
	"github.com/tidegate/tidegate/shared/podspec"
)

func TestStampedMarksTheObjectAndEveryPodTemplate(t *testing.T) {
	cron := map[string]any{
		"apiVersion": "batch/v1", "kind": "CronJob",
		"metadata": map[string]any{"name": "nightly", "namespace": "someone-else", "labels": map[string]any{"team": "ml"}},
		"spec": map[string]any{
			"schedule": "0 3 * * *",
			"jobTemplate": map[string]any{"spec": map[string]any{
				"backoffLimit": json.Number("2"),
				"template":     map[string]any{"spec": map[string]any{"restartPolicy": "Never"}},
			}},
		},
	}
	j := jobs.Job{ID: "job-01", Namespace: "team-a"}
	obj := Stamped(cron, j)
	if obj.GetNamespace() != "team-a" {
		t.Errorf("namespace = %q, want the job's, whatever the manifest said", obj.GetNamespace())
	}
	for _, path := range [][]string{{"metadata"}, {"spec", "jobTemplate", "metadata"}, {"spec", "jobTemplate", "spec", "template", "metadata"}} {
		for _, field := range []string{"labels", "annotations"} {
			got, _, _ := unstructured.NestedString(obj.Object, append(append([]string{}, path...), field, jobs.IDKey)...)
			if got != "job-01" {
				t.Errorf("%v.%s[%s] = %q, want job-01", path, field, jobs.IDKey, got)
			}
		}
	}
	if obj.GetLabels()["team"] != "ml" {
		t.Errorf("labels = %v, want the manifest's kept beside the job id", obj.GetLabels())
	}
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "jobTemplate", "spec", "backoffLimit"); n != 2 {
		t.Errorf("backoffLimit = %d, want the manifest's 2 as an int64", n)
	}
	meta := cron["metadata"].(map[string]any)
	if _, marked := meta["labels"].(map[string]any)[jobs.IDKey]; marked || meta["namespace"] != "someone-else" {
		t.Errorf("the manifest itself was changed: %v", meta)
	}
}

// A CronJob that names no concurrencyPolicy runs one job at a time, as its demand counts it;
// one that names Forbid or Replace keeps it.
func TestStampedCronJobConcurrency(t *testing.T) {
	for _, tt := range []struct {
		name  string
		given any // nil: not in the manifest
		want  string
	}{{"absent", nil, "Forbid"}, {"empty", "", "Forbid"}, {"Forbid", "Forbid", "Forbid"}, {"Replace", "Replace", "Replace"}} {
		spec := map[string]any{"schedule": "0 3 * * *", "jobTemplate": map[string]any{"spec": map[string]any{}}}
		if tt.given != nil {
			spec["concurrencyPolicy"] = tt.given
		}
		cron := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "nightly"}, "spec": spec}
		obj := Stamped(cron, jobs.Job{ID: "job-01", Namespace: "team-a"})
		if got, _, _ := unstructured.NestedString(obj.Object, "spec", "concurrencyPolicy"); got != tt.want {
			t.Errorf("Stamped(CronJob with concurrencyPolicy %s): concurrencyPolicy = %q, want %q", tt.name, got, tt.want)
		}
		if got, set := spec["concurrencyPolicy"]; set != (tt.given != nil) || got != tt.given && tt.given != nil {
			t.Errorf("Stamped(CronJob with concurrencyPolicy %s) changed the manifest itself: %v", tt.name, spec)
		}
	}
	job := Stamped(map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"}, "spec": map[string]any{}}, jobs.Job{ID: "j"})
	if _, found, _ := unstructured.NestedFieldNoCopy(job.Object, "spec", "concurrencyPolicy"); found {
		t.Errorf("Stamped(Job) set concurrencyPolicy on a kind that has none: %v", job.Object)
	}
}

func TestStampedUnmountsTheServiceAccountToken(t *testing.T) {
	spec := func(extra map[string]any) map[string]any {
		s := map[string]any{"containers": []any{map[string]any{"name": "main", "image": "busybox"}}}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	template := func(s map[string]any) map[string]any { return map[string]any{"spec": s} }
	tests := []struct {
		name string
		m    map[string]any
		path []string
		want any // the pod's automountServiceAccountToken after stamping
	}{
		{"Pod, unset", map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec(nil)}, []string{"spec"}, false},
		{"Pod, null", map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec(map[string]any{"automountServiceAccountToken": nil})}, []string{"spec"}, false},
		{"Pod, true where the policy allowed it", map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec(map[string]any{"automountServiceAccountToken": true})}, []string{"spec"}, true},
		{"Job", map[string]any{"apiVersion": "batch/v1", "kind": "Job", "spec": map[string]any{"template": template(spec(nil))}},
			[]string{"spec", "template", "spec"}, false},
		{"Deployment", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": template(spec(nil))}},
			[]string{"spec", "template", "spec"}, false},
		{"CronJob", map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "spec": map[string]any{
			"jobTemplate": map[string]any{"spec": map[string]any{"template": template(spec(nil))}}}},
			[]string{"spec", "jobTemplate", "spec", "template", "spec"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, wasSet := manifest.At(tt.m, tt.path...)["automountServiceAccountToken"]
			obj := Stamped(tt.m, jobs.Job{ID: "job-01", Namespace: "team-a"})
			got, found, err := unstructured.NestedFieldNoCopy(obj.Object, append(tt.path, "automountServiceAccountToken")...)
			if !found || err != nil || got != tt.want {
				t.Errorf("Stamped(%s): automountServiceAccountToken = %v (found %v, %v), want %v", tt.name, got, found, err, tt.want)
			}
			if after, set := manifest.At(tt.m, tt.path...)["automountServiceAccountToken"]; set != wasSet || after != before {
				t.Errorf("Stamped(%s) changed the manifest itself: %v, was %v", tt.name, after, before)
			}
		})
	}
	svc := Stamped(map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{"ports": []any{}}}, jobs.Job{ID: "j"})
	if _, set, _ := unstructured.NestedFieldNoCopy(svc.Object, "spec", "automountServiceAccountToken"); set {
		t.Errorf("Stamped(Service) set automountServiceAccountToken in a spec that is not a pod's: %v", svc.Object)
	}
}

func TestPlacement(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	pod := func(name, node string, made time.Duration) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at.Add(made))}, Spec: corev1.PodSpec{NodeName: node}}
		p.Status.Phase = corev1.PodRunning
		return p
	}
	waiting := pod("w", "", time.Second)
	waiting.Status.Phase = corev1.PodPending
	waiting.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes", LastTransitionTime: at}}
	n1 := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		"node.kubernetes.io/instance-type": "g5.xlarge", "eks.amazonaws.com/capacityType": "SPOT",
		"topology.kubernetes.io/zone": "us-east-1a", "unrelated": "x",
	}}}
	n1.Status.Capacity = corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi"), "nvidia.com/gpu": resource.MustParse("1")}
	n1.Status.NodeInfo.Architecture = "amd64"
	nodes := map[string]corev1.Node{"n1": n1}
	// Listed out of order: the first made (b, on n1) decides the first node.
	got := Placement([]corev1.Pod{pod("c", "n2", 2*time.Second), pod("a", "n1", 0), pod("b", "n1", -time.Second), waiting}, nodes)
	if got["node_name"] != "n1" || got["node_instance_type"] != "g5.xlarge" || got["node_capacity_type"] != "spot" {
		t.Errorf("first node = %v/%v/%v, want n1, g5.xlarge, spot", got["node_name"], got["node_instance_type"], got["node_capacity_type"])
	}
	if l := got["node_labels"].(map[string]string); len(l) != 1 || l["zone"] != "us-east-1a" {
		t.Errorf("node_labels = %v, want only the zone", l)
	}
	want := []map[string]any{
		{"name": "n1", "instance_type": "g5.xlarge", "capacity_type": "spot", "labels": map[string]string{"zone": "us-east-1a"},
			"hardware": map[string]any{"cpu": "4", "memory": "16Gi", "gpus": "1", "arch": "amd64"},
			"pods":     []map[string]any{{"name": "b", "phase": "Running"}, {"name": "a", "phase": "Running"}}},
		{"name": "n2", "lookup_failed": true, "pods": []map[string]any{{"name": "c", "phase": "Running"}}},
	}
	if diff := cmp.Diff(want, got["nodes"]); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	wantUnscheduled := []map[string]any{{"pod": "w", "phase": "Pending", "reason": "Unschedulable", "message": "0/3 nodes", "since": at.UTC()}}
	if diff := cmp.Diff(wantUnscheduled, got["unscheduled"]); diff != "" {
		t.Errorf("unscheduled (-want +got):\n%s", diff)
	}
	if ph := got["pod_phases"].(map[string]string); ph["w"] != "Pending" || ph["a"] != "Running" {
		t.Errorf("pod_phases = %v", ph)
	}
	if c := got["phase_counts"].(map[string]int); c["Running"] != 3 || c["Pending"] != 1 || got["pod_phase"] != nil {
		t.Errorf("phase_counts = %v, pod_phase = %v; want 3 Running, 1 Pending and no shared phase", c, got["pod_phase"])
	}
	if got["scheduled_pods"] != 3 || got["unscheduled_pods"] != 1 {
		t.Errorf("scheduled/unscheduled = %v/%v, want 3/1", got["scheduled_pods"], got["unscheduled_pods"])
	}
	if one := Placement([]corev1.Pod{pod("a", "n1", 0)}, nodes); one["pod_phase"] != "Running" || one["unscheduled"] != nil {
		t.Errorf("one running pod: pod_phase %v, unscheduled %v; want Running and none", one["pod_phase"], one["unscheduled"])
	}
	if got, ok := Newest(nil); ok {
		t.Errorf("Newest(no pods) = %v, true", got.Name)
	}
}

func TestExits(t *testing.T) {
	terminated := func(name string, code int32, reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}}
	}
	a := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	a.Status.InitContainerStatuses = []corev1.ContainerStatus{terminated("fetch", 0, "Completed")}
	a.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("main", 3, "Error"), terminated("side", 0, "Completed"), {Name: "still", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	b := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	b.Status.InitContainerStatuses = []corev1.ContainerStatus{terminated("setup", 1, "Error")}
	b.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("main", 137, "OOMKilled")}
	got := Exits([]corev1.Pod{a, b})
	want := []jobs.Exit{{Pod: "a", Container: "main", ExitCode: 3, Reason: "Error"}, {Pod: "b", Container: "setup", ExitCode: 1, Reason: "Error"}, {Pod: "b", Container: "main", ExitCode: 137, Reason: "OOMKilled"}}
	if !slices.Equal(got, want) {
		t.Errorf("Exits = %+v, want %+v", got, want)
	}
	if got := Exits([]corev1.Pod{{}}); got != nil {
		t.Errorf("Exits(a pod without statuses) = %v, want none", got)
	}
}

// TestStampedStatefulSetClaimsGoWithIt: a StatefulSet's claims are deleted with it even when the
// manifest asks to keep them, and its claim templates carry the job id; a set without claim
// templates is left as written.
func TestStampedStatefulSetClaimsGoWithIt(t *testing.T) {
	sts := map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db"},
		"spec": map[string]any{
			"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"},
			"volumeClaimTemplates":                 []any{map[string]any{"metadata": map[string]any{"name": "data"}}},
			"template":                             map[string]any{"spec": map[string]any{"containers": []any{}}},
		},
	}
	obj := Stamped(sts, jobs.Job{ID: "job-07", Namespace: "team-a"})
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted"); got != "Delete" {
		t.Errorf("whenDeleted = %q, want Delete", got)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "persistentVolumeClaimRetentionPolicy", "whenScaled"); got != "Retain" {
		t.Errorf("whenScaled = %q, want the manifest's Retain kept", got)
	}
	claims, _, _ := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
	if id, _, _ := unstructured.NestedString(claims[0].(map[string]any), "metadata", "labels", jobs.IDKey); id != "job-07" {
		t.Errorf("claim template labels carry job id %q, want job-07", id)
	}
	if keep, _, _ := unstructured.NestedString(sts, "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted"); keep != "Retain" {
		t.Errorf("Stamped changed the manifest itself: whenDeleted = %q", keep)
	}
	plain := Stamped(map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": map[string]any{}}, jobs.Job{ID: "j"})
	if _, found, _ := unstructured.NestedFieldNoCopy(plain.Object, "spec", "persistentVolumeClaimRetentionPolicy"); found {
		t.Errorf("a StatefulSet without claim templates got a retention policy: %v", plain.Object["spec"])
	}
}

// TestOwned: the deployment's label replaces whatever a manifest put there, and "" takes it off,
// so a tenant cannot give its object to another deployment's sweep or keep it from its own.
func TestOwned(t *testing.T) {
	forged := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c",
		"labels": map[string]any{podspec.StackLabel: "someone-else", "team": "a"}}}
	for _, stack := range []string{"tidegate-prod", ""} {
		got := Owned(Stamped(forged, jobs.Job{ID: "job-1", Namespace: "team-a"}), stack).GetLabels()
		want := map[string]string{jobs.IDKey: "job-1", "team": "a"}
		if stack != "" {
			want[podspec.StackLabel] = stack
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Owned(a manifest labelled %s=someone-else, %q) labels (-want +got):\n%s", podspec.StackLabel, stack, diff)
		}
	}
}
