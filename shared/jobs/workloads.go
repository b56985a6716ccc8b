package jobs

import (
	"encoding/json"
	"math"
)

// Workload is what a job's manifest asks of one object that runs pods: its kind and name, a batch
// Job's (or a CronJob's job template's) parallelism, completions and backoffLimit when set, and
// the images of its pod's containers and init containers.
type Workload struct {
	Kind           string      `json:"kind"`
	Name           string      `json:"name"`
	Parallelism    *int64      `json:"parallelism,omitempty"`
	Completions    *int64      `json:"completions,omitempty"`
	BackoffLimit   *int64      `json:"backoff_limit,omitempty"`
	Containers     []Container `json:"containers"`
	InitContainers []Container `json:"init_containers"`
}

// Container is a container's name and image, as a manifest gives them.
type Container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// podSpecAt is where each kind that runs pods keeps its pod spec; the batch spec (parallelism and
// the rest) is the one above the template.
var podSpecAt = map[string]struct{ batch, pod []string }{
	"Pod":         {nil, []string{"spec"}},
	"Job":         {[]string{"spec"}, []string{"spec", "template", "spec"}},
	"CronJob":     {[]string{"spec", "jobTemplate", "spec"}, []string{"spec", "jobTemplate", "spec", "template", "spec"}},
	"Deployment":  {nil, []string{"spec", "template", "spec"}},
	"StatefulSet": {nil, []string{"spec", "template", "spec"}},
	"DaemonSet":   {nil, []string{"spec", "template", "spec"}},
	"ReplicaSet":  {nil, []string{"spec", "template", "spec"}},
}

// Workloads lists, in manifest order, the objects of manifests that run pods; objects that do
// not (a ConfigMap, a Service) are left out.
func Workloads(manifests []map[string]any) []Workload {
	out := []Workload{}
	for _, m := range manifests {
		kind, _ := m["kind"].(string)
		at, ok := podSpecAt[kind]
		if !ok {
			continue
		}
		meta, _ := m["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		w := Workload{Kind: kind, Name: name}
		if batch := mapAt(m, at.batch); at.batch != nil && batch != nil {
			w.Parallelism, w.Completions, w.BackoffLimit = number(batch["parallelism"]), number(batch["completions"]), number(batch["backoffLimit"])
		}
		pod := mapAt(m, at.pod)
		w.Containers, w.InitContainers = containers(pod["containers"]), containers(pod["initContainers"])
		out = append(out, w)
	}
	return out
}

func containers(v any) []Container {
	out := []Container{}
	list, _ := v.([]any)
	for _, c := range list {
		cm, _ := c.(map[string]any)
		name, _ := cm["name"].(string)
		image, _ := cm["image"].(string)
		out = append(out, Container{Name: name, Image: image})
	}
	return out
}

func mapAt(obj map[string]any, path []string) map[string]any {
	for _, k := range path {
		next, ok := obj[k].(map[string]any)
		if !ok {
			return nil
		}
		obj = next
	}
	return obj
}

// number reads a whole number as the decoders leave it; nil when absent or not whole.
func number(v any) *int64 {
	var n int64
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return nil
		}
		n = i
	case float64:
		if x != math.Trunc(x) || math.Abs(x) >= 1<<53 {
			return nil
		}
		n = int64(x)
	case int64:
		n = x
	case int:
		n = int64(x)
	default:
		return nil
	}
	return &n
}
