package jobs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorkloads(t *testing.T) {
	var ms []map[string]any
	src := `[
	 {"kind":"ConfigMap","metadata":{"name":"settings"}},
	 {"kind":"Job","metadata":{"name":"train"},"spec":{"parallelism":4,"completions":8,"backoffLimit":2,"template":{"spec":{
	   "initContainers":[{"name":"fetch","image":"busybox:1.36"}],"containers":[{"name":"main","image":"pytorch/pytorch:2.5"}]}}}},
	 {"kind":"CronJob","metadata":{"name":"nightly"},"spec":{"jobTemplate":{"spec":{"completions":1,"template":{"spec":{"containers":[{"name":"c","image":"alpine"}]}}}}}},
	 {"kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"name":"w","image":"nginx"}]}}}}
	]`
	d := json.NewDecoder(strings.NewReader(src))
	d.UseNumber()
	if err := d.Decode(&ms); err != nil {
		t.Fatal(err)
	}
	four, eight, two, one := int64(4), int64(8), int64(2), int64(1)
	want := []Workload{
		{Kind: "Job", Name: "train", Parallelism: &four, Completions: &eight, BackoffLimit: &two,
			Containers: []Container{{"main", "pytorch/pytorch:2.5"}}, InitContainers: []Container{{"fetch", "busybox:1.36"}}},
		{Kind: "CronJob", Name: "nightly", Completions: &one, Containers: []Container{{"c", "alpine"}}, InitContainers: []Container{}},
		{Kind: "Deployment", Name: "web", Containers: []Container{{"w", "nginx"}}, InitContainers: []Container{}},
	}
	if diff := cmp.Diff(want, Workloads(ms)); diff != "" {
		t.Errorf("Workloads (-want +got):\n%s", diff)
	}
}
