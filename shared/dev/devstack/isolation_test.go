package devstack_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/isolation"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// policies are the names of the NetworkPolicies in every namespace of the cluster, by namespace.
func policies(t *testing.T, kc kubernetes.Interface) map[string][]string {
	t.Helper()
	l, err := kc.NetworkingV1().NetworkPolicies("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range l.Items {
		out[p.Namespace] = append(out[p.Namespace], p.Name)
	}
	return out
}

// waitPolicies waits until every namespace of want holds at least its policies.
func waitPolicies(t *testing.T, kc kubernetes.Interface, want map[string][]string, within time.Duration, when string) {
	t.Helper()
	var got map[string][]string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		got = policies(t, kc)
		all := true
		for ns, names := range want {
			for _, n := range names {
				all = all && slices.Contains(got[ns], n)
			}
		}
		if all {
			return
		}
	}
	t.Fatalf("%s: NetworkPolicies %v after %s; want at least %v", when, got, within, want)
}

// On `tidegate dev` with two tenants, the beat puts NetworkPolicies in each tenant namespace and
// the apps' (kubectl get networkpolicy -A lists them), and one deleted by hand is back a beat later.
func TestDevKeepsNetworkPolicies(t *testing.T) {
	kube := testenv.Kube(t)
	prefix := fmt.Sprintf("iso-%d", os.Getpid())
	st := startDev(t, devstack.Options{
		Addr: freeAddr(t), APIKey: "k", Beat: time.Second, Dir: t.TempDir(), Standins: &kube, Prefix: prefix,
	})
	ctx := context.Background()
	kc, err := sandbox.KubeClient(kube.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// A second tenant, as `tidegate admin tenants put ml --org acme --namespace <ns>` makes it.
	ml := prefix + "-ml"
	if err := sandbox.EnsureNamespace(ctx, kube.Kubeconfig, ml); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kc.CoreV1().Namespaces().Delete(context.Background(), ml, metav1.DeleteOptions{}) })
	tenants := dynamo.NewTenantStore(kube.DynamoDB(), st.Env[config.EnvControlTable])
	if err := tenants.PutTenant(ctx, tenancy.Tenant{Name: "ml", Org: "acme", Role: tenancy.RoleMember, Namespaces: []string{ml}}); err != nil {
		t.Fatal(err)
	}

	want := map[string][]string{
		"team-a": {isolation.NamespacePolicy, isolation.NamespaceEgressPolicy}, "team-b": {isolation.NamespacePolicy, isolation.NamespaceEgressPolicy}, ml: {isolation.NamespacePolicy, isolation.NamespaceEgressPolicy},
		st.Env[config.EnvAppsNamespace]: {isolation.AppsIngressPolicy, isolation.AppsEgressPolicy},
	}
	waitPolicies(t, kc, want, 15*time.Second, "with two tenants")

	if err := kc.NetworkingV1().NetworkPolicies(ml).Delete(ctx, isolation.NamespacePolicy, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The beat runs every second here.
	waitPolicies(t, kc, map[string][]string{ml: {isolation.NamespacePolicy}}, 5*time.Second, "after one was deleted by hand")
}
