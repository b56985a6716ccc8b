package policy

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Where a pod asks to be placed. Taints keep tenants' pods off the nodes that are not theirs, but
// not every such node is tainted (a system node pool often is not), and a label the autoscaler
// provisions by buys whatever it names; so a pod may select nodes only by the labels the operator
// lists (PodFields.NodeSelectorKeys), in its nodeSelector and in its node affinity's required and
// preferred terms alike. A term's matchFields select by a node's name, as nodeName does, and are
// refused with it unless the operator lists the field.
//
// Pod affinity and anti-affinity place a pod by other pods. Looking at another namespace's pods
// would let a tenant seek out another's (to sit beside them on a node, or learn by being
// unschedulable where they run), so a term may name only the pod's own namespace and may not
// select namespaces at all: a namespaceSelector of {} is every namespace.
//
// Dispatch's on-demand fallback sets the capacity-type label in the nodeSelector after this
// policy, on the copies it applies (capacitytype.OnDemand), so nothing here stands in its way.

// checkPlacement reports the node labels outside the allow-list and the pod affinity terms that
// reach past ns, the pod's namespace.
func (c *Checker) checkPlacement(p podRef, ns string, r *report) {
	s, at := p.spec, p.specPath
	for _, k := range sortedKeys(s.NodeSelector, func(k, _ string) bool { return !slices.Contains(c.pods.NodeSelectorKeys, k) }) {
		r.addf(at+".nodeSelector["+k+"]", msgNodeSelectorKey, clip(k), remedy(c.pods.NodeSelectorKeys, "remove it", "select by"))
	}
	a := s.Affinity
	if a == nil {
		return
	}
	if na := a.NodeAffinity; na != nil {
		path := at + ".affinity.nodeAffinity"
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			for i := range req.NodeSelectorTerms {
				c.checkNodeTerm(&req.NodeSelectorTerms[i], indexed(path+".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", i), r)
			}
		}
		for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			c.checkNodeTerm(&na.PreferredDuringSchedulingIgnoredDuringExecution[i].Preference, indexed(path+".preferredDuringSchedulingIgnoredDuringExecution", i)+".preference", r)
		}
	}
	for _, pa := range []struct {
		field     string
		required  []corev1.PodAffinityTerm
		preferred []corev1.WeightedPodAffinityTerm
	}{
		{"podAffinity", podAffinityRequired(a.PodAffinity), podAffinityPreferred(a.PodAffinity)},
		{"podAntiAffinity", podAntiAffinityRequired(a.PodAntiAffinity), podAntiAffinityPreferred(a.PodAntiAffinity)},
	} {
		path := at + ".affinity." + pa.field
		for i := range pa.required {
			checkPodTerm(&pa.required[i], ns, indexed(path+".requiredDuringSchedulingIgnoredDuringExecution", i), r)
		}
		for i := range pa.preferred {
			checkPodTerm(&pa.preferred[i].PodAffinityTerm, ns, indexed(path+".preferredDuringSchedulingIgnoredDuringExecution", i)+".podAffinityTerm", r)
		}
	}
}

// checkNodeTerm holds one node selector term's expressions and fields to the allow-list.
func (c *Checker) checkNodeTerm(t *corev1.NodeSelectorTerm, path string, r *report) {
	for j, e := range t.MatchExpressions {
		if !slices.Contains(c.pods.NodeSelectorKeys, e.Key) {
			r.addf(indexed(path+".matchExpressions", j)+".key", msgNodeSelectorKey, clip(e.Key), remedy(c.pods.NodeSelectorKeys, "remove this expression", "select by"))
		}
	}
	for j, f := range t.MatchFields {
		if !slices.Contains(c.pods.NodeSelectorKeys, f.Key) {
			r.addf(indexed(path+".matchFields", j)+".key", msgNodeSelectorField, clip(f.Key))
		}
	}
}

// checkPodTerm refuses a pod affinity term that looks at pods outside ns.
func checkPodTerm(t *corev1.PodAffinityTerm, ns, path string, r *report) {
	for k, other := range t.Namespaces {
		if other != ns {
			r.addf(indexed(path+".namespaces", k), msgPodAffinityNS, clip(other), ns)
		}
	}
	if t.NamespaceSelector != nil {
		r.add(path+".namespaceSelector", msgPodAffinityNSSel)
	}
}

func podAffinityRequired(a *corev1.PodAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAffinityPreferred(a *corev1.PodAffinity) []corev1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityRequired(a *corev1.PodAntiAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityPreferred(a *corev1.PodAntiAffinity) []corev1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}
