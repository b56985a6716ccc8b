package demand

import (
	"errors"
	"math"
	"testing"
	"testing/quick"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		pod  corev1.ResourceList
		n    int64
		want map[string]string
	}{
		{"one pod", list("cpu", "500m", "memory", "1Gi"), 1, map[string]string{"cpu": "500m", "memory": "1Gi", "pods": "1"}},
		{"200 pods of 100m and 32Mi", list("cpu", "100m", "memory", "32Mi"), 200, map[string]string{"cpu": "20", "memory": "6400Mi", "pods": "200"}},
		{"GPUs times pods", list("cpu", "4", "nvidia.com/gpu", "8"), 3, map[string]string{"cpu": "12", "nvidia.com/gpu": "24", "pods": "3"}},
		// The scheduler counts a CPU request in whole thousandths, rounded up.
		{"a nano-CPU counts as a thousandth", list("cpu", "1n"), 1000, map[string]string{"cpu": "1", "pods": "1000"}},
		{"a zero request is left out", list("cpu", "0", "memory", "64Mi"), 2, map[string]string{"memory": "128Mi", "pods": "2"}},
		{"no pods, no demand", list("cpu", "1"), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Of(tt.pod, tt.n)
			if err != nil {
				t.Fatalf("Of(%v, %d) = %v", tt.pod, tt.n, err)
			}
			if diff := cmp.Diff(tt.want, d.Strings()); diff != "" {
				t.Errorf("Of(%v, %d): -want +got\n%s", tt.pod, tt.n, diff)
			}
		})
	}
}

func TestOfRefuses(t *testing.T) {
	var tooLarge *TooLargeError
	var negative *NegativeError
	for _, tt := range []struct {
		name string
		pod  corev1.ResourceList
		n    int64
		want any
	}{
		{"CPU past 2^63 thousandths", list("cpu", "1e16"), 1, &tooLarge},
		{"memory times replicas past 2^63", list("memory", "1Ei"), math.MaxInt32, &tooLarge},
		{"a negative request", list("cpu", "-1", "memory", "1Gi"), 1, &negative},
		{"negative pods", list("cpu", "1"), -1, &negative},
	} {
		_, err := Of(tt.pod, tt.n)
		if err == nil || !errors.As(err, tt.want) {
			t.Errorf("Of(%s) = %v; want a %T", tt.name, err, tt.want)
		}
	}
}

func TestAdd(t *testing.T) {
	a, _ := Of(list("cpu", "100m", "memory", "32Mi"), 200)
	b, _ := Of(list("cpu", "1500m", "nvidia.com/gpu", "1"), 2)
	if err := a.Add(b); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cpu": "23", "memory": "6400Mi", "nvidia.com/gpu": "2", "pods": "202"}
	if diff := cmp.Diff(want, a.Strings()); diff != "" {
		t.Errorf("Add: -want +got\n%s", diff)
	}
	big, _ := Of(list("memory", "4Ei"), 1)
	var tooLarge *TooLargeError
	if err := big.Add(big); !errors.As(err, &tooLarge) || tooLarge.Resource != corev1.ResourceMemory {
		t.Errorf("4Ei + 4Ei of memory: Add = %v; want memory too large", err)
	}
}

// Demand grows with the pods counted, and any pod is counted: a job of n > 0 pods never has a
// demand of nothing, whatever its requests.
func TestOfGrowsWithPods(t *testing.T) {
	f := func(milliCPU uint32, bytes uint32, n uint16) bool {
		pod := corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(milliCPU), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(bytes), resource.BinarySI),
		}
		one, err1 := Of(pod, int64(n))
		more, err2 := Of(pod, int64(n)+1)
		if err1 != nil || err2 != nil {
			return false
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			a, b := one[name], more[name]
			if a.Cmp(b) > 0 {
				return false
			}
		}
		p := more[corev1.ResourcePods]
		return p.Value() == int64(n)+1
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}
