package policy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// gpuResource is the extended resource NVIDIA's device plugin advertises.
const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// resourceCap is one configured cap on what a pod may ask for.
type resourceCap struct {
	name  corev1.ResourceName
	label string
	max   resource.Quantity
}

func capsOf(cfg Config) []resourceCap {
	var caps []resourceCap
	for _, c := range []struct {
		name  corev1.ResourceName
		label string
		max   *resource.Quantity
	}{{gpuResource, string(gpuResource), cfg.MaxGPUs}, {corev1.ResourceCPU, "CPU", cfg.MaxCPU}, {corev1.ResourceMemory, "memory", cfg.MaxMemory}} {
		if c.max != nil {
			caps = append(caps, resourceCap{name: c.name, label: c.label, max: c.max.DeepCopy()})
		}
	}
	// Ephemeral storage always has a cap: the operator's or the default.
	return append(caps, resourceCap{name: corev1.ResourceEphemeralStorage, label: "ephemeral storage", max: cfg.Pods.ephemeralStorageCap()})
}

// checkCaps reports each resource for which the pod asks more than its cap. A cap is per pod, the
// unit a node must fit: a Job's parallelism or a Deployment's replicas do not multiply it
// (capacity across pods is dispatch admission's to judge).
func (c *Checker) checkCaps(p podRef, r *report) {
	for _, cp := range c.caps {
		a := podAmount(p.spec, cp.name)
		if cp.name == corev1.ResourceMemory && a.total.Sign() > 0 {
			h := float64(cp.max.Value()) / float64(a.total.Value())
			if r.res.MemoryHeadroom == 0 || h < r.res.MemoryHeadroom {
				r.res.MemoryHeadroom = h
			}
		}
		if a.total.Cmp(cp.max) > 0 {
			field, how := a.where(p)
			r.addf(field, msgCap, a.total.String(), cp.label, how, cp.max.String(), cp.max.String())
		}
	}
}

// containerAmount is what a container asks for of a resource: the larger of its request and its
// limit, so that a cap holds for both (an unset request defaults to the limit anyway).
func containerAmount(r *corev1.ResourceRequirements, name corev1.ResourceName) resource.Quantity {
	q := r.Requests[name]
	if l, ok := r.Limits[name]; ok && l.Cmp(q) > 0 {
		q = l
	}
	return q
}

// amount is a pod's effective amount of a resource and what decided it.
type amount struct {
	total resource.Quantity
	// from is where total comes from: the containers (and sidecars), one init container, or
	// the pod-level resources.
	from int
	// index is the init container's when from is fromInit; else the one container asking for
	// any, or -1 if several do.
	index      int
	onlyIsInit bool
}

const (
	fromContainers = iota
	fromInit
	fromPod
)

// podAmount is the pod's effective amount of a resource, counted as Kubernetes counts a pod's
// effective request for scheduling: the larger of
//   - the sum over its containers and its sidecars (init containers with restartPolicy Always,
//     which keep running beside them), and
//   - the peak while init containers run: each init container's own amount plus the sidecars
//     started before it.
//
// So init containers are not summed with each other: they run one at a time. If the pod sets
// pod-level resources, the larger of those and the above counts.
func podAmount(s *corev1.PodSpec, name corev1.ResourceName) amount {
	var running, sidecars, peak resource.Quantity
	peakAt, contributors := -1, 0
	a := amount{from: fromContainers, index: -1}
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		q := containerAmount(&c.Resources, name)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Add(q)
			running.Add(q)
			if !q.IsZero() {
				contributors, a.index, a.onlyIsInit = contributors+1, i, true
			}
			q = sidecars.DeepCopy()
		} else {
			q = q.DeepCopy()
			q.Add(sidecars)
		}
		if q.Cmp(peak) > 0 {
			peak, peakAt = q, i
		}
	}
	for i := range s.Containers {
		q := containerAmount(&s.Containers[i].Resources, name)
		running.Add(q)
		if !q.IsZero() {
			contributors, a.index, a.onlyIsInit = contributors+1, i, false
		}
	}
	a.total = running
	if contributors != 1 {
		a.index = -1
	}
	if peak.Cmp(running) > 0 {
		a.total, a.from, a.index = peak, fromInit, peakAt
	}
	if s.Resources != nil {
		if pod := containerAmount(s.Resources, name); pod.Cmp(a.total) > 0 {
			a.total, a.from = pod, fromPod
		}
	}
	return a
}

// where is the field to point at and how the amount was reached, for the message.
func (a amount) where(p podRef) (field, how string) {
	s := p.spec
	switch {
	case a.from == fromPod:
		return p.specPath + ".resources", "its pod-level resources"
	case a.from == fromInit:
		return indexed(p.specPath+".initContainers", a.index) + ".resources",
			fmt.Sprintf("init container %q, with the sidecars started before it", s.InitContainers[a.index].Name)
	case a.index >= 0 && a.onlyIsInit:
		return indexed(p.specPath+".initContainers", a.index) + ".resources", fmt.Sprintf("sidecar %q", s.InitContainers[a.index].Name)
	case a.index >= 0:
		return indexed(p.specPath+".containers", a.index) + ".resources", fmt.Sprintf("container %q", s.Containers[a.index].Name)
	}
	return p.specPath + ".containers", "summed over its containers and sidecars"
}
