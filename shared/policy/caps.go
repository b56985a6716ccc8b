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
	return caps
}

// checkCaps reports each resource for which the pod asks more than its cap. A cap is per pod, the
// unit a node must fit: a Job's parallelism or a Deployment's replicas do not multiply it
// (capacity across pods is dispatch admission's to judge).
func (c *Checker) checkCaps(p podRef, r *report) {
	for _, cp := range c.caps {
		total, field, how := podAmount(p, cp.name)
		if total.Cmp(cp.max) > 0 {
			r.addf(field, msgCap, total.String(), cp.label, how, cp.max.String(), cp.max.String())
		}
	}
}

// containerAmount is what a container asks for of a resource: the larger of its request and its
// limit, so that a cap holds for both (an unset request defaults to the limit anyway).
func containerAmount(c *corev1.Container, name corev1.ResourceName) resource.Quantity {
	q := c.Resources.Requests[name]
	if l, ok := c.Resources.Limits[name]; ok && l.Cmp(q) > 0 {
		q = l
	}
	return q
}

// podAmount is the pod's effective amount of a resource, counted as Kubernetes counts a pod's
// effective request for scheduling: the larger of
//   - the sum over its containers and its sidecars (init containers with restartPolicy Always,
//     which keep running beside them), and
//   - the peak while init containers run: each init container's own amount plus the sidecars
//     started before it.
//
// So init containers are not summed with each other: they run one at a time. If the pod sets
// pod-level resources, the larger of those and the above counts. It also returns the field to
// point at and how the amount was reached, for the message.
func podAmount(p podRef, name corev1.ResourceName) (total resource.Quantity, field, how string) {
	s := p.spec
	var running, sidecars, peak resource.Quantity
	peakAt, contributors, lastPath, lastName := -1, 0, "", ""
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		q := containerAmount(c, name)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Add(q)
			running.Add(q)
			if !q.IsZero() {
				contributors, lastPath, lastName = contributors+1, indexed(p.specPath+".initContainers", i), c.Name
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
		c := &s.Containers[i]
		q := containerAmount(c, name)
		running.Add(q)
		if !q.IsZero() {
			contributors, lastPath, lastName = contributors+1, indexed(p.specPath+".containers", i), c.Name
		}
	}

	total, field, how = running, p.specPath+".containers", "summed over its containers and sidecars"
	if contributors == 1 {
		field, how = lastPath+".resources", fmt.Sprintf("container %q", lastName)
	}
	if peak.Cmp(running) > 0 {
		ic := &s.InitContainers[peakAt]
		total, field, how = peak, indexed(p.specPath+".initContainers", peakAt)+".resources", fmt.Sprintf("init container %q, with the sidecars started before it", ic.Name)
	}
	if s.Resources != nil {
		pod := containerAmount(&corev1.Container{Resources: *s.Resources}, name)
		if pod.Cmp(total) > 0 {
			total, field, how = pod, p.specPath+".resources", "its pod-level resources"
		}
	}
	return total, field, how
}
