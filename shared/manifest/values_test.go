package manifest

import (
	"encoding/json"
	"testing"
)

func TestAtCopyWholeNumber(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"n": json.Number("3")}}, "list": []any{map[string]any{"a": "b"}}}}
	if got := At(obj, "spec", "template", "spec"); got == nil || got["n"] != json.Number("3") {
		t.Errorf("At(spec.template.spec) = %v", got)
	}
	if got := At(obj, "spec", "list"); got != nil {
		t.Errorf("At through an array = %v, want nil", got)
	}
	if got := At(obj); got["spec"] == nil {
		t.Errorf("At with no path = %v, want obj", got)
	}
	c := Copy(obj).(map[string]any)
	At(c, "spec")["list"].([]any)[0].(map[string]any)["a"] = "changed"
	At(c, "spec", "template", "spec")["n"] = 4
	if At(obj, "spec")["list"].([]any)[0].(map[string]any)["a"] != "b" || At(obj, "spec", "template", "spec")["n"] != json.Number("3") {
		t.Errorf("changing the copy changed the original: %v", obj)
	}
	for v, want := range map[any]int64{json.Number("42"): 42, 7.0: 7, int64(-1): -1, 5: 5, int32(9): 9} {
		if got, ok := WholeNumber(v); !ok || got != want {
			t.Errorf("WholeNumber(%#v) = %d, %v; want %d", v, got, ok, want)
		}
	}
	for _, v := range []any{json.Number("1.5"), 2.5, 1e300, "3", nil, true} {
		if got, ok := WholeNumber(v); ok {
			t.Errorf("WholeNumber(%#v) = %d; want none", v, got)
		}
	}
}

func TestPodSpecs(t *testing.T) {
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{"a": 1}}
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{"b": 1}}}}
	cron := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"c": 1}}}}}}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{}}
	for _, tc := range []struct {
		m    map[string]any
		want string
	}{{pod, "a"}, {job, "b"}, {cron, "c"}} {
		specs := PodSpecs(tc.m)
		if len(specs) != 1 || specs[0][tc.want] == nil {
			t.Errorf("PodSpecs(%v) = %v, want the spec holding %s", tc.m["kind"], specs, tc.want)
			continue
		}
		specs[0]["changed"] = true
	}
	if At(job, "spec", "template", "spec")["changed"] != true {
		t.Error("PodSpecs gave a copy; a change to a spec must reach the object")
	}
	if specs := PodSpecs(cm); len(specs) != 0 {
		t.Errorf("PodSpecs(ConfigMap) = %v, want none", specs)
	}
}
