package jobs

import (
	"testing"
	"time"
)

func TestKindOf(t *testing.T) {
	obj := func(kind string) map[string]any {
		return map[string]any{"kind": kind, "metadata": map[string]any{"name": "x"}}
	}
	for _, tc := range []struct {
		name  string
		kinds []string
		want  Kind
	}{
		{"a Deployment", []string{"Deployment"}, KindLongRunning},
		{"a StatefulSet", []string{"StatefulSet"}, KindLongRunning},
		{"a Deployment with its Service and ConfigMap", []string{"ConfigMap", "Deployment", "Service"}, KindLongRunning},
		{"a Deployment and a StatefulSet", []string{"Deployment", "StatefulSet"}, KindLongRunning},
		{"a Deployment beside a Job", []string{"Deployment", "Job"}, KindBatch},
		{"a Job beside a StatefulSet", []string{"Job", "StatefulSet"}, KindBatch},
		{"a Deployment beside a CronJob", []string{"Deployment", "CronJob"}, KindBatch},
		{"a Deployment beside a bare Pod", []string{"Deployment", "Pod"}, KindBatch},
		{"a DaemonSet", []string{"DaemonSet"}, KindBatch},
		{"a ReplicaSet", []string{"ReplicaSet"}, KindBatch},
		{"a Job", []string{"Job"}, KindBatch},
		{"no pods at all", []string{"ConfigMap"}, KindBatch},
		{"nothing", nil, KindBatch},
	} {
		var ms []map[string]any
		for _, k := range tc.kinds {
			ms = append(ms, obj(k))
		}
		if got := KindOf(ms); got != tc.want {
			t.Errorf("KindOf(%s: %v) = %q, want %q", tc.name, tc.kinds, got, tc.want)
		}
	}
}

func TestNewRecordsKind(t *testing.T) {
	dep := []map[string]any{{"kind": "Deployment", "metadata": map[string]any{"name": "web"}}}
	j := New("j1", "t", "ns", "us-east-1", 50, nil, dep, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if j.Kind != KindLongRunning || !j.LongRunning() {
		t.Errorf("New with a Deployment: Kind = %q, LongRunning = %v; want long_running, true", j.Kind, j.LongRunning())
	}
	if (Job{}).LongRunning() {
		t.Error("a record stored without a kind reads as long-running; want batch")
	}
}
