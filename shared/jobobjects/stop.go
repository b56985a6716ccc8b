package jobobjects

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/jobs"
)

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// defaultGrace is Kubernetes' terminationGracePeriodSeconds for a pod that sets none.
const defaultGrace = 30 * time.Second

// StopAttempt stops what attempt of job j made, as an eviction does: each of the attempt's pods
// is deleted with its own terminationGracePeriodSeconds, at most graceMax, so its containers get
// SIGTERM and that long to write a checkpoint before they are killed; then its objects are deleted
// as DeleteAttempt deletes them. Pods first, since deleting a Job in the foreground has the garbage
// collector delete its pods with their own grace period, unbounded; a pod its controller makes
// again in between goes with the objects. One already gone is no error.
func StopAttempt(ctx context.Context, dc dynamic.Interface, j jobs.Job, attempt int, graceMax time.Duration) error {
	var errs []error
	pods, err := dc.Resource(podsResource).Namespace(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: jobs.IDKey + "=" + j.ID})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing the pods of job %s: %w", j.ID, err))
		pods = &unstructured.UnstructuredList{}
	}
	for _, p := range pods.Items {
		if AttemptOf(p.GetAnnotations()) > attempt {
			continue // a later attempt's, applied meanwhile
		}
		grace := defaultGrace
		if s, found, _ := unstructured.NestedInt64(p.Object, "spec", "terminationGracePeriodSeconds"); found {
			grace = time.Duration(s) * time.Second
		}
		seconds := int64(min(grace, graceMax) / time.Second)
		uid := p.GetUID()
		err := dc.Resource(podsResource).Namespace(j.Namespace).Delete(ctx, p.GetName(), metav1.DeleteOptions{
			GracePeriodSeconds: &seconds, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("stopping pod %s/%s of job %s: %w", j.Namespace, p.GetName(), j.ID, err))
		}
	}
	return errors.Join(append(errs, DeleteAttempt(ctx, dc, j, attempt))...)
}
