package jobobjects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tidegate/tidegate/shared/jobs"
)

var (
	jobsResource       = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	cronJobsResource   = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	configMapsResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func object(r schema.GroupVersionResource, ns, name, job string, edit ...func(*Object)) Object {
	o := Object{Resource: r, Namespace: ns, Name: name, Job: job, Attempt: 1}
	for _, e := range edit {
		e(&o)
	}
	return o
}

func finishedJob(o *Object) { o.Finished = true }
func owned(o *Object)       { o.Owned = true }

func TestAtEnd(t *testing.T) {
	done := object(jobsResource, "team-a", "train", "job-1", finishedJob)
	running := object(jobsResource, "team-a", "eval", "job-1")
	cron := object(cronJobsResource, "team-a", "nightly", "job-1")
	cm := object(configMapsResource, "team-a", "settings", "job-1")
	namesake := object(configMapsResource, "team-a", "shared", "job-2") // same name, another job's
	tests := []struct {
		name string
		seen []Object
		want []Object
	}{
		{"nothing left", nil, nil},
		{"a finished Job stays for its TTL, a ConfigMap goes", []Object{done, cm}, []Object{cm}},
		{"a Job still running when its job ended goes", []Object{done, running}, []Object{running}},
		{"a CronJob goes, and its runs with it", []Object{cron}, []Object{cron}},
		{"another job's namesake stays", []Object{namesake, cm}, []Object{cm}},
	}
	// A job that succeeded keeps its Jobs: each succeeded, whether or not its Complete condition
	// is written yet.
	if diff := cmp.Diff([]Object{cm}, AtEnd("job-1", jobs.StatusSucceeded, []Object{done, running, cm})); diff != "" {
		t.Errorf("AtEnd(job-1 succeeded, a Job whose condition is not written yet) (-want +got):\n%s", diff)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, AtEnd("job-1", jobs.StatusFailed, tt.seen)); diff != "" {
				t.Errorf("AtEnd(job-1, %s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestSwept(t *testing.T) {
	managed := map[string]bool{"team-a": true, "team-b": true}
	states := map[string]jobs.Status{
		"job-done": jobs.StatusSucceeded, "job-failed": jobs.StatusFailed, "job-cancelled": jobs.StatusCancelled,
		"job-running": jobs.StatusRunning, "job-pending": jobs.StatusPending, "job-queued": jobs.StatusQueued,
		"job-dispatching": jobs.StatusDispatching,
	}
	tests := []struct {
		name   string
		listed Object
		swept  bool
	}{
		{"a ConfigMap of a succeeded job", object(configMapsResource, "team-a", "cm", "job-done"), true},
		{"a CronJob of a failed job", object(cronJobsResource, "team-a", "nightly", "job-failed"), true},
		{"a bare pod of a cancelled job", object(podsResource, "team-b", "p", "job-cancelled"), true},
		{"an object of a job with no record", object(configMapsResource, "team-a", "cm", "job-unknown"), true},
		{"a finished Job of a job with no record", object(jobsResource, "team-a", "train", "job-unknown", finishedJob), true},
		{"a Job still running of a failed job", object(jobsResource, "team-a", "eval", "job-failed"), true},
		{"a Job of a succeeded job, its condition not written yet", object(jobsResource, "team-a", "eval", "job-done"), false},
		{"a finished Job of a succeeded job, for its TTL", object(jobsResource, "team-a", "train", "job-done", finishedJob), false},
		{"an object of a running job", object(configMapsResource, "team-a", "cm", "job-running"), false},
		{"an object of a pending job", object(configMapsResource, "team-a", "cm", "job-pending"), false},
		{"an object of a job queued again for a retry", object(configMapsResource, "team-a", "cm", "job-queued"), false},
		{"an object of a job being dispatched", object(configMapsResource, "team-a", "cm", "job-dispatching"), false},
		{"an ended job's object in a namespace no tenant holds", object(configMapsResource, "kube-system", "cm", "job-done"), false},
		{"an unknown job's object in a namespace no tenant holds", object(configMapsResource, "other-team", "cm", "job-unknown"), false},
		{"a controller's object, which goes with its owner", object(podsResource, "team-a", "train-x7k2p", "job-done", owned), false},
		{"an object with an empty job id", object(configMapsResource, "team-a", "cm", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []Object
			if tt.swept {
				want = []Object{tt.listed}
			}
			if diff := cmp.Diff(want, Swept([]Object{tt.listed}, states, managed)); diff != "" {
				t.Errorf("Swept(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestKeptWhole: only a job that succeeded and applied nothing but batch Jobs keeps all it
// applied, so only its end may skip reading them; a ConfigMap beside, another kind, or a
// failure means reading what is there.
func TestKeptWhole(t *testing.T) {
	manifest := func(apiVersion, kind string) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x"}}
	}
	batchJob, cm, cron := manifest("batch/v1", "Job"), manifest("v1", "ConfigMap"), manifest("batch/v1", "CronJob")
	tests := []struct {
		name      string
		manifests []map[string]any
		s         jobs.Status
		want      bool
	}{
		{"one Job, succeeded", []map[string]any{batchJob}, jobs.StatusSucceeded, true},
		{"two Jobs, succeeded", []map[string]any{batchJob, batchJob}, jobs.StatusSucceeded, true},
		{"a Job and a ConfigMap, succeeded", []map[string]any{batchJob, cm}, jobs.StatusSucceeded, false},
		{"a CronJob, succeeded", []map[string]any{cron}, jobs.StatusSucceeded, false},
		{"one Job, failed", []map[string]any{batchJob}, jobs.StatusFailed, false},
		{"one Job, cancelled", []map[string]any{batchJob}, jobs.StatusCancelled, false},
		{"nothing applied", nil, jobs.StatusSucceeded, false},
	}
	for _, tt := range tests {
		if got := KeptWhole(jobs.Job{ID: "job-1", Manifests: tt.manifests}, tt.s); got != tt.want {
			t.Errorf("KeptWhole(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
