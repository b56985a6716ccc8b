package jobobjects

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/podspec"
)

// Delete deletes the objects of job j from the cluster, in the foreground (their pods first),
// leaving alone any object that is not this job's. Objects already gone are no error.
func Delete(ctx context.Context, dc dynamic.Interface, j jobs.Job) error {
	return deleteUpTo(ctx, dc, j, 0)
}

// DeleteAttempt deletes, as Delete does, the objects of job j that its attempts up to attempt
// made, leaving alone those of a later attempt: the beat that retried j deletes what the ended
// attempt left after recording the retry, by when a drain may have applied the next.
func DeleteAttempt(ctx context.Context, dc dynamic.Interface, j jobs.Job, attempt int) error {
	return deleteUpTo(ctx, dc, j, attempt)
}

// deleteUpTo deletes j's objects made by attempts up to attempt (any attempt when 0): those of
// its manifests read by name (Applied) that carry its id, each in the foreground and only if it is
// still the object read (DeleteEach).
func deleteUpTo(ctx context.Context, dc dynamic.Interface, j jobs.Job, attempt int) error {
	seen, err := Applied(ctx, dc, j)
	if err != nil {
		return err
	}
	var doomed []Object
	for _, o := range seen {
		if o.Job == j.ID && (attempt == 0 || o.Attempt <= attempt) {
			doomed = append(doomed, o)
		}
	}
	_, err = DeleteEach(ctx, dc, doomed)
	return err
}

// Applied reads, by name, the objects of job j's manifests that are in its cluster, as AtEnd
// takes them; each one's Job is the id on its annotation, which Apply sets.
func Applied(ctx context.Context, dc dynamic.Interface, j jobs.Job) ([]Object, error) {
	var out []Object
	for _, m := range j.Manifests {
		obj := &unstructured.Unstructured{Object: m}
		gvk := obj.GroupVersionKind()
		res, ok := resources[gvk]
		if !ok {
			continue
		}
		resource := gvk.GroupVersion().WithResource(res)
		existing, err := dc.Resource(resource).Namespace(j.Namespace).Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, j.Namespace, obj.GetName(), err)
		}
		out = append(out, observe(resource, existing, existing.GetAnnotations()[jobs.IDKey]))
	}
	return out, nil
}

// Labelled LISTs, page by page (pageSize objects a page), every object of kind gvk in any
// namespace carrying the job-id label and, where stack is set, applied by that deployment (Owned),
// each with the id on its label. A kind Tidegate cannot apply is an error.
func Labelled(ctx context.Context, dc dynamic.Interface, gvk schema.GroupVersionKind, stack string, pageSize int64) ([]Object, error) {
	res, ok := resources[gvk]
	if !ok {
		return nil, fmt.Errorf("%s %w", gvk, ErrNotApplicable)
	}
	resource := gvk.GroupVersion().WithResource(res)
	var out []Object
	opts := metav1.ListOptions{LabelSelector: jobs.IDKey, Limit: pageSize}
	if stack != "" {
		opts.LabelSelector += "," + podspec.StackLabel + "=" + stack
	}
	for {
		l, err := dc.Resource(resource).Namespace(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s by %s: %w", gvk.Kind, jobs.IDKey, err)
		}
		for i := range l.Items {
			out = append(out, observe(resource, &l.Items[i], l.Items[i].GetLabels()[jobs.IDKey]))
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// DeleteEach deletes each of objs in the foreground (a workload's pods first), each only if it is
// still the object read (a UID precondition), and answers those it deleted. One gone already, or
// replaced since, is no error and not counted; one that fails does not stop the others.
func DeleteEach(ctx context.Context, dc dynamic.Interface, objs []Object) ([]Object, error) {
	foreground := metav1.DeletePropagationForeground
	var deleted []Object
	var errs []error
	for _, o := range objs {
		err := dc.Resource(o.Resource).Namespace(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{
			PropagationPolicy: &foreground, Preconditions: &metav1.Preconditions{UID: &o.UID}})
		switch {
		case err == nil:
			deleted = append(deleted, o)
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		default:
			errs = append(errs, fmt.Errorf("deleting %s %s/%s of job %s: %w", o.Kind, o.Namespace, o.Name, o.Job, err))
		}
	}
	return deleted, errors.Join(errs...)
}
