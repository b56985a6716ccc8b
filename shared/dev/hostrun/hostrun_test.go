package hostrun

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestPlays: the runner plays its stack's hosts alone: not a pod without our labels (a tenant's
// copy of them included), not one being deleted, not one Skip leaves to kwok (--never-register),
// and not one a previous runner played to its end; one it already plays it keeps playing to the
// end.
func TestPlays(t *testing.T) {
	host, _ := hostPod(t, launch(nil), "u-host")
	never := host.DeepCopy()
	never.UID = "u-never"
	r := &Runner{
		opt:  Options{Skip: func(p *corev1.Pod) bool { return p.UID == "u-never" }},
		runs: map[types.UID]*run{"u-played": {}},
	}
	foreign := host.DeepCopy()
	foreign.Annotations = map[string]string{}
	going := host.DeepCopy()
	going.DeletionTimestamp = &metav1.Time{}
	over := host.DeepCopy()
	over.Status.Phase = corev1.PodFailed
	played := over.DeepCopy()
	played.UID = "u-played"
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"a new host":               {host, true},
		"a pod not ours":           {foreign, false},
		"a pod being deleted":      {going, false},
		"a host never registered":  {never, false},
		"a host over before":       {over, false},
		"a host played to its end": {played, true},
	} {
		if got := r.plays(tc.pod); got != tc.want {
			t.Errorf("plays(%s) = %v, want %v", name, got, tc.want)
		}
	}
}
