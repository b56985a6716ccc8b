package demand

import (
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Demand is, for each resource, what a job's pods that can run at once request in all, with
// pods counting them. It holds whole numbers of the units the kube-scheduler fits pods to a node
// in (its framework.Resource): thousandths of a CPU, and whole units of everything else (bytes
// of memory and ephemeral storage, GPUs), each pod's request rounded up to them as it rounds
// them. A resource no pod requests is absent, so a job that runs no pods has an empty Demand.
type Demand map[corev1.ResourceName]resource.Quantity

// TooLargeError is a total that does not fit the scheduler's units (2^63 - 1 of them): no node
// has it, and a sum past it would wrap round to a small or negative number.
type TooLargeError struct {
	Resource corev1.ResourceName
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the job's %s is too large to count", e.Resource)
}

// NegativeError is a pod's request below zero, which the API server refuses and which would
// take from the job's other requests if counted.
type NegativeError struct {
	Resource corev1.ResourceName
}

func (e *NegativeError) Error() string {
	return fmt.Sprintf("the pod's %s request is negative", e.Resource)
}

// Of is the demand of n pods that each request pod (Pod's answer): n times each request, and n
// pods. n of 0 is no demand at all: a Job of parallelism 0 or a Deployment of 0 replicas runs no
// pod.
func Of(pod corev1.ResourceList, n int64) (Demand, error) {
	if n < 0 {
		return nil, &NegativeError{Resource: corev1.ResourcePods}
	}
	d := Demand{}
	if n == 0 {
		return d, nil
	}
	d[corev1.ResourcePods] = *resource.NewQuantity(n, resource.DecimalSI)
	for name, q := range pod {
		if name == corev1.ResourcePods {
			continue // a pod asks for one pod, whatever its spec says
		}
		if q.Sign() < 0 {
			return nil, &NegativeError{Resource: name}
		}
		v, ok := units(name, q)
		if !ok || v > math.MaxInt64/n {
			return nil, &TooLargeError{Resource: name}
		}
		if v > 0 {
			d[name] = quantity(name, v*n, q.Format)
		}
	}
	return d, nil
}

// Add adds o into d, which must not be nil.
func (d Demand) Add(o Demand) error {
	for name, q := range o {
		have, held := d[name]
		if !held {
			d[name] = q.DeepCopy()
			continue
		}
		a, _ := units(name, have)
		b, _ := units(name, q)
		if a > math.MaxInt64-b {
			return &TooLargeError{Resource: name}
		}
		d[name] = quantity(name, a+b, have.Format)
	}
	return nil
}

// Strings is d as the job record and the API keep it: each quantity in Kubernetes' canonical
// form ("20", "6400Mi", "1500m"), and pods as the whole number it is ("1000", where the canonical
// form would say "1k"); nil for an empty demand.
func (d Demand) Strings() map[string]string {
	if len(d) == 0 {
		return nil
	}
	out := make(map[string]string, len(d))
	for name, q := range d {
		if name == corev1.ResourcePods {
			out[string(name)] = strconv.FormatInt(q.Value(), 10)
			continue
		}
		out[string(name)] = q.String()
	}
	return out
}

// fits bounds a quantity's value before it is read as int64: 2^63 rounds to 9.223e18 as a
// float, so anything at or above 9e18 is refused rather than risk reading it wrapped.
const fits = 9e18

// Units is q in the scheduler's units for name (thousandths of a CPU, whole units of the rest),
// rounded up as it rounds; false if it does not fit an int64. Admission counts flavors' capacity
// and jobs' demand in them.
func Units(name corev1.ResourceName, q resource.Quantity) (int64, bool) { return units(name, q) }

// units is Units.
func units(name corev1.ResourceName, q resource.Quantity) (int64, bool) {
	f := q.AsApproximateFloat64()
	if name == corev1.ResourceCPU {
		if f*1000 >= fits {
			return 0, false
		}
		return q.MilliValue(), true
	}
	if f >= fits {
		return 0, false
	}
	return q.Value(), true
}

// quantity is v of the scheduler's units for name, written in format.
func quantity(name corev1.ResourceName, v int64, format resource.Format) resource.Quantity {
	if name == corev1.ResourceCPU {
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	}
	if format == "" {
		format = resource.DecimalSI
	}
	return *resource.NewQuantity(v, format)
}
