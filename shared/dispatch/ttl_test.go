package dispatch

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidegate/tidegate/shared/jobs"
)

// TestAppliedJobsCarryTheTTL: a Job whose manifest sets no ttlSecondsAfterFinished is applied with
// the setting's; a tenant's shorter one is raised to the floor; the record keeps the manifests as
// submitted.
func TestAppliedJobsCarryTheTTL(t *testing.T) {
	r := newRig(t, 5)
	r.dispatch.JobTTL = time.Hour
	plain := r.submit(t, "plain", 50, nil)
	short, err := r.createWith("job-short", "short", 50, nil, func(m map[string]any) {
		m["spec"].(map[string]any)["ttlSecondsAfterFinished"] = json.Number("10")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.dispatch.Drain(context.Background(), region); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	kc, err := r.clusters.Client(context.Background(), region)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		job  jobs.Job
		name string
		want int32
	}{{plain, "plain", 3600}, {short, "short", 300}} {
		if got := r.job(t, tt.job.ID); got.Status != jobs.StatusPending {
			t.Fatalf("job %s is %s after a drain, want pending", got.ID, got.Status)
		}
		kj, err := kc.BatchV1().Jobs(r.ns).Get(context.Background(), tt.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading Job %s: %v", tt.name, err)
		}
		if got := kj.Spec.TTLSecondsAfterFinished; got == nil || *got != tt.want {
			t.Errorf("Job %s's ttlSecondsAfterFinished = %v, want %d", tt.name, got, tt.want)
		}
	}
	if spec := r.job(t, plain.ID).Manifests[0]["spec"].(map[string]any); spec["ttlSecondsAfterFinished"] != nil {
		t.Errorf("the record's manifest gained ttlSecondsAfterFinished %v; it keeps what was submitted", spec["ttlSecondsAfterFinished"])
	}
}
