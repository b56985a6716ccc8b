package isolation

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listed is o as a LIST answers it: through JSON (quantities in canonical form), no kind, with
// the fields the server adds.
func listed(t *testing.T, o Object) Object {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out Object
	switch o.(type) {
	case *networkingv1.NetworkPolicy:
		out = &networkingv1.NetworkPolicy{}
	case *corev1.ResourceQuota:
		out = &corev1.ResourceQuota{}
	case *corev1.LimitRange:
		out = &corev1.LimitRange{}
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	out.GetObjectKind().SetGroupVersionKind(out.GetObjectKind().GroupVersionKind().GroupVersion().WithKind(""))
	out.SetResourceVersion("42")
	out.SetUID("0b5f")
	out.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply}})
	if q, ok := out.(*corev1.ResourceQuota); ok {
		q.Status.Hard, q.Status.Used = q.Spec.Hard, corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3")}
	}
	return out
}

func listAll(t *testing.T, objs []Object) []Object {
	var out []Object
	for _, o := range objs {
		out = append(out, listed(t, o))
	}
	return out
}

// describe is each step as text, for cmp.Diff.
func describe(steps []Step) []string {
	var out []string
	for _, s := range steps {
		switch s := s.(type) {
		case Apply:
			out = append(out, "apply "+KeyOf(s.Object).String()+": "+s.Why)
		case Delete:
			out = append(out, "delete "+s.Key.String())
		}
	}
	return out
}

var present = map[string]bool{"team-a": true, "team-b": true, "shared": true, "tidegate-apps": true, "kube-system": true, "default": true}

func TestPlan(t *testing.T) {
	wanted := Wanted(one("us-east-1", 10, 8), twoTenants(), settings())
	find := func(objs []Object, ns, name string) Object {
		for _, o := range objs {
			if o.GetNamespace() == ns && o.GetName() == name {
				return o
			}
		}
		t.Fatalf("no %s/%s", ns, name)
		return nil
	}
	stranger := func(ns, name string) Object {
		p := namespacePolicy(ns, settings().Owner)
		p.Name = name
		return listed(t, p)
	}
	for _, tc := range []struct {
		name   string
		have   func() []Object
		exists map[string]bool
		want   []string
	}{
		{"nothing changed is no steps", func() []Object { return listAll(t, wanted) }, present, nil},
		{"an empty cluster gets everything, in order", func() []Object { return nil }, map[string]bool{"team-b": true, "tidegate-apps": true}, []string{
			"apply LimitRange team-b/tidegate-limits: missing",
			"apply NetworkPolicy team-b/tidegate-namespace-egress: missing",
			"apply NetworkPolicy team-b/tidegate-namespace-isolation: missing",
			"apply ResourceQuota team-b/tidegate-quota: missing",
			"apply NetworkPolicy tidegate-apps/tidegate-apps-deny-ingress: missing",
			"apply NetworkPolicy tidegate-apps/tidegate-apps-egress: missing",
		}},
		{"one deleted by hand", func() []Object {
			have := listAll(t, wanted)
			return append(have[:1], have[2:]...)
		}, present, []string{"apply NetworkPolicy shared/tidegate-namespace-egress: missing"}},
		{"a tenant's egress rule opened to instance metadata by hand", func() []Object {
			have := listAll(t, wanted)
			p := find(have, "team-a", NamespaceEgressPolicy).(*networkingv1.NetworkPolicy)
			p.Spec.Egress[2].To[0].IPBlock.Except = nil
			return have
		}, present, []string{"apply NetworkPolicy team-a/tidegate-namespace-egress: spec changed"}},
		{"an egress rule edited by hand", func() []Object {
			have := listAll(t, wanted)
			p := find(have, "tidegate-apps", AppsEgressPolicy).(*networkingv1.NetworkPolicy)
			p.Spec.Egress[1].To[0].IPBlock.Except = p.Spec.Egress[1].To[0].IPBlock.Except[1:]
			return have
		}, present, []string{"apply NetworkPolicy tidegate-apps/tidegate-apps-egress: spec changed"}},
		{"a quota raised by hand", func() []Object {
			have := listAll(t, wanted)
			find(have, "team-a", NamespaceQuota).(*corev1.ResourceQuota).Spec.Hard[corev1.ResourcePods] = resource.MustParse("1000")
			return have
		}, present, []string{"apply ResourceQuota team-a/tidegate-quota: spec changed"}},
		{"a quantity written another way is the same", func() []Object {
			have := listAll(t, wanted)
			find(have, "team-a", NamespaceLimits).(*corev1.LimitRange).Spec.Limits[0].Default[corev1.ResourceCPU] = resource.MustParse("1000m")
			return have
		}, present, nil},
		{"our label taken off", func() []Object {
			have := listAll(t, wanted)
			find(have, "team-b", NamespaceLimits).SetLabels(map[string]string{ManagedByLabel: ManagedBy, OwnerLabel: settings().Owner})
			return have
		}, present, []string{"apply LimitRange team-b/tidegate-limits: labels changed"}},
		{"labels of someone else's beside ours are left", func() []Object {
			have := listAll(t, wanted)
			o := find(have, "team-b", NamespaceLimits)
			o.GetLabels()["owner"] = "ops"
			return have
		}, present, nil},
		{"a namespace no longer held loses ours, and only ours", func() []Object {
			return append(listAll(t, wanted), stranger("old", NamespacePolicy), stranger("old", NamespaceQuota), stranger("old", "team-made"))
		}, present, []string{"delete NetworkPolicy old/tidegate-namespace-isolation", "delete NetworkPolicy old/tidegate-quota"}},
		{"never deleted in the cluster's namespaces or default", func() []Object {
			return append(listAll(t, wanted), stranger("kube-system", NamespacePolicy), stranger("default", NamespacePolicy))
		}, present, nil},
		{"a namespace missing (or being deleted) is not written", func() []Object { return nil }, map[string]bool{}, nil},
	} {
		if diff := cmp.Diff(tc.want, describe(Plan(wanted, tc.have(), tc.exists))); diff != "" {
			t.Errorf("Plan(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}
