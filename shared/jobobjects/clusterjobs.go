package jobobjects

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/tidegate/tidegate/shared/jobs"
)

// BatchJobs lists job j's batch/v1 Jobs through the batch group's REST client (client-go's
// BatchV1().RESTClient()), as JSON, like the core reads here.
func BatchJobs(ctx context.Context, batch rest.Interface, j jobs.Job) ([]batchv1.Job, error) {
	var l batchv1.JobList
	if err := get(ctx, batch.Get().Namespace(j.Namespace).Resource("jobs").Param("labelSelector", Selector(j.ID)), &l); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// EndClusterJobs is ClusterJobs of job j's batch Jobs as they are when it ends, or nothing if they
// cannot be read within finalReads: like a missing log tail, it never holds a job's end.
func EndClusterJobs(ctx context.Context, batch rest.Interface, j jobs.Job) []jobs.ClusterJob {
	ctx, cancel := context.WithTimeout(ctx, finalReads)
	defer cancel()
	items, err := BatchJobs(ctx, batch, j)
	if err != nil {
		return nil
	}
	return ClusterJobs(items)
}

// ClusterJobs is what the API shows of batch Jobs, and what a job's record keeps of them when
// it ends: each one's parallelism, completions and backoffLimit, its counts of active,
// succeeded and failed pods, its start and completion times and its conditions. Never nil.
func ClusterJobs(items []batchv1.Job) []jobs.ClusterJob {
	out := make([]jobs.ClusterJob, 0, len(items))
	for _, b := range items {
		cj := jobs.ClusterJob{
			Name: b.Name, Parallelism: b.Spec.Parallelism, Completions: b.Spec.Completions, BackoffLimit: b.Spec.BackoffLimit,
			Active: b.Status.Active, Succeeded: b.Status.Succeeded, Failed: b.Status.Failed,
			StartTime: timeOf(b.Status.StartTime), CompletionTime: timeOf(b.Status.CompletionTime),
			Conditions: make([]jobs.ClusterJobCondition, 0, len(b.Status.Conditions)),
		}
		for _, c := range b.Status.Conditions {
			cj.Conditions = append(cj.Conditions, jobs.ClusterJobCondition{
				Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
				LastTransitionTime: timeOf(&c.LastTransitionTime),
			})
		}
		out = append(out, cj)
	}
	return out
}

// timeOf is t in UTC, nil when unset.
func timeOf(t *metav1.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
