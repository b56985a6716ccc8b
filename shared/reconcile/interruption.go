package reconcile

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tidegate/tidegate/shared/capacitytype"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
)

// terminationTaints are the node taints that say a node is going away, with whether the taint
// alone says it is a spot reclaim: AWS Node Termination Handler's spot interruption notice;
// Karpenter's disruption taints (v1's karpenter.sh/disrupted, and karpenter.sh/disruption before
// it), set on a spot node it reclaims as on one it consolidates; and Kubernetes'
// out-of-service taint, which an operator or a cloud controller sets on a node that shut down.
var terminationTaints = map[string]bool{
	"aws-node-termination-handler/spot-itn": true,
	"karpenter.sh/disrupted":                false,
	"karpenter.sh/disruption":               false,
	"node.kubernetes.io/out-of-service":     false,
}

// notReadyGrace is how long a node may be not ready before its pods count as lost to a node
// failure: a kubelet's missed heartbeats are often back within a minute, and Kubernetes itself
// waits five before evicting (the node lifecycle controller's default); two lets a retry start
// before that without taking a blip for a failure.
const notReadyGrace = 2 * time.Minute

// nodeView is what judging interruptions needs of a cluster's nodes: the nodes listed by name,
// the capacity-type label and its on-demand value, and the nodes earlier beats saw on spot
// capacity (a node gone from the list has no labels left to read).
type nodeView struct {
	nodes     map[string]*corev1.Node
	label     string
	wasSpot   map[string]bool
	listed    bool // nodes holds the cluster's nodes; false when they were not read
	onDemand  string
	checkedAt time.Time
}

func newNodeView(nodes []corev1.Node, label string, wasSpot map[string]bool, now time.Time) nodeView {
	label = cmp.Or(label, capacitytype.Default)
	v := nodeView{nodes: make(map[string]*corev1.Node, len(nodes)), label: label, wasSpot: wasSpot, listed: nodes != nil, checkedAt: now}
	v.onDemand, _ = capacitytype.OnDemandValue(label)
	for i := range nodes {
		v.nodes[nodes[i].Name] = &nodes[i]
	}
	return v
}

// capacity says whether node name is on spot capacity: yes, no, or unknown ("").
func (v nodeView) capacity(name string, pod corev1.Pod) string {
	if n := v.nodes[name]; n != nil {
		switch val, ok := n.Labels[v.label]; {
		case !ok:
			return ""
		case val == v.onDemand:
			return "on-demand"
		}
		return "spot"
	}
	if v.wasSpot[name] {
		return "spot"
	}
	if sel := pod.Spec.NodeSelector[v.label]; sel != "" && sel != v.onDemand {
		return "spot" // the pod asked for spot capacity, so its node was
	}
	return ""
}

// anyAttempt makes Interruption judge the pods of every attempt: whether a job's record needs
// reading at all.
const anyAttempt = 0

// Interruption is how the pods of one attempt show it lost to its nodes, while it runs or as it
// ends: a pod's DisruptionTarget condition (a spot interruption unless its node is known to be
// on demand), its node's termination taint, its node gone from the cluster or not ready for
// notReadyGrace (a spot interruption on a spot node, else a node failure). Only pods of attempt
// count (the beat may still list an earlier attempt's); a pod that succeeded lost nothing. ok is
// false when no pod shows any of it.
func Interruption(pods []corev1.Pod, v nodeView, attempt int) (c jobs.Cause, ok bool) {
	for _, p := range pods {
		if (attempt != anyAttempt && jobobjects.AttemptOf(p.Annotations) != attempt) || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		if c, ok := podInterruption(p, v); ok {
			return c, true
		}
	}
	return jobs.Cause{}, false
}

func podInterruption(p corev1.Pod, v nodeView) (jobs.Cause, bool) {
	node := p.Spec.NodeName
	kind := func(spotAlone bool) jobs.CauseKind {
		if spotAlone || v.capacity(node, p) == "spot" {
			return jobs.CauseSpotInterrupted
		}
		return jobs.CauseNodeFailure
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.DisruptionTarget && cond.Status == corev1.ConditionTrue {
			k := jobs.CauseSpotInterrupted
			if v.capacity(node, p) == "on-demand" {
				k = jobs.CauseNodeFailure
			}
			return jobs.Cause{Kind: k, Detail: fmt.Sprintf("pod %s: DisruptionTarget (%s) on node %s: %s", p.Name, cond.Reason, node, cond.Message)}, true
		}
	}
	if node == "" || !v.listed {
		return jobs.Cause{}, false
	}
	n := v.nodes[node]
	if n == nil {
		return jobs.Cause{Kind: kind(false), Detail: fmt.Sprintf("pod %s: its node %s is gone", p.Name, node)}, true
	}
	for _, t := range n.Spec.Taints {
		if spotAlone, ok := terminationTaints[t.Key]; ok {
			return jobs.Cause{Kind: kind(spotAlone), Detail: fmt.Sprintf("pod %s: its node %s has the taint %s", p.Name, node, t.Key)}, true
		}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue && v.checkedAt.Sub(cond.LastTransitionTime.Time) >= notReadyGrace {
			return jobs.Cause{Kind: kind(false), Detail: fmt.Sprintf("pod %s: its node %s has not been ready since %s", p.Name, node, cond.LastTransitionTime.UTC().Format(time.RFC3339))}, true
		}
	}
	return jobs.Cause{}, false
}

// EndCause is how an attempt whose job failed ended, from its pods: an interruption (above), else
// the first container that exited with a non-zero code, else a pod failure.
func EndCause(pods []corev1.Pod, v nodeView, attempt int, reason string) jobs.Cause {
	if c, ok := Interruption(pods, v, attempt); ok {
		return c
	}
	for _, p := range pods {
		if jobobjects.AttemptOf(p.Annotations) != attempt {
			continue
		}
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				return jobs.Cause{Kind: jobs.CauseExit, ExitCode: t.ExitCode, Kubernetes: t.Reason,
					Detail: fmt.Sprintf("pod %s: container %s exited with %d (%s)", p.Name, cs.Name, t.ExitCode, t.Reason)}
			}
		}
	}
	for _, p := range pods {
		if p.Status.Reason == "Evicted" && jobobjects.AttemptOf(p.Annotations) == attempt {
			return jobs.Cause{Kind: jobs.CausePodFailure, Kubernetes: "Evicted", Detail: fmt.Sprintf("pod %s evicted: %s", p.Name, p.Status.Message)}
		}
	}
	c := jobs.Cause{Kind: jobs.CausePodFailure, Detail: reason}
	if strings.Contains(reason, "DeadlineExceeded") {
		c.Kubernetes = "DeadlineExceeded"
	}
	return c
}

// spotNodes are the nodes of v on spot capacity, for the next beat to know them once gone.
func (v nodeView) spotNodes() map[string]bool {
	out := map[string]bool{}
	for name, n := range v.nodes {
		if val, ok := n.Labels[v.label]; ok && val != v.onDemand {
			out[name] = true
		}
	}
	return out
}
