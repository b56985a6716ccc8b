package jobobjects

import (
	stdmaps "maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/manifest"
)

// TestStampedSetsTheContract: every container and init container of every pod a job applies
// has the contract's variables, Tidegate's values in place of any the manifest gave the same
// names, its own others kept; TIDEGATE_CHECKPOINT_URI only where the job has a prefix,
// TIDEGATE_ARRAY_INDEX only on an array's child.
func TestStampedSetsTheContract(t *testing.T) {
	m := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "train"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"initContainers": []any{map[string]any{"name": "fetch", "image": "busybox"}},
			"containers": []any{map[string]any{"name": "main", "image": "busybox", "env": []any{
				map[string]any{"name": "TIDEGATE_JOB_ID", "value": "someone-elses"},
				map[string]any{"name": "EPOCHS", "value": "10"},
			}}},
		}}}}
	index := 7
	j := jobs.Job{ID: "job-1", Namespace: "team-a", Attempt: 3, Preemptions: 2, CheckpointURI: "s3://ckpt/acme/job-1/", ArrayIndex: &index}
	want := map[string]string{EnvJobID: "job-1", EnvAttempt: "3", EnvPreemptions: "2", EnvCheckpointURI: "s3://ckpt/acme/job-1/", jobs.ArrayIndexEnv: "7"}
	specs := manifest.PodSpecs(Stamped(m, j).Object)
	if len(specs) != 1 {
		t.Fatalf("%d pod specs, want 1", len(specs))
	}
	for _, field := range []string{"initContainers", "containers"} {
		for _, c := range specs[0][field].([]any) {
			got := map[string]string{}
			for _, e := range c.(map[string]any)["env"].([]any) {
				kv := e.(map[string]any)
				if _, twice := got[kv["name"].(string)]; twice {
					t.Errorf("%s %v: %s set twice", field, c.(map[string]any)["name"], kv["name"])
				}
				got[kv["name"].(string)] = kv["value"].(string)
			}
			w := stdmaps.Clone(want)
			if c.(map[string]any)["name"] == "main" {
				w["EPOCHS"] = "10"
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("%s %v env (-want +got):\n%s", field, c.(map[string]any)["name"], diff)
			}
		}
	}
	if env := contractEnv(jobs.Job{ID: "job-2"}); len(env) != 3 {
		t.Errorf("a job without a checkpoint prefix or an array index: %v; want the three others only", env)
	}
	if m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["initContainers"].([]any)[0].(map[string]any)["env"] != nil {
		t.Errorf("Stamped changed the manifest itself")
	}
}

// TestStampedRaisesMemory: a job whose retry rules raised its memory has every container's
// memory request and limit raised by the factor, whether written as a string or a number; other
// resources, and a job at factor 1, keep theirs.
func TestStampedRaisesMemory(t *testing.T) {
	m := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{
		"containers": []any{map[string]any{"name": "main", "resources": map[string]any{
			"requests": map[string]any{"memory": "1Gi", "cpu": "1"}, "limits": map[string]any{"memory": int64(2 << 30)}}}}}}
	res := func(obj map[string]any) map[string]any {
		return obj["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)
	}
	got := res(Stamped(m, jobs.Job{ID: "job-1", MemoryFactor: 1.5}).Object)
	if r, l := got["requests"].(map[string]any), got["limits"].(map[string]any); r["memory"] != "1536Mi" || r["cpu"] != "1" || l["memory"] != "3Gi" {
		t.Errorf("raised by 1.5: requests %v, limits %v; want memory 1536Mi (cpu 1) and 3Gi", r, l)
	}
	if r := res(Stamped(m, jobs.Job{ID: "job-1"}).Object)["requests"].(map[string]any); r["memory"] != "1Gi" {
		t.Errorf("not raised: requests %v; want memory 1Gi", r)
	}
}
