package reconcile

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/jobs"
)

// A long-running job (jobs.KindLongRunning: its manifests run only Deployments and
// StatefulSets) is pending until all of them are available at once, then running. It never
// succeeds, and the beat never ends it: a Deployment that loses availability (a node reclaimed, a
// crashing rollout) is one Kubernetes works to mend, so its job stays running, and the job's
// pods and events say what is wrong. It ends when it is cancelled, or, like any job, when its
// objects are deleted behind Tidegate's back (goneGrace).
//
// The beat reads their status from one LIST a kind per region (listServing), beside the LISTs
// of Jobs and pods, and reads none of their pods (unownedPods leaves them out): a service of a
// hundred replicas costs the beat nothing more than one of one.

// serving is what the beat reads of one Deployment or StatefulSet of a job.
type serving struct {
	job        string // its job's id, from its label
	Kind, Name string
	Available  bool
}

// FollowLongRunning decides a long-running job's next steps from its Deployments and
// StatefulSets, as Follow does a batch job's: a pending one whose objects are all available
// (and that has some) starts running; nothing else moves it.
func FollowLongRunning(current jobs.Status, objs []serving) []Step {
	if current != jobs.StatusPending || len(objs) == 0 {
		return nil
	}
	for _, o := range objs {
		if !o.Available {
			return nil
		}
	}
	return []Step{{To: jobs.StatusRunning}}
}

// deploymentServing reads d as the beat follows it: available when its controller says it has
// its minimum availability (the Available condition, true once availableReplicas reaches its
// replicas less maxUnavailable) for its current spec.
func deploymentServing(d appsv1.Deployment) serving {
	s := serving{job: d.Labels[jobs.IDKey], Kind: "Deployment", Name: d.Name}
	if d.Status.ObservedGeneration < d.Generation {
		return s // the controller has not yet looked at this spec
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			s.Available = c.Status == corev1.ConditionTrue
		}
	}
	return s
}

// statefulSetServing reads ss as the beat follows it: available when every replica its spec asks
// for (one when unset) is available. A StatefulSet has no Available condition.
func statefulSetServing(ss appsv1.StatefulSet) serving {
	want := int32(1)
	if ss.Spec.Replicas != nil {
		want = *ss.Spec.Replicas
	}
	return serving{job: ss.Labels[jobs.IDKey], Kind: "StatefulSet", Name: ss.Name,
		Available: ss.Status.ObservedGeneration >= ss.Generation && ss.Status.AvailableReplicas >= want}
}

// listServing LISTs every Deployment and StatefulSet carrying a job id, page by page, the two at
// once, grouped by job id.
func listServing(ctx context.Context, kc kubernetes.Interface) (map[string][]serving, error) {
	var sets map[string][]serving
	var setErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		sets, setErr = listPages(ctx, jobs.IDKey, func(opts metav1.ListOptions) ([]serving, string, error) {
			l, err := kc.AppsV1().StatefulSets("").List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			out := make([]serving, len(l.Items))
			for i, ss := range l.Items {
				out[i] = statefulSetServing(ss)
			}
			return out, l.Continue, nil
		}, servingJob)
	}()
	deps, depErr := listPages(ctx, jobs.IDKey, func(opts metav1.ListOptions) ([]serving, string, error) {
		l, err := kc.AppsV1().Deployments("").List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		out := make([]serving, len(l.Items))
		for i, d := range l.Items {
			out[i] = deploymentServing(d)
		}
		return out, l.Continue, nil
	}, servingJob)
	<-done
	if err := errors.Join(depErr, setErr); err != nil {
		return nil, err
	}
	for id, s := range sets {
		deps[id] = append(deps[id], s...)
	}
	return deps, nil
}

func servingJob(s serving) string { return s.job }
