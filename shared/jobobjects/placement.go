package jobobjects

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Node labels that say where a pod ran, as EKS and Karpenter set them.
var placementLabels = map[string]string{
	"zone":     "topology.kubernetes.io/zone",
	"region":   "topology.kubernetes.io/region",
	"arch":     "kubernetes.io/arch",
	"nodepool": "karpenter.sh/nodepool",
}

// Placement is API.md's placement of a job from its pods (and, when known, their nodes): the first
// scheduled pod's node, every node with its pods, the pods' phases, and the pods not scheduled with
// the scheduler's reason.
func Placement(pods []corev1.Pod, nodes map[string]corev1.Node) map[string]any {
	out := map[string]any{}
	phases := map[string]string{}
	byNode := map[string][]string{}
	var unscheduled []map[string]string
	for _, p := range pods {
		phases[p.Name] = string(p.Status.Phase)
		if p.Spec.NodeName == "" {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
					unscheduled = append(unscheduled, map[string]string{"pod": p.Name, "reason": c.Reason, "message": c.Message})
				}
			}
			continue
		}
		if _, ok := out["node_name"]; !ok {
			out["node_name"] = p.Spec.NodeName
			if n, ok := nodes[p.Spec.NodeName]; ok {
				out["node_instance_type"] = n.Labels["node.kubernetes.io/instance-type"]
				out["node_capacity_type"] = capacityType(n.Labels)
				labels := map[string]string{}
				for k, l := range placementLabels {
					if v, ok := n.Labels[l]; ok {
						labels[k] = v
					}
				}
				out["node_labels"] = labels
			}
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
	}
	var ns []map[string]any
	for n, ps := range byNode {
		ns = append(ns, map[string]any{"name": n, "pods": ps})
	}
	out["nodes"], out["pod_phases"] = ns, phases
	if len(unscheduled) > 0 {
		out["unscheduled"] = unscheduled
	}
	return out
}

// capacityType reads spot or on-demand from Karpenter's label, or EKS managed node groups'.
func capacityType(labels map[string]string) string {
	if v := labels["karpenter.sh/capacity-type"]; v != "" {
		return v
	}
	switch labels["eks.amazonaws.com/capacityType"] {
	case "SPOT":
		return "spot"
	case "ON_DEMAND":
		return "on-demand"
	}
	return ""
}

// Exits lists the containers of pods (init containers too) that ended in error: terminated with
// a non-zero exit code, or killed. In pod order, each pod's init containers first.
func Exits(pods []corev1.Pod) []jobs.Exit {
	var out []jobs.Exit
	for _, p := range pods {
		for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			if t := c.State.Terminated; t != nil && (t.ExitCode != 0 || t.Reason == "OOMKilled") {
				out = append(out, jobs.Exit{Pod: p.Name, Container: c.Name, ExitCode: t.ExitCode, Reason: t.Reason})
			}
		}
	}
	return out
}
