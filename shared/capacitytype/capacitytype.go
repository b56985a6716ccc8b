// Package capacitytype sends a job's pods to on-demand capacity: the node label that tells spot
// nodes from on-demand ones, and the change to a job's manifests that selects on-demand nodes.
// It changes copies of manifests and touches nothing.
package capacitytype

import (
	"slices"

	"github.com/tidegate/tidegate/shared/manifest"
)

// The node labels that tell a node's capacity type, with their values.
const (
	// Karpenter's, on the nodes it provisions: spot or on-demand.
	Karpenter = "karpenter.sh/capacity-type"
	// EKS managed node groups': SPOT or ON_DEMAND.
	EKS = "eks.amazonaws.com/capacityType"
	// Default is the label read when config names none.
	Default = Karpenter
)

// Labels are the labels a cluster may be configured with.
var Labels = []string{Karpenter, EKS}

// OnDemandValue is label's value on on-demand nodes; ok is false for a label not in Labels.
func OnDemandValue(label string) (value string, ok bool) {
	switch label {
	case Karpenter:
		return "on-demand", true
	case EKS:
		return "ON_DEMAND", true
	}
	return "", false
}

// SpotValue is label's value on spot nodes; ok is false for a label not in Labels.
func SpotValue(label string) (value string, ok bool) {
	switch label {
	case Karpenter:
		return "spot", true
	case EKS:
		return "SPOT", true
	}
	return "", false
}

// OnDemand is a copy of manifests whose pods run on on-demand nodes as label tells them (one of
// Labels; any other leaves the manifests as they are): each pod spec's nodeSelector has label
// set to the on-demand value, and what its node affinity said of label is dropped, since a
// requirement of spot capacity would leave the pods unschedulable and a preference for it is
// moot. The manifests given are not changed.
func OnDemand(manifests []map[string]any, label string) []map[string]any {
	value, ok := OnDemandValue(label)
	out := make([]map[string]any, len(manifests))
	for i, m := range manifests {
		out[i] = manifest.Copy(m).(map[string]any)
		if !ok {
			continue
		}
		for _, spec := range manifest.PodSpecs(out[i]) {
			onDemand(spec, label, value)
		}
	}
	return out
}

// onDemand changes one pod spec in place.
func onDemand(spec map[string]any, label, value string) {
	sel, _ := spec["nodeSelector"].(map[string]any)
	if sel == nil {
		sel = map[string]any{}
		spec["nodeSelector"] = sel
	}
	sel[label] = value
	na := manifest.At(spec, "affinity", "nodeAffinity")
	if na == nil {
		return
	}
	const required, preferred = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"
	if req, _ := na[required].(map[string]any); req != nil {
		terms, _ := req["nodeSelectorTerms"].([]any)
		for _, t := range terms {
			term, _ := t.(map[string]any)
			if term != nil && dropLabel(term, label) && len(exprs(term, "matchExpressions")) == 0 && len(exprs(term, "matchFields")) == 0 {
				// A term that asked only the capacity type now asks nothing, and terms are
				// alternatives: the requirement holds on every node.
				delete(na, required)
				break
			}
		}
	}
	if prefs, ok := na[preferred].([]any); ok {
		na[preferred] = slices.DeleteFunc(prefs, func(p any) bool {
			pm, _ := p.(map[string]any)
			pref, _ := pm["preference"].(map[string]any)
			return pref != nil && dropLabel(pref, label) && len(exprs(pref, "matchExpressions")) == 0 && len(exprs(pref, "matchFields")) == 0
		})
	}
}

// dropLabel removes term's match expressions on label, and says whether it had any.
func dropLabel(term map[string]any, label string) bool {
	es := exprs(term, "matchExpressions")
	kept := slices.DeleteFunc(slices.Clone(es), func(e any) bool {
		em, _ := e.(map[string]any)
		return em != nil && em["key"] == label
	})
	if len(kept) == len(es) {
		return false
	}
	term["matchExpressions"] = kept
	return true
}

func exprs(term map[string]any, field string) []any {
	es, _ := term[field].([]any)
	return es
}
