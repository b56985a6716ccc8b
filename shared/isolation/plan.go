package isolation

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/tidegate/tidegate/shared/tenancy"
)

// Kind is the kind of one of our objects.
type Kind string

// The kinds this package wants.
const (
	KindNetworkPolicy Kind = "NetworkPolicy"
	KindResourceQuota Kind = "ResourceQuota"
	KindLimitRange    Kind = "LimitRange"
)

// Key names an object of a cluster.
type Key struct {
	Kind      Kind
	Namespace string
	Name      string
}

func (k Key) String() string { return fmt.Sprintf("%s %s/%s", k.Kind, k.Namespace, k.Name) }

// KeyOf is o's key; a listed object carries no kind of its own, so it is read from o's type.
func KeyOf(o Object) Key {
	k := Key{Namespace: o.GetNamespace(), Name: o.GetName()}
	switch o.(type) {
	case *networkingv1.NetworkPolicy:
		k.Kind = KindNetworkPolicy
	case *corev1.ResourceQuota:
		k.Kind = KindResourceQuota
	case *corev1.LimitRange:
		k.Kind = KindLimitRange
	}
	return k
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
}

// Step is one change to a cluster: Apply or Delete.
type Step interface{ step() }

// Apply makes Object exist as it is (server-side apply, forced: the fields are ours). Why says
// what the cluster held: missing, or changed (and what).
type Apply struct {
	Object Object
	Why    string
}

// Delete removes an object of ours that no namespace held wants any more.
type Delete struct{ Key Key }

func (Apply) step()  {}
func (Delete) step() {}

// Reasons an object is applied.
const (
	WhyMissing = "missing"
	WhyLabels  = "labels changed"
	WhySpec    = "spec changed"
)

// Plan is the steps that make have, the objects of ours listed in a cluster (Selector), match
// wanted: each wanted object missing or changed is applied, in a namespace that exists (by
// exists, which holds the cluster's namespaces not being deleted); each listed object of ours
// that is not wanted is deleted, except in the cluster's own namespaces and default, where
// Tidegate never writes. An object is changed when it lacks one of our labels or its spec is
// not the wanted one, compared as the API server compares (quantities by value, a missing list
// as an empty one); nothing else of it matters. Nothing changed is no steps.
func Plan(wanted, have []Object, exists map[string]bool) []Step {
	listed := make(map[Key]Object, len(have))
	for _, o := range have {
		listed[KeyOf(o)] = o
	}
	var steps []Step
	want := make(map[Key]bool, len(wanted))
	for _, w := range wanted {
		k := KeyOf(w)
		want[k] = true
		if !exists[k.Namespace] {
			continue
		}
		h, ok := listed[k]
		switch {
		case !ok:
			steps = append(steps, Apply{Object: w, Why: WhyMissing})
		case !hasLabels(h, w.GetLabels()):
			steps = append(steps, Apply{Object: w, Why: WhyLabels})
		case !sameSpec(w, h):
			steps = append(steps, Apply{Object: w, Why: WhySpec})
		}
	}
	var gone []Key
	for k := range listed {
		if !want[k] && slices.Contains(names, k.Name) && tenancy.ReservedNamespace(k.Namespace, "") == nil {
			gone = append(gone, k)
		}
	}
	slices.SortFunc(gone, compareKeys)
	for _, k := range gone {
		steps = append(steps, Delete{Key: k})
	}
	return steps
}

// hasLabels reports whether o carries every one of labels.
func hasLabels(o Object, labels map[string]string) bool {
	have := o.GetLabels()
	for k, v := range labels {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// sameSpec reports whether want's spec and have's are the same as the API server would judge.
func sameSpec(want, have Object) bool {
	switch w := want.(type) {
	case *networkingv1.NetworkPolicy:
		h, ok := have.(*networkingv1.NetworkPolicy)
		return ok && equality.Semantic.DeepEqual(w.Spec, h.Spec)
	case *corev1.ResourceQuota:
		h, ok := have.(*corev1.ResourceQuota)
		return ok && equality.Semantic.DeepEqual(w.Spec, h.Spec)
	case *corev1.LimitRange:
		h, ok := have.(*corev1.LimitRange)
		return ok && equality.Semantic.DeepEqual(w.Spec, h.Spec)
	}
	return false
}
