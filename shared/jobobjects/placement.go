package jobobjects

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tidegate/tidegate/shared/costing"
	"github.com/tidegate/tidegate/shared/jobs"
)

// Node labels that say where a pod ran, as EKS and Karpenter set them.
var placementLabels = map[string]string{
	"zone":     "topology.kubernetes.io/zone",
	"region":   "topology.kubernetes.io/region",
	"arch":     "kubernetes.io/arch",
	"nodepool": "karpenter.sh/nodepool",
}

// Placement is API.md's placement of a job from its pods (and, when known, their nodes), taken in
// the order the pods were made:
//   - node_name, node_instance_type, node_capacity_type, node_labels: the first scheduled pod's node;
//   - nodes[]: every node with its instance and capacity type, labels, hardware and its pods
//     (name, phase), and lookup_failed for one that could not be read;
//   - pod_phases (pod → phase), phase_counts (phase → pods), pod_phase (the phase every pod shares,
//     else null: a mixed aggregate would mislead);
//   - scheduled_pods, unscheduled_pods, and unscheduled[]: each pod without a node, its phase and
//     the scheduler's reason, message and since.
func Placement(pods []corev1.Pod, nodes map[string]corev1.Node) map[string]any {
	pods = slices.Clone(pods)
	slices.SortStableFunc(pods, func(a, b corev1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	out := map[string]any{}
	phases, counts := map[string]string{}, map[string]int{}
	var order []string
	byNode := map[string][]map[string]any{}
	unscheduled := []map[string]any{}
	for _, p := range pods {
		phase := cmp.Or(string(p.Status.Phase), "Unknown")
		phases[p.Name] = phase
		counts[phase]++
		if p.Spec.NodeName == "" {
			unscheduled = append(unscheduled, unscheduledPod(p, phase))
			continue
		}
		if _, seen := byNode[p.Spec.NodeName]; !seen {
			order = append(order, p.Spec.NodeName)
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], map[string]any{"name": p.Name, "phase": phase})
	}
	ns := []map[string]any{}
	for i, name := range order {
		entry := nodeEntry(name, nodes)
		entry["pods"] = byNode[name]
		ns = append(ns, entry)
		if i == 0 {
			out["node_name"] = name
			if n, ok := nodes[name]; ok {
				out["node_instance_type"] = n.Labels["node.kubernetes.io/instance-type"]
				out["node_capacity_type"] = capacityType(n.Labels)
				out["node_labels"] = entry["labels"]
			}
		}
	}
	out["nodes"], out["pod_phases"], out["phase_counts"] = ns, phases, counts
	out["pod_phase"] = nil
	if len(counts) == 1 {
		for phase := range counts {
			out["pod_phase"] = phase
		}
	}
	out["scheduled_pods"], out["unscheduled_pods"] = len(pods)-len(unscheduled), len(unscheduled)
	if len(unscheduled) > 0 {
		out["unscheduled"] = unscheduled
	}
	return out
}

// unscheduledPod is a pod without a node: its phase and, when the scheduler has said, why and
// since when (its PodScheduled condition).
func unscheduledPod(p corev1.Pod, phase string) map[string]any {
	u := map[string]any{"pod": p.Name, "phase": phase}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			u["reason"], u["message"] = c.Reason, c.Message
			if !c.LastTransitionTime.IsZero() {
				u["since"] = c.LastTransitionTime.UTC()
			}
		}
	}
	return u
}

// nodeEntry is one node of a placement: its name, and what its labels and status say of it when
// it was read; lookup_failed when it was not.
func nodeEntry(name string, nodes map[string]corev1.Node) map[string]any {
	n, ok := nodes[name]
	if !ok {
		return map[string]any{"name": name, "lookup_failed": true}
	}
	labels := map[string]string{}
	for k, l := range placementLabels {
		if v, ok := n.Labels[l]; ok {
			labels[k] = v
		}
	}
	hw := map[string]any{}
	for key, res := range map[string]corev1.ResourceName{
		"cpu": corev1.ResourceCPU, "memory": corev1.ResourceMemory, "ephemeral_storage": corev1.ResourceEphemeralStorage,
		"gpus": "nvidia.com/gpu", "neuron_devices": "aws.amazon.com/neuron", "pods": corev1.ResourcePods,
	} {
		if q, ok := n.Status.Capacity[res]; ok {
			hw[key] = q.String()
		}
	}
	if a := n.Status.NodeInfo.Architecture; a != "" {
		hw["arch"] = a
	}
	if img := n.Status.NodeInfo.OSImage; img != "" {
		hw["os_image"] = img
	}
	return map[string]any{
		"name": name, "instance_type": n.Labels["node.kubernetes.io/instance-type"],
		"capacity_type": capacityType(n.Labels), "labels": labels, "hardware": hw,
	}
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

// CostInputs is what costing.Estimate reads of pods and their nodes: each scheduled pod's run,
// from its start to its last container's end (end, the job's end, for a container that had not
// ended), and each read node's instance type, capacity type and zone.
func CostInputs(pods []corev1.Pod, nodes map[string]corev1.Node, end time.Time) ([]costing.Run, map[string]costing.Node) {
	var runs []costing.Run
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.StartTime == nil {
			continue
		}
		r := costing.Run{Pod: p.Name, Node: p.Spec.NodeName, Start: p.Status.StartTime.Time}
		for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			finished := end
			if t := c.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
				finished = t.FinishedAt.Time
			}
			r.End = maxTime(r.End, finished)
		}
		if len(p.Status.ContainerStatuses) == 0 {
			r.End = end
		}
		runs = append(runs, r)
	}
	cn := make(map[string]costing.Node, len(nodes))
	for name, n := range nodes {
		cn[name] = costing.Node{
			InstanceType: n.Labels["node.kubernetes.io/instance-type"],
			CapacityType: capacityType(n.Labels),
			Zone:         n.Labels[placementLabels["zone"]],
		}
	}
	return runs, cn
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
