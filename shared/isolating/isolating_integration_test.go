package isolating_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/isolating"
	"github.com/tidegate/tidegate/shared/isolation"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type oneCluster struct{ kc kubernetes.Interface }

func (c oneCluster) Client(context.Context, string) (kubernetes.Interface, error) { return c.kc, nil }

// rig is a Keeper on the stand-ins whose Kubernetes requests are counted.
type rig struct {
	k       *isolating.Keeper
	kc      kubernetes.Interface // uncounted: the test's own reads and edits
	meter   *testenv.Meter
	tenants *dynamo.TenantStore
	wanted  func() []isolation.Object
}

func newRig(t *testing.T, appsNS string, tenants ...tenancy.Tenant) *rig {
	t.Helper()
	return newRigAs(t, rest.ImpersonationConfig{}, appsNS, tenants...)
}

// newRigAs is newRig whose Keeper acts as who (the sandbox's admin when empty).
func newRigAs(t *testing.T, who rest.ImpersonationConfig, appsNS string, tenants ...tenancy.Tenant) *rig {
	t.Helper()
	tables, db := testenv.Tables(t)
	st := testenv.Kube(t)
	rc, err := clientcmd.BuildConfigFromFlags("", st.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{kc: plain, meter: &testenv.Meter{}, tenants: dynamo.NewTenantStore(db, tables.Control)}
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper { return r.meter.Transport(next) }
	rc.Impersonate = who
	counted, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range tenants {
		r.putTenant(t, tn)
	}
	s := isolation.Settings{
		Owner:         isolation.OwnerOf(tables.Control),
		AppsNamespace: appsNS,
		HostingRegion: "us-east-1",
		Ranges:        isolation.Ranges{Pods: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/16")}, Services: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12")}},
		Resolvers:     []netip.Addr{netip.MustParseAddr("1.1.1.1")},
		Containers: isolation.ContainerDefaults{
			CPU: resource.MustParse("500m"), Memory: resource.MustParse("256Mi"),
			CPURequest: resource.MustParse("50m"), MemoryRequest: resource.MustParse("64Mi"),
		},
		PodsPerJob: 2,
		PodCaps:    isolation.PodCaps{CPU: ptr.To(resource.MustParse("2"))},
	}
	clusters := []isolation.Cluster{{Regions: []isolation.Region{{Name: "us-east-1", Jobs: 3}, {Name: "us-west-2", Jobs: 1}}}}
	r.k = &isolating.Keeper{
		Clusters: clusters, Settings: s, Tenants: r.tenants, Clients: oneCluster{counted},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	r.wanted = func() []isolation.Object {
		ts, err := r.tenants.Tenants(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return isolation.Wanted(clusters[0], ts, s)
	}
	return r
}

func (r *rig) putTenant(t *testing.T, tn tenancy.Tenant) {
	t.Helper()
	if err := r.tenants.PutTenant(context.Background(), tn); err != nil {
		t.Fatalf("putting tenant %s: %v", tn.Name, err)
	}
}

// beat keeps once and answers the writes it made, "METHOD path" each.
func (r *rig) beat(t *testing.T) []string {
	t.Helper()
	r.meter.Reset()
	if err := r.k.Keep(context.Background()); err != nil {
		t.Fatalf("Keep: %v", err)
	}
	var writes []string
	for _, c := range r.meter.Snapshot() {
		if c.Method != http.MethodGet {
			writes = append(writes, c.Method+" "+c.Path)
		}
	}
	slices.Sort(writes)
	return writes
}

// ours are the objects of ours in ns, as "Kind name".
func (r *rig) ours(t *testing.T, ns string) []string {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: isolation.Selector(r.k.Settings.Owner)}
	var out []string
	nps, err := r.kc.NetworkingV1().NetworkPolicies(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range nps.Items {
		out = append(out, "NetworkPolicy "+o.Name)
	}
	rqs, err := r.kc.CoreV1().ResourceQuotas(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rqs.Items {
		out = append(out, "ResourceQuota "+o.Name)
	}
	lrs, err := r.kc.CoreV1().LimitRanges(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range lrs.Items {
		out = append(out, "LimitRange "+o.Name)
	}
	slices.Sort(out)
	return out
}

// matches fails unless the cluster holds exactly what is wanted, as Plan judges it.
func (r *rig) matches(t *testing.T, when string) {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: isolation.Selector(r.k.Settings.Owner)}
	var have []isolation.Object
	nps, err := r.kc.NetworkingV1().NetworkPolicies("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nps.Items {
		have = append(have, &nps.Items[i])
	}
	rqs, err := r.kc.CoreV1().ResourceQuotas("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rqs.Items {
		have = append(have, &rqs.Items[i])
	}
	lrs, err := r.kc.CoreV1().LimitRanges("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for i := range lrs.Items {
		have = append(have, &lrs.Items[i])
	}
	all := map[string]bool{}
	for _, o := range r.wanted() {
		all[o.GetNamespace()] = true
	}
	if steps := isolation.Plan(r.wanted(), have, all); len(steps) != 0 {
		t.Errorf("%s: the cluster differs from what is wanted: %d steps, first %#v", when, len(steps), steps[0])
	}
}

var namespaceObjects = []string{"LimitRange " + isolation.NamespaceLimits, "NetworkPolicy " + isolation.NamespaceEgressPolicy, "NetworkPolicy " + isolation.NamespacePolicy, "ResourceQuota " + isolation.NamespaceQuota}

// The beat makes the policies for two tenants' namespaces and the apps', writes nothing when
// nothing changed, puts back what was deleted or edited by hand, and takes ours out of a namespace
// no tenant holds any more — never touching the cluster's own namespaces, whatever a record says.
func TestKeeperKeepsIsolationInPlace(t *testing.T) {
	nsA, _ := testenv.Namespace(t)
	nsB, _ := testenv.Namespace(t)
	apps, _ := testenv.Namespace(t)
	r := newRig(t, apps,
		tenancy.Tenant{Name: "ml", Org: "acme", Role: tenancy.RoleMember, Namespaces: []string{nsA, "kube-system", "default", apps}},
		tenancy.Tenant{Name: "web", Org: "globex", Role: tenancy.RoleMember, Namespaces: []string{nsB}},
	)
	ctx := context.Background()

	if got := r.beat(t); len(got) != 10 {
		t.Errorf("first beat wrote %d times, want 10 (4 objects in each tenant namespace, 2 in the apps'):\n%s", len(got), strings.Join(got, "\n"))
	}
	for ns, want := range map[string][]string{
		nsA: namespaceObjects, nsB: namespaceObjects,
		apps:          {"NetworkPolicy " + isolation.AppsIngressPolicy, "NetworkPolicy " + isolation.AppsEgressPolicy},
		"kube-system": nil, "default": nil,
	} {
		if diff := cmp.Diff(want, r.ours(t, ns)); diff != "" {
			t.Errorf("after the first beat, namespace %s holds (-want +got):\n%s", ns, diff)
		}
	}
	r.matches(t, "after the first beat")

	if got := r.beat(t); len(got) != 0 {
		t.Errorf("a beat with nothing changed wrote:\n%s", strings.Join(got, "\n"))
	}
	// Its reads: one LIST of namespaces and one of each kind of ours, whatever the tenants.
	if calls := r.meter.Snapshot(); len(calls) != 4 {
		t.Errorf("a beat with nothing changed made %d requests; want 4 LISTs: %+v", len(calls), calls)
	}

	// By hand: one deleted, one edited by another field manager, one relabelled.
	if err := r.kc.NetworkingV1().NetworkPolicies(nsA).Delete(ctx, isolation.NamespacePolicy, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	egress, err := r.kc.NetworkingV1().NetworkPolicies(apps).Get(ctx, isolation.AppsEgressPolicy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	egress.Spec.Egress = append(egress.Spec.Egress, networkingv1.NetworkPolicyEgressRule{})
	if _, err := r.kc.NetworkingV1().NetworkPolicies(apps).Update(ctx, egress, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	q, err := r.kc.CoreV1().ResourceQuotas(nsB).Get(ctx, isolation.NamespaceQuota, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("1000")
	if _, err := r.kc.CoreV1().ResourceQuotas(nsB).Update(ctx, q, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"PATCH /apis/networking.k8s.io/v1/namespaces/" + apps + "/networkpolicies/" + isolation.AppsEgressPolicy,
		"PATCH /apis/networking.k8s.io/v1/namespaces/" + nsA + "/networkpolicies/" + isolation.NamespacePolicy,
		"PATCH /api/v1/namespaces/" + nsB + "/resourcequotas/" + isolation.NamespaceQuota,
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, r.beat(t)); diff != "" {
		t.Errorf("the beat after hand edits wrote (-want +got):\n%s", diff)
	}
	r.matches(t, "after restoring")
	if got := r.beat(t); len(got) != 0 {
		t.Errorf("a beat after restoring wrote:\n%s", strings.Join(got, "\n"))
	}

	// web gives up nsB for a namespace the cluster does not have: ours leave nsB, nothing is
	// written for the missing one.
	r.putTenant(t, tenancy.Tenant{Name: "web", Org: "globex", Role: tenancy.RoleMember, Namespaces: []string{nsB + "-gone"}})
	if got := r.beat(t); len(got) != 4 || !strings.HasPrefix(got[0], "DELETE ") {
		t.Errorf("the beat after nsB was given up wrote %q; want its 4 objects deleted", got)
	}
	if got := r.ours(t, nsB); len(got) != 0 {
		t.Errorf("namespace %s, held by no tenant, still holds %q", nsB, got)
	}
	if got := r.beat(t); len(got) != 0 {
		t.Errorf("a beat after the deletes wrote:\n%s", strings.Join(got, "\n"))
	}
}

// A tenant's pod that sets no resources is given the LimitRange's, so the quota bounds it.
func TestPodWithoutLimitsIsBounded(t *testing.T) {
	ns, _ := testenv.Namespace(t)
	apps, _ := testenv.Namespace(t)
	r := newRig(t, apps, tenancy.Tenant{Name: "ml", Org: "acme", Role: tenancy.RoleMember, Namespaces: []string{ns}})
	r.beat(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		// Running for good (kwok's delay), so that the quota keeps counting it.
		ObjectMeta: metav1.ObjectMeta{Name: "bare", Annotations: map[string]string{sandbox.CompleteDelayAnnotation: "1h"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
	}
	// The quota's informer may not have seen the new quota at once; the pod is refused until it has.
	var got *corev1.Pod
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got, err = r.kc.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("creating a pod without resources in %s: %v", ns, err)
	}
	res := got.Spec.Containers[0].Resources
	if res.Limits.Cpu().String() != "500m" || res.Limits.Memory().String() != "256Mi" || res.Requests.Cpu().String() != "50m" || res.Requests.Memory().String() != "64Mi" {
		t.Errorf("pod without resources got limits %v, requests %v; want the LimitRange's 500m/256Mi and 50m/64Mi", res.Limits, res.Requests)
	}
	// 4 jobs (3 + 1 across the cluster's two regions) × 2 pods a job: 8 pods at 500m is 4 CPUs,
	// within 8 × the 2 CPU cap; a ninth pod is refused by the quota.
	for i := 1; i < 8; i++ {
		p := pod.DeepCopy()
		p.Name = "bare-" + string(rune('a'+i))
		if _, err := r.kc.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("pod %d of 8: %v", i+1, err)
		}
	}
	// The quota controller recounts from its informer's cache, and a recount that had not yet
	// seen a new pod can overwrite the count admission just raised (Kubernetes' quota is exact
	// only eventually). A deleted pod makes it recount the namespace: wait until it counts the
	// seven left, then the eighth fills the quota.
	if err := r.kc.CoreV1().Pods(ns).Delete(ctx, "bare", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		q, err := r.kc.CoreV1().ResourceQuotas(ns).Get(ctx, isolation.NamespaceQuota, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.kc.CoreV1().Pods(ns).Get(ctx, "bare", metav1.GetOptions{})
		if used := q.Status.Used[corev1.ResourcePods]; used.Value() == 7 && apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quota in %s counts %v after a pod of eight was deleted; want 7", ns, q.Status.Used)
		}
	}
	if _, err := r.kc.CoreV1().Pods(ns).Create(ctx, pod.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("the eighth pod again: %v", err)
	}
	p := pod.DeepCopy()
	p.Name = "one-too-many"
	if _, err := r.kc.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		q, _ := r.kc.CoreV1().ResourceQuotas(ns).Get(ctx, isolation.NamespaceQuota, metav1.GetOptions{})
		pods, _ := r.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		var phases []string
		for _, p := range pods.Items {
			phases = append(phases, p.Name+"="+string(p.Status.Phase))
		}
		t.Errorf("a ninth pod in %s: %v; want it refused for exceeding the quota (quota used %v; pods %v)", ns, err, q.Status.Used, phases)
	}
}
