package reconcile_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/podspec"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// leftRig is a followRig that deletes too: a dynamic client beside the typed one.
type leftRig struct {
	followRig
	dc dynamic.Interface
}

func newLeftRig(t *testing.T) leftRig {
	t.Helper()
	r := newFollowRig(t)
	clusters, err := kube.New(config.Config{Regions: map[string]string{benchRegion: "sandbox"}, Kubeconfig: testenv.Kube(t).Kubeconfig}, aws.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := clusters.Config(context.Background(), benchRegion)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return leftRig{followRig: r, dc: dc}
}

// beat runs one beat of h.
func (r leftRig) beat(t *testing.T, h *reconcile.Handler, name string) {
	t.Helper()
	if err := h.HandleBeat(context.Background(), events.EventBridgeEvent{ID: name}); err != nil {
		t.Fatalf("beat %s: %v", name, err)
	}
}

// instance is a reconcile process following benchRegion that deletes what ended jobs left.
func (r leftRig) instance() *reconcile.Handler {
	h := r.followRig.instance(r.store, &ringCounter{}, time.Now)
	h.Clusters = oneClient{kc: r.kc, dc: r.dc}
	return h
}

// storeRunning stores job id in the rig's namespace, running, with manifests.
func (r leftRig) storeRunning(t *testing.T, id string, manifests ...map[string]any) jobs.Job {
	t.Helper()
	now := time.Now()
	j := jobs.New(id, "ml", r.ns, benchRegion, jobs.DefaultPriority, nil, manifests, now)
	for _, s := range []jobs.Status{jobs.StatusDispatching, jobs.StatusPending, jobs.StatusRunning} {
		j.Status = s
		j.StatusHistory = append(j.StatusHistory, jobs.Transition{Status: s, At: now.UTC()})
	}
	if _, _, err := r.store.Create(context.Background(), j, jobs.Event(outbox.JobStarted, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	return j
}

// create creates m as dispatch would for job j (jobobjects.Stamped).
func (r leftRig) create(t *testing.T, j jobs.Job, m map[string]any) {
	t.Helper()
	obj := jobobjects.Owned(jobobjects.Stamped(m, j), leftStack)
	gvk := obj.GroupVersionKind()
	res := map[string]string{"ConfigMap": "configmaps", "Service": "services", "CronJob": "cronjobs"}[gvk.Kind]
	if _, err := r.dc.Resource(gvk.GroupVersion().WithResource(res)).Namespace(j.Namespace).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s: %v", gvk.Kind, obj.GetName(), err)
	}
}

// run creates kj and marks it running, as its controller would.
func (r leftRig) run(t *testing.T, kj *batchv1.Job) {
	t.Helper()
	ctx := context.Background()
	kj, err := r.kc.BatchV1().Jobs(r.ns).Create(ctx, kj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kj.Status = batchv1.JobStatus{Active: 1, Ready: ptr[int32](1), StartTime: ptr(metav1.Now())}
	if _, err := r.kc.BatchV1().Jobs(r.ns).UpdateStatus(ctx, kj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// gone waits up to a foreground deletion's few seconds for what exists to be gone, reporting
// whether it went.
func gone(exists func() (bool, error)) (bool, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		there, err := exists()
		if err != nil || !there {
			return !there, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func getter[T any](get func(ctx context.Context, name string, opts metav1.GetOptions) (T, error), name string) func() (bool, error) {
	return func() (bool, error) {
		_, err := get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
}

func configMap(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{"k": "v"}}
}

// TestEndDeletesWhatTheJobLeft: once a job of a Job, a ConfigMap and a Service succeeds, the beat
// that records it deletes the ConfigMap and the Service; the finished Job stays for its TTL.
func TestEndDeletesWhatTheJobLeft(t *testing.T) {
	r := newLeftRig(t)
	ctx := context.Background()
	service := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "left"},
		"spec": map[string]any{"selector": map[string]any{"app": "left"}, "ports": []any{map[string]any{"port": int64(80)}}}}
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "left"}}
	j := r.storeRunning(t, "job-"+r.ns+"-left", job, configMap("left-settings"), service)
	r.run(t, runningJob(r.ns, "left", j.ID))
	r.create(t, j, configMap("left-settings"))
	r.create(t, j, service)

	h := r.instance()
	r.beat(t, h, "running")
	if _, err := r.kc.CoreV1().ConfigMaps(r.ns).Get(ctx, "left-settings", metav1.GetOptions{}); err != nil {
		t.Fatalf("the running job's ConfigMap: %v; want it kept while the job runs", err)
	}
	complete(t, r.kc, r.ns, "left")
	r.beat(t, h, "ended")
	if got := status(t, r.store, j.ID); got != jobs.StatusSucceeded {
		t.Fatalf("the job whose Job completed is %s, want succeeded", got)
	}
	for name, exists := range map[string]func() (bool, error){
		"ConfigMap left-settings": getter(r.kc.CoreV1().ConfigMaps(r.ns).Get, "left-settings"),
		"Service left":            getter(r.kc.CoreV1().Services(r.ns).Get, "left"),
	} {
		if went, err := gone(exists); err != nil || !went {
			t.Errorf("%s after the beat that recorded its job's end: gone %v (%v); want gone", name, went, err)
		}
	}
	if _, err := r.kc.BatchV1().Jobs(r.ns).Get(ctx, "left", metav1.GetOptions{}); err != nil {
		t.Errorf("the finished Job after its job's end: %v; want it kept for its TTL", err)
	}
}

// TestEndDeletesTheCronJob: a CronJob's job ends with its first run, and that end deletes the
// CronJob, so that no run starts that nothing follows.
func TestEndDeletesTheCronJob(t *testing.T) {
	r := newLeftRig(t)
	ctx := context.Background()
	// A schedule no test outlives: the controller makes no run of its own meanwhile.
	cron := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "nightly"},
		"spec": map[string]any{"schedule": "0 3 1 1 *", "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{
			"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}}}}}}}}
	j := r.storeRunning(t, "job-"+r.ns+"-cron", cron)
	r.create(t, j, cron)
	cj, err := r.kc.BatchV1().CronJobs(r.ns).Get(ctx, "nightly", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Its first run, as the CronJob controller would make it: owned by the CronJob, labelled from
	// its job template.
	run := runningJob(r.ns, "nightly-29000000", j.ID)
	run.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr(true)}}
	r.run(t, run)
	complete(t, r.kc, r.ns, run.Name)

	r.beat(t, r.instance(), "ended")
	if got := status(t, r.store, j.ID); got != jobs.StatusSucceeded {
		t.Fatalf("the CronJob's job whose first run completed is %s, want succeeded", got)
	}
	if went, err := gone(getter(r.kc.BatchV1().CronJobs(r.ns).Get, "nightly")); err != nil || !went {
		t.Errorf("the CronJob after its job's end: gone %v (%v); want gone, so that it starts no more runs", went, err)
	}
}

// leftStack is the deployment these tests' objects are applied by, as dispatch labels them.
const leftStack = "tidegate-left"

// tenantsOf are tenants whose namespaces are given.
type tenantsOf []string

func (ns tenantsOf) Tenants(context.Context) ([]tenancy.Tenant, error) {
	return []tenancy.Tenant{{Name: "ml", Org: "acme", Role: tenancy.RoleMember, Namespaces: ns}}, nil
}

// TestSweepDeletesWhatEndedJobsLeft: the sweep deletes an object labelled with an ended job's id
// and one with an id no record has, and counts them; an active job's object stays, and so does
// one in a namespace no tenant holds. A tenant who puts another tenant's active job's id on its
// own object gets its own id stamped over it, so only its own object, once its job ended, is
// swept. An object another deployment applied in the same namespace, whose job this one's records
// do not know, stays: it is that deployment's to sweep.
func TestSweepDeletesWhatEndedJobsLeft(t *testing.T) {
	r := newLeftRig(t)
	ctx := context.Background()
	elsewhere, _ := testenv.Namespace(t) // a namespace no tenant of this deployment holds
	active := r.storeRunning(t, "job-"+r.ns+"-active", configMap("active"))
	ended := r.storeRunning(t, "job-"+r.ns+"-ended", configMap("ended"))
	hostile := r.storeRunning(t, "job-"+r.ns+"-hostile", configMap("hostile"))
	for _, j := range []jobs.Job{ended, hostile} {
		got, err := r.store.Job(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.store.Apply(ctx, got, jobs.Change{From: jobs.StatusRunning, To: jobs.StatusFailed, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	r.create(t, active, configMap("active"))
	r.create(t, ended, configMap("ended"))
	// The hostile tenant's manifest names the active job's id; dispatch stamps its own over it.
	forged := configMap("hostile")
	forged["metadata"].(map[string]any)["labels"] = map[string]any{jobs.IDKey: active.ID}
	if got := jobobjects.Stamped(forged, hostile).GetLabels()[jobs.IDKey]; got != hostile.ID {
		t.Fatalf("Stamped(a manifest labelled %s) labels it %s, want its own job's id %s", active.ID, got, hostile.ID)
	}
	r.create(t, hostile, forged)
	for name, stack := range map[string]string{"unknown": leftStack, "theirs": "another-deployment"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns,
			Labels: map[string]string{jobs.IDKey: "job-" + r.ns + "-nobody", podspec.StackLabel: stack}}}
		if _, err := r.kc.CoreV1().ConfigMaps(r.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	unmanaged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unmanaged", Namespace: elsewhere, Labels: map[string]string{jobs.IDKey: "job-" + r.ns + "-nobody"}}}
	if _, err := r.kc.CoreV1().ConfigMaps(elsewhere).Create(ctx, unmanaged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var log bytes.Buffer
	h := r.instance()
	h.Tenants = tenantsOf{r.ns}
	h.Metrics = metrics.NewRecorder(&log, time.Now)
	h.Stack = leftStack
	h.SweptKinds = []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Group: "batch", Version: "v1", Kind: "CronJob"}}
	r.beat(t, h, "sweep")

	for _, name := range []string{"ended", "hostile", "unknown"} {
		if went, err := gone(getter(r.kc.CoreV1().ConfigMaps(r.ns).Get, name)); err != nil || !went {
			t.Errorf("ConfigMap %s after the sweep: gone %v (%v); want gone", name, went, err)
		}
	}
	if _, err := r.kc.CoreV1().ConfigMaps(r.ns).Get(ctx, "active", metav1.GetOptions{}); err != nil {
		t.Errorf("the active job's ConfigMap after the sweep: %v; want it kept", err)
	}
	if _, err := r.kc.CoreV1().ConfigMaps(elsewhere).Get(ctx, "unmanaged", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap in a namespace no tenant holds after the sweep: %v; want it kept", err)
	}
	if _, err := r.kc.CoreV1().ConfigMaps(r.ns).Get(ctx, "theirs", metav1.GetOptions{}); err != nil {
		t.Errorf("another deployment's ConfigMap after the sweep: %v; want it kept", err)
	}
	points, err := metrics.Read(log.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var counted float64
	for _, p := range points {
		if p.Metric.Name == metrics.SweptObjects.Name && p.Dimensions[metrics.DimKind] == "ConfigMap" && p.Dimensions[metrics.DimRegion] == benchRegion {
			for _, v := range p.Values {
				counted += v
			}
		}
	}
	if counted != 3 {
		t.Errorf("SweptObjects for ConfigMaps in %s = %v, want 3\n%s", benchRegion, counted, log.String())
	}

	// Another beat within the minute LISTs nothing: a fresh object of an ended job waits.
	r.create(t, ended, configMap("ended-again"))
	r.beat(t, h, "within the minute")
	if _, err := r.kc.CoreV1().ConfigMaps(r.ns).Get(ctx, "ended-again", metav1.GetOptions{}); err != nil {
		t.Errorf("an ended job's ConfigMap after a beat within the sweep's minute: %v; want it still there until the next sweep", err)
	}
}
