package jobobjects_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func configMap(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{"k": "v"}}
}

func bareJob(name string) map[string]any {
	return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name}, "spec": map[string]any{
		"backoffLimit": 0,
		"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never", "containers": []any{
			map[string]any{"name": "main", "image": "busybox"},
		}}},
	}}
}

func notEnded(context.Context, string) (bool, error) { return false, nil }

// A job's objects are applied once however often it is applied, its pods are found by its id,
// and deleting it deletes only what is its own: another job, or an object Tidegate did not make,
// keeps its name.
func TestApplyPodsDelete(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, st := testenv.Namespace(t)
	clusters, err := kube.New(config.Config{Regions: map[string]string{"us-east-1": "sandbox"}, Kubeconfig: st.Kubeconfig}, aws.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := clusters.Dynamic(ctx, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := sandbox.KubeClient(st.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	mine := jobs.Job{ID: "job-mine", Namespace: ns, Manifests: []map[string]any{configMap("settings"), bareJob("work")}}
	if err := jobobjects.Apply(ctx, dc, mine, "", notEnded); err != nil {
		t.Fatal(err)
	}
	if err := jobobjects.Apply(ctx, dc, mine, "", notEnded); err != nil {
		t.Errorf("applying the same job again = %v, want nil: its objects are already its own", err)
	}
	theirs := jobs.Job{ID: "job-theirs", Namespace: ns, Manifests: []map[string]any{configMap("settings")}}
	if err := jobobjects.Apply(ctx, dc, theirs, "", notEnded); !errors.Is(err, jobobjects.ErrNameCollision) {
		t.Errorf("another job reusing a name = %v, want ErrNameCollision", err)
	}
	if _, err := kc.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hand-made"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var pods []corev1.Pod
	for pods == nil || len(pods) == 0 {
		if pods, err = jobobjects.Pods(ctx, kc.CoreV1().RESTClient(), mine); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatal("the job's pod never appeared")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if pods[0].Labels[jobs.IDKey] != mine.ID {
		t.Errorf("pod %s labels = %v, want the job id", pods[0].Name, pods[0].Labels)
	}
	// The manifest leaves automountServiceAccountToken unset; applied, the pod gets no token.
	if a := pods[0].Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("pod %s automountServiceAccountToken = %v, want false stamped at apply", pods[0].Name, a)
	}
	for _, v := range pods[0].Spec.Volumes {
		if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool { return s.ServiceAccountToken != nil }) {
			t.Errorf("pod %s mounts a service account token in volume %s, want none", pods[0].Name, v.Name)
		}
	}
	if other, err := jobobjects.Pods(ctx, kc.CoreV1().RESTClient(), theirs); err != nil || len(other) != 0 {
		t.Errorf("Pods(another job) = %d pods (%v), want none", len(other), err)
	}

	core := kc.CoreV1().RESTClient()
	// The pod's node, once scheduled, and the Job controller's events about the job's Job.
	for pods[0].Spec.NodeName == "" && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		pods, _ = jobobjects.Pods(ctx, core, mine)
	}
	ghost := pods[0]
	ghost.Name, ghost.Spec.NodeName = "ghost", "no-such-node"
	nodes, err := jobobjects.Nodes(ctx, core, []corev1.Pod{pods[0], ghost})
	if _, ok := nodes[pods[0].Spec.NodeName]; !ok || len(nodes) != 1 {
		t.Errorf("Nodes = %v, want the pod's node %s alone", slices.Collect(maps.Keys(nodes)), pods[0].Spec.NodeName)
	}
	if err == nil || !strings.Contains(err.Error(), "no-such-node") {
		t.Errorf("Nodes with a node that does not exist: error %v, want one naming it", err)
	}
	for {
		events, _, err := jobobjects.Events(ctx, core, mine, pods, "")
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(events, func(e corev1.Event) bool { return e.InvolvedObject.Name == "work" }) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no event about Job work among %d", len(events))
		}
		time.Sleep(200 * time.Millisecond)
	}

	// A job that claims the hand-made ConfigMap's name cannot delete it.
	intruder := jobs.Job{ID: "job-intruder", Namespace: ns, Manifests: []map[string]any{configMap("hand-made"), configMap("settings")}}
	if err := jobobjects.Delete(ctx, dc, intruder); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hand-made", "settings"} {
		if _, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("after another job's Delete, ConfigMap %s: %v, want it kept", name, err)
		}
	}
	if err := jobobjects.Delete(ctx, dc, mine); err != nil {
		t.Fatal(err)
	}
	// Foreground deletion marks the object, and the garbage collector removes it once its
	// dependents are gone.
	for {
		cm, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("after its own Delete, ConfigMap settings is still there (deletion %v, %v)", cm.DeletionTimestamp, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := jobobjects.Delete(ctx, dc, mine); err != nil {
		t.Errorf("deleting again = %v, want nil: objects already gone are no error", err)
	}
}

// A StatefulSet's volume claims go with the job: deleting the job's objects deletes the claims
// the set's controller made from its claim templates, though the manifest asked to keep them.
func TestDeleteTakesStatefulSetClaims(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, st := testenv.Namespace(t)
	clusters, err := kube.New(config.Config{Regions: map[string]string{"us-east-1": "sandbox"}, Kubeconfig: st.Kubeconfig}, aws.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := clusters.Dynamic(ctx, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := sandbox.KubeClient(st.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	sts := map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db"},
		"spec": map[string]any{
			"replicas":                             1,
			"selector":                             map[string]any{"matchLabels": map[string]any{"app": "db"}},
			"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Retain"},
			"volumeClaimTemplates": []any{map[string]any{
				"metadata": map[string]any{"name": "data"},
				"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
			}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "db"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "db", "image": "postgres:17"}}},
			},
		},
	}
	j := jobs.Job{ID: "job-db", Namespace: ns, Manifests: []map[string]any{sts}}
	if err := jobobjects.Apply(ctx, dc, j, "", notEnded); err != nil {
		t.Fatal(err)
	}
	selector := metav1.ListOptions{LabelSelector: jobs.IDKey + "=" + j.ID}
	for {
		claims, err := kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, selector)
		if err != nil {
			t.Fatal(err)
		}
		if len(claims.Items) == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the StatefulSet's claim never appeared with the job's label (%d claims)", len(claims.Items))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := jobobjects.Delete(ctx, dc, j); err != nil {
		t.Fatal(err)
	}
	for {
		claims, err := kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(claims.Items) == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("after the job's Delete, claim %s is still there (deletion %v)", claims.Items[0].Name, claims.Items[0].DeletionTimestamp)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
