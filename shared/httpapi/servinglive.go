package httpapi

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
)

// servingView is one Deployment or StatefulSet of an active long-running job as GET
// /api/v1/jobs/{id} shows it: its replicas, how many are ready, available and up to date, and
// whether it is available as the beat judges it. A job that lost availability after it ran stays
// running; this is where its owner sees it.
type servingView struct {
	Kind       string           `json:"kind"`
	Name       string           `json:"name"`
	Replicas   int32            `json:"replicas"`
	Ready      int32            `json:"ready_replicas"`
	Available  int32            `json:"available_replicas"`
	Updated    int32            `json:"updated_replicas"`
	IsUp       bool             `json:"available"`
	Conditions []map[string]any `json:"conditions"`
}

// liveServing is an active long-running job's Deployments and StatefulSets now (two LISTs in its
// namespace by the job-id label), or a fixed text saying the cluster could not be read.
func (a *api) liveServing(ctx context.Context, j jobs.Job) ([]servingView, string) {
	if !j.LongRunning() || !j.Status.Active() || a.clusters == nil {
		return nil, ""
	}
	kc, err := a.clusters.Client(ctx, j.Region)
	if err != nil {
		return nil, a.clusterProblem(ctx, "reaching the cluster", err)
	}
	opts := metav1.ListOptions{LabelSelector: jobobjects.Selector(j.ID)}
	deps, err := kc.AppsV1().Deployments(j.Namespace).List(ctx, opts)
	if err != nil {
		return nil, a.clusterProblem(ctx, "listing the job's Deployments", err)
	}
	sets, err := kc.AppsV1().StatefulSets(j.Namespace).List(ctx, opts)
	if err != nil {
		return nil, a.clusterProblem(ctx, "listing the job's StatefulSets", err)
	}
	out := []servingView{}
	for _, d := range deps.Items {
		v := servingView{Kind: "Deployment", Name: d.Name, Replicas: replicas(d.Spec.Replicas), Ready: d.Status.ReadyReplicas,
			Available: d.Status.AvailableReplicas, Updated: d.Status.UpdatedReplicas, Conditions: []map[string]any{}}
		for _, c := range d.Status.Conditions {
			v.Conditions = append(v.Conditions, map[string]any{"type": c.Type, "status": c.Status, "reason": c.Reason, "message": c.Message,
				"last_transition_time": timeOrNil(c.LastTransitionTime.Time)})
			if c.Type == appsv1.DeploymentAvailable {
				v.IsUp = c.Status == corev1.ConditionTrue && d.Status.ObservedGeneration >= d.Generation
			}
		}
		out = append(out, v)
	}
	for _, s := range sets.Items {
		v := servingView{Kind: "StatefulSet", Name: s.Name, Replicas: replicas(s.Spec.Replicas), Ready: s.Status.ReadyReplicas,
			Available: s.Status.AvailableReplicas, Updated: s.Status.UpdatedReplicas, Conditions: []map[string]any{}}
		v.IsUp = s.Status.ObservedGeneration >= s.Generation && v.Available >= v.Replicas
		out = append(out, v)
	}
	return out, ""
}

// replicas is a spec's replicas, one when unset (the API server's default).
func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}
