package isolating

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/tidegate/tidegate/shared/isolation"
)

// listPage is one LIST page: the apiserver's default chunk size for kubectl.
const listPage = 500

// cluster reads and writes one region's isolation objects.
type cluster struct {
	kc       kubernetes.Interface
	selector string
}

// read LISTs our objects of each kind and the namespaces that exist (not being deleted), all at
// once: four LISTs, whatever the number of tenants.
func (c cluster) read(ctx context.Context) (have []isolation.Object, exists map[string]bool, err error) {
	type answer struct {
		objs []isolation.Object
		err  error
	}
	lists := []func(context.Context) ([]isolation.Object, error){c.policies, c.quotas, c.limitRanges}
	answers := make(chan answer, len(lists))
	for _, list := range lists {
		go func() {
			objs, err := list(ctx)
			answers <- answer{objs, err}
		}()
	}
	exists, nsErr := c.namespaces(ctx)
	errs := []error{nsErr}
	for range lists {
		a := <-answers
		have, errs = append(have, a.objs...), append(errs, a.err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return have, exists, nil
}

// page LISTs every page of one kind across namespaces; next answers a page and its continue token.
func page(ctx context.Context, what string, next func(context.Context, metav1.ListOptions) ([]isolation.Object, string, error), selector string) ([]isolation.Object, error) {
	var out []isolation.Object
	opts := metav1.ListOptions{LabelSelector: selector, Limit: listPage}
	for {
		objs, cont, err := next(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", what, err)
		}
		out = append(out, objs...)
		if opts.Continue = cont; cont == "" {
			return out, nil
		}
	}
}

func (c cluster) policies(ctx context.Context) ([]isolation.Object, error) {
	return page(ctx, "NetworkPolicies", func(ctx context.Context, o metav1.ListOptions) ([]isolation.Object, string, error) {
		l, err := c.kc.NetworkingV1().NetworkPolicies(metav1.NamespaceAll).List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return objects(l.Items), l.Continue, nil
	}, c.selector)
}

func (c cluster) quotas(ctx context.Context) ([]isolation.Object, error) {
	return page(ctx, "ResourceQuotas", func(ctx context.Context, o metav1.ListOptions) ([]isolation.Object, string, error) {
		l, err := c.kc.CoreV1().ResourceQuotas(metav1.NamespaceAll).List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return objects(l.Items), l.Continue, nil
	}, c.selector)
}

func (c cluster) limitRanges(ctx context.Context) ([]isolation.Object, error) {
	return page(ctx, "LimitRanges", func(ctx context.Context, o metav1.ListOptions) ([]isolation.Object, string, error) {
		l, err := c.kc.CoreV1().LimitRanges(metav1.NamespaceAll).List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return objects(l.Items), l.Continue, nil
	}, c.selector)
}

// objects points at each item of a list as the isolation.Object it is.
func objects[T any, P interface {
	*T
	isolation.Object
}](items []T) []isolation.Object {
	out := make([]isolation.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// namespaces are the cluster's namespaces that are not being deleted: nothing can be made in
// one that is missing or terminating.
func (c cluster) namespaces(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	opts := metav1.ListOptions{Limit: listPage}
	for {
		l, err := c.kc.CoreV1().Namespaces().List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing namespaces: %w", err)
		}
		for _, ns := range l.Items {
			out[ns.Name] = ns.Status.Phase != corev1.NamespaceTerminating && ns.DeletionTimestamp == nil
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			return out, nil
		}
	}
}

// apply server-side applies o as field manager tidegate, forcing: the fields it sets are ours,
// whoever changed them since.
func (c cluster) apply(ctx context.Context, k isolation.Key, o isolation.Object) error {
	body, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encoding: %w", err)
	}
	opts := metav1.PatchOptions{FieldManager: isolation.FieldManager, Force: ptr.To(true)}
	switch k.Kind {
	case isolation.KindNetworkPolicy:
		_, err = c.kc.NetworkingV1().NetworkPolicies(k.Namespace).Patch(ctx, k.Name, types.ApplyPatchType, body, opts)
	case isolation.KindResourceQuota:
		_, err = c.kc.CoreV1().ResourceQuotas(k.Namespace).Patch(ctx, k.Name, types.ApplyPatchType, body, opts)
	case isolation.KindLimitRange:
		_, err = c.kc.CoreV1().LimitRanges(k.Namespace).Patch(ctx, k.Name, types.ApplyPatchType, body, opts)
	default:
		err = fmt.Errorf("kind %q is not one of ours", k.Kind)
	}
	return err
}

// remove deletes one object of ours; one already gone is no error.
func (c cluster) remove(ctx context.Context, k isolation.Key) error {
	var err error
	switch k.Kind {
	case isolation.KindNetworkPolicy:
		err = c.kc.NetworkingV1().NetworkPolicies(k.Namespace).Delete(ctx, k.Name, metav1.DeleteOptions{})
	case isolation.KindResourceQuota:
		err = c.kc.CoreV1().ResourceQuotas(k.Namespace).Delete(ctx, k.Name, metav1.DeleteOptions{})
	case isolation.KindLimitRange:
		err = c.kc.CoreV1().LimitRanges(k.Namespace).Delete(ctx, k.Name, metav1.DeleteOptions{})
	default:
		err = fmt.Errorf("kind %q is not one of ours", k.Kind)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
