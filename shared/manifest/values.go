package manifest

import (
	"encoding/json"
	"math"
)

// What works on manifests once decoded: one way, shared by every package that reads or changes
// them, to walk to an object, copy one, and read a number as the decoders leave it.

// At is the object at path in obj, nil when any step of it is missing or not an object.
func At(obj map[string]any, path ...string) map[string]any {
	for _, k := range path {
		next, ok := obj[k].(map[string]any)
		if !ok {
			return nil
		}
		obj = next
	}
	return obj
}

// Copy deep-copies a decoded value: its objects and arrays anew, everything else as it is.
func Copy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = Copy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Copy(e)
		}
		return out
	}
	return v
}

// WholeNumber reads v as a whole number: a json.Number as the decoders leave one, or the Go
// numbers other decoding (or code) gives; false for anything else, a fraction included.
func WholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), n == math.Trunc(n) && math.Abs(n) < 1<<53
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	}
	return 0, false
}

// podSpecPaths are where workload kinds keep their pods' specs; a v1 Pod keeps its own at spec.
var podSpecPaths = [][]string{
	{"spec", "template", "spec"},                        // Job, Deployment, StatefulSet, ReplicaSet, DaemonSet
	{"spec", "jobTemplate", "spec", "template", "spec"}, // CronJob
}

// PodSpecs are the pod specs of object m, in place (a change to one changes m): a v1 Pod's own,
// or the one in each pod template a workload kind keeps.
func PodSpecs(m map[string]any) []map[string]any {
	paths := podSpecPaths
	if m["apiVersion"] == "v1" && m["kind"] == "Pod" {
		paths = [][]string{{"spec"}}
	}
	var out []map[string]any
	for _, path := range paths {
		if spec := At(m, path...); spec != nil {
			out = append(out, spec)
		}
	}
	return out
}
