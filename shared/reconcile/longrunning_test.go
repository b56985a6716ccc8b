package reconcile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/jobs"
)

func TestFollowLongRunning(t *testing.T) {
	up, down := serving{Kind: "Deployment", Name: "web", Available: true}, serving{Kind: "StatefulSet", Name: "db"}
	running := []Step{{To: jobs.StatusRunning}}
	for _, tt := range []struct {
		name    string
		current jobs.Status
		objs    []serving
		want    []Step
	}{
		{"pending, all available", jobs.StatusPending, []serving{up, up}, running},
		{"pending, one not yet available", jobs.StatusPending, []serving{up, down}, nil},
		{"pending, nothing listed yet", jobs.StatusPending, nil, nil},
		{"running, all available", jobs.StatusRunning, []serving{up}, nil},
		{"running, no longer available: it stays running", jobs.StatusRunning, []serving{down}, nil},
		{"running, its objects gone: left to goneGrace", jobs.StatusRunning, nil, nil},
		{"cancelled", jobs.StatusCancelled, []serving{up}, nil},
	} {
		if diff := cmp.Diff(tt.want, FollowLongRunning(tt.current, tt.objs)); diff != "" {
			t.Errorf("FollowLongRunning(%s) (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestServingReadsAvailability(t *testing.T) {
	dep := func(gen, observed int64, available corev1.ConditionStatus) appsv1.Deployment {
		d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: gen, Labels: map[string]string{jobs.IDKey: "j1"}}}
		d.Status.ObservedGeneration = observed
		if available != "" {
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: available}}
		}
		return d
	}
	for _, tt := range []struct {
		name string
		d    appsv1.Deployment
		want bool
	}{
		{"Available true", dep(1, 1, corev1.ConditionTrue), true},
		{"Available false", dep(1, 1, corev1.ConditionFalse), false},
		{"no condition yet", dep(1, 0, ""), false},
		{"a spec the controller has not seen", dep(2, 1, corev1.ConditionTrue), false},
	} {
		if got := deploymentServing(tt.d); got.Available != tt.want || got.job != "j1" || got.Kind != "Deployment" {
			t.Errorf("deploymentServing(%s) = %+v, want available %v of job j1", tt.name, got, tt.want)
		}
	}
	three := int32(3)
	ss := func(replicas *int32, gen, observed int64, available int32) appsv1.StatefulSet {
		s := appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: gen}}
		s.Spec.Replicas, s.Status.ObservedGeneration, s.Status.AvailableReplicas = replicas, observed, available
		return s
	}
	for _, tt := range []struct {
		name string
		s    appsv1.StatefulSet
		want bool
	}{
		{"3 of 3", ss(&three, 1, 1, 3), true},
		{"2 of 3", ss(&three, 1, 1, 2), false},
		{"1 of the default 1", ss(nil, 1, 1, 1), true},
		{"0 of the default 1", ss(nil, 1, 1, 0), false},
		{"a spec not yet seen", ss(&three, 2, 1, 3), false},
	} {
		if got := statefulSetServing(tt.s); got.Available != tt.want {
			t.Errorf("statefulSetServing(%s) = %+v, want available %v", tt.name, got, tt.want)
		}
	}
}
