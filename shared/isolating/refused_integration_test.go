package isolating_test

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/isolation"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// refuseNetworkPolicies makes the cluster refuse every NetworkPolicy written in ns, as a policy
// engine of the operator's might, until the test ends.
func refuseNetworkPolicies(t *testing.T, r *rig, ns string) {
	t.Helper()
	ctx := context.Background()
	name := "refuse-" + ns
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"networkpolicies"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "NetworkPolicies are refused here"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}
	adm := r.kc.AdmissionregistrationV1()
	if _, err := adm.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if _, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// The apiserver takes the policy up from its informer: wait until a dry run is refused.
	probe := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err := r.kc.NetworkingV1().NetworkPolicies(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "refused here") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster still takes NetworkPolicies in %s: %v", ns, err)
		}
	}
}

// A namespace whose objects the cluster refuses does not hold up the others: the keeper makes
// everything else, and says what it could not.
func TestKeeperGoesOnPastARefusedNamespace(t *testing.T) {
	nsA, _ := testenv.Namespace(t)
	nsB, _ := testenv.Namespace(t)
	apps, _ := testenv.Namespace(t)
	r := newRig(t, apps,
		tenancy.Tenant{Name: "ml", Org: "acme", Role: tenancy.RoleMember, Namespaces: []string{nsA}},
		tenancy.Tenant{Name: "web", Org: "globex", Role: tenancy.RoleMember, Namespaces: []string{nsB}},
	)
	refuseNetworkPolicies(t, r, nsB)

	err := r.k.Keep(context.Background())
	if err == nil || !strings.Contains(err.Error(), "NetworkPolicy "+nsB+"/"+isolation.NamespacePolicy) || !strings.Contains(err.Error(), "refused here") {
		t.Errorf("Keep with %s refusing NetworkPolicies = %v; want an error naming its policy and the refusal", nsB, err)
	}
	if got := r.ours(t, nsA); len(got) != 4 {
		t.Errorf("namespace %s holds %q; want its 4 objects, whatever %s refused", nsA, got, nsB)
	}
	if got := r.ours(t, nsB); len(got) != 2 {
		t.Errorf("namespace %s holds %q; want its LimitRange and ResourceQuota, which it did not refuse", nsB, got)
	}
	if got := r.ours(t, apps); len(got) != 2 {
		t.Errorf("apps namespace %s holds %q; want its 2 policies", apps, got)
	}
}
