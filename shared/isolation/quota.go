package isolation

import (
	"errors"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ContainerDefaults are the requests and limits a tenant's container gets when it sets none, so
// that no pod runs unbounded.
type ContainerDefaults struct {
	CPU           resource.Quantity // limit
	Memory        resource.Quantity // limit
	CPURequest    resource.Quantity
	MemoryRequest resource.Quantity
}

// PodCaps are the admission policy's caps on what one pod may ask for; nil is no cap.
type PodCaps struct {
	CPU    *resource.Quantity
	Memory *resource.Quantity
	GPUs   *resource.Quantity
}

// gpuResource is the extended resource NVIDIA's device plugin advertises; a ResourceQuota counts
// an extended resource by its requests only.
const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// maxPodsPerJob bounds PodsPerJob so that the quota's products cannot overflow.
const maxPodsPerJob = 10_000

// Validate reports every problem with the settings' numbers at once: what a container gets by
// default must be positive, its request no more than its limit (the API server refuses such a
// LimitRange), and its limit within the policy's cap on a pod (else a pod that set nothing
// would get more than one that asked).
func (s Settings) Validate() error {
	var errs []error
	c := s.Containers
	for _, q := range []struct {
		what       string
		limit, req resource.Quantity
		cap        *resource.Quantity
	}{{"CPU", c.CPU, c.CPURequest, s.PodCaps.CPU}, {"memory", c.Memory, c.MemoryRequest, s.PodCaps.Memory}} {
		switch {
		case q.limit.Sign() <= 0 || q.req.Sign() <= 0:
			errs = append(errs, fmt.Errorf("a container's default %s limit (%s) and request (%s) must be above zero", q.what, q.limit.String(), q.req.String()))
		case q.req.Cmp(q.limit) > 0:
			errs = append(errs, fmt.Errorf("a container's default %s request %s is above its default limit %s", q.what, q.req.String(), q.limit.String()))
		case q.cap != nil && q.limit.Cmp(*q.cap) > 0:
			errs = append(errs, fmt.Errorf("a container's default %s limit %s is above the policy's cap on a pod, %s", q.what, q.limit.String(), q.cap.String()))
		}
	}
	if s.PodsPerJob < 1 || s.PodsPerJob > maxPodsPerJob {
		errs = append(errs, fmt.Errorf("pods a job %d must be from 1 to %d", s.PodsPerJob, maxPodsPerJob))
	}
	return errors.Join(errs...)
}

// limits gives a tenant's containers that set no resources Containers' requests and limits.
func limits(ns string, s Settings) *corev1.LimitRange {
	c := s.Containers
	return &corev1.LimitRange{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "LimitRange"},
		ObjectMeta: meta(ns, NamespaceLimits, s.Owner),
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type:           corev1.LimitTypeContainer,
			Default:        corev1.ResourceList{corev1.ResourceCPU: c.CPU, corev1.ResourceMemory: c.Memory},
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: c.CPURequest, corev1.ResourceMemory: c.MemoryRequest},
		}}},
	}
}

// quota bounds what a tenant's namespace runs at once in cluster c to what the drain may let the
// tenant hold there. A tenant under quotas borrows what others leave idle, up to the region's
// capacity, so the bound is the region's, not the tenant's share (a share-sized bound would refuse
// the pods of jobs the drain admitted by borrowing, and they would hold room without running):
//   - pods: the region's capacity in jobs (the regions' together, where several share c) times PodsPerJob, since a job may run several pods (a
//     Job's parallelism, a Deployment's replicas) and the drain counts jobs, not pods;
//   - limits.cpu and limits.memory: that many pods at the policy's cap on one pod, when capped
//     (the LimitRange gives every container limits, so every pod is counted);
//   - requests.nvidia.com/gpu: the region's GPU cap, which the drain holds every tenant's jobs
//     to together, or else that many pods at the policy's GPU cap, when capped.
func quota(ns string, c Cluster, s Settings) *corev1.ResourceQuota {
	jobs, regionGPUs := c.reach()
	pods := int64(jobs) * s.PodsPerJob
	hard := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI)}
	if q, ok := times(s.PodCaps.CPU, pods, true); ok {
		hard[corev1.ResourceLimitsCPU] = q
	}
	if q, ok := times(s.PodCaps.Memory, pods, false); ok {
		hard[corev1.ResourceLimitsMemory] = q
	}
	gpus := corev1.ResourceName(corev1.DefaultResourceRequestsPrefix + string(gpuResource))
	if regionGPUs > 0 {
		hard[gpus] = *resource.NewQuantity(regionGPUs, resource.DecimalSI)
	} else if q, ok := times(s.PodCaps.GPUs, pods, false); ok {
		hard[gpus] = q
	}
	return &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: meta(ns, NamespaceQuota, s.Owner),
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}
}

// times is n times q, counted in thousandths when milli (CPU), in its format; false when q is nil
// or the product would not fit, which leaves that resource unbounded rather than wrapped round.
func times(q *resource.Quantity, n int64, milli bool) (resource.Quantity, bool) {
	if q == nil {
		return resource.Quantity{}, false
	}
	v := q.Value()
	if milli {
		v = q.MilliValue()
	}
	if n < 0 || (n > 0 && v > math.MaxInt64/n) {
		return resource.Quantity{}, false
	}
	if milli {
		return *resource.NewMilliQuantity(v*n, q.Format), true
	}
	return *resource.NewQuantity(v*n, q.Format), true
}
