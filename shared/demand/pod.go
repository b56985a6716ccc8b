// Package demand provides what a job asks of a cluster: for each resource, the requests of every
// pod of the job that can run at once, each pod counted as the kube-scheduler counts it. It does
// no I/O: a pod spec and the namespace's container defaults in, quantities out.
package demand

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Defaults are the requests a container gets when it sets neither a request nor a limit of CPU
// or memory: the defaultRequest of the LimitRange Tidegate keeps in every tenant namespace
// (shared/isolation's ContainerDefaults.CPURequest and MemoryRequest, read from
// TIDEGATE_CONTAINER_DEFAULT_CPU_REQUEST and _MEMORY_REQUEST). A zero one leaves the resource
// unrequested, as a namespace without a LimitRange would.
type Defaults struct {
	CPU    resource.Quantity
	Memory resource.Quantity
}

// Pod is what one pod of spec requests, as the kube-scheduler counts it (component-helpers'
// PodRequests, which its NodeResourcesFit plugin fits to a node):
//   - each container's and init container's requests as the API server leaves them: a resource
//     with a limit and no request requests its limit (the v1 Pod defaults), and CPU or memory
//     with neither takes d (the LimitRange admission plugin, which runs after them);
//   - the larger, per resource, of the containers' and sidecars' sum (init containers with
//     restartPolicy Always keep running beside the containers) and the peak while the init
//     containers run one at a time, each with the sidecars started before it;
//   - the pod-level request of CPU, memory or a hugepages size in place of that, where the pod
//     sets spec.resources (podLevel says what it sets);
//   - spec.overhead added, where the manifest gives it. A RuntimeClass's overhead is added to
//     the pod by the API server, after submission, and is not counted here.
func Pod(spec *corev1.PodSpec, d Defaults) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range spec.Containers {
		add(total, requests(&spec.Containers[i], d))
	}
	sidecars, initPeak := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		r := requests(c, d)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(total, r)
			add(sidecars, r)
			r = sidecars
		} else {
			r = r.DeepCopy()
			add(r, sidecars)
		}
		atLeast(initPeak, r)
	}
	atLeast(total, initPeak)
	for name, q := range podLevel(spec) {
		total[name] = q.DeepCopy()
	}
	add(total, spec.Overhead)
	return total
}

// requests are container c's requests as the API server leaves them: its own, then its limits
// where it sets no request, then d's CPU and memory where it sets neither.
func requests(c *corev1.Container, d Defaults) corev1.ResourceList {
	out := make(corev1.ResourceList, len(c.Resources.Requests)+2)
	for name, q := range c.Resources.Limits {
		out[name] = q
	}
	for name, q := range c.Resources.Requests {
		out[name] = q
	}
	for name, q := range map[corev1.ResourceName]resource.Quantity{corev1.ResourceCPU: d.CPU, corev1.ResourceMemory: d.Memory} {
		if _, set := out[name]; !set && !q.IsZero() {
			out[name] = q
		}
	}
	return out
}

// podLevel is what the pod's own spec.resources requests of the resources Kubernetes lets a pod
// set as a whole (CPU, memory, hugepages), in place of its containers' sum: its request where it
// gives one; else its limit where no container sets a request or limit of that resource, since
// the API server then defaults the pod's request to its limit. Where a container does set one,
// the pod's request defaults to the containers' sum, which Pod has counted already.
func podLevel(spec *corev1.PodSpec) corev1.ResourceList {
	r := spec.Resources
	if r == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for name, q := range r.Requests {
		if podLevelResource(name) {
			out[name] = q
		}
	}
	for name, q := range r.Limits {
		if _, set := out[name]; !set && podLevelResource(name) && !anyContainerSets(spec, name) {
			out[name] = q
		}
	}
	return out
}

// podLevelResource is component-helpers' IsSupportedPodLevelResource.
func podLevelResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func anyContainerSets(spec *corev1.PodSpec, name corev1.ResourceName) bool {
	for _, list := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range list {
			_, req := list[i].Resources.Requests[name]
			_, lim := list[i].Resources.Limits[name]
			if req || lim {
				return true
			}
		}
	}
	return false
}

// add adds more into list. Each sum is a copy: Quantity.Add changes a large or precise quantity's
// decimal in place, which list may share with a manifest's.
func add(list, more corev1.ResourceList) {
	for name, q := range more {
		sum := list[name].DeepCopy()
		sum.Add(q)
		list[name] = sum
	}
}

// atLeast raises each of list's quantities to other's where other's is larger.
func atLeast(list, other corev1.ResourceList) {
	for name, q := range other {
		if have, ok := list[name]; !ok || q.Cmp(have) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}
