package httpapi

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCheckLogContainer: a logs request for a container the pod lacks, or for the previous run of
// one that never restarted, is a 400 naming the choice to fix, not the cluster's refusal.
func TestCheckLogContainer(t *testing.T) {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train-x"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "fetch"}},
			Containers:     []corev1.Container{{Name: "main"}, {Name: "sidecar"}},
		},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "main", LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}},
			{Name: "sidecar"},
		}},
	}
	for _, tc := range []struct {
		container string
		previous  bool
		want      string
	}{
		{"main", false, ""},
		{"fetch", false, ""},
		{"main", true, ""},
		{"sidecar", true, `container "sidecar" of pod train-x has not restarted`},
		{"other", false, `pod train-x has no container "other"; it has fetch, main, sidecar`},
	} {
		err := checkLogContainer(p, &corev1.PodLogOptions{Container: tc.container, Previous: tc.previous})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s previous=%v: %v; want it allowed", tc.container, tc.previous, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.(*Error).Fields[0].Problem, tc.want) || err.(*Error).Status() != 400):
			t.Errorf("%s previous=%v: %v; want a 400 saying %q", tc.container, tc.previous, err, tc.want)
		}
	}
}
