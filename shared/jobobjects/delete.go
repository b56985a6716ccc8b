package jobobjects

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/jobs"
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

// deleteUpTo deletes j's objects made by attempts up to attempt (any attempt when 0).
func deleteUpTo(ctx context.Context, dc dynamic.Interface, j jobs.Job, attempt int) error {
	foreground := metav1.DeletePropagationForeground
	for _, m := range j.Manifests {
		obj := &unstructured.Unstructured{Object: m}
		gvk := obj.GroupVersionKind()
		res, ok := resources[gvk]
		if !ok {
			continue
		}
		ri := dc.Resource(gvk.GroupVersion().WithResource(res)).Namespace(j.Namespace)
		existing, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, j.Namespace, obj.GetName(), err)
		}
		if existing.GetAnnotations()[jobs.IDKey] != j.ID || (attempt > 0 && AttemptOf(existing.GetAnnotations()) > attempt) {
			continue
		}
		// The UID precondition makes sure it is this object, not a namesake made since the Get.
		uid := existing.GetUID()
		err = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &foreground, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", gvk.Kind, j.Namespace, obj.GetName(), err)
		}
	}
	return nil
}
