package jobs

import (
	"slices"

	"github.com/tidegate/tidegate/shared/manifest"
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

type workloadKind struct {
	kind       string
	batch, pod []string
}

// workloadKinds are the kinds that run pods, in the order NameOf prefers them to name a job, with
// where each keeps its pod spec and, for the batch kinds, the spec above it (parallelism and the
// rest).
var workloadKinds = []workloadKind{
	{"Job", []string{"spec"}, []string{"spec", "template", "spec"}},
	{"CronJob", []string{"spec", "jobTemplate", "spec"}, []string{"spec", "jobTemplate", "spec", "template", "spec"}},
	{"Deployment", nil, []string{"spec", "template", "spec"}},
	{"StatefulSet", nil, []string{"spec", "template", "spec"}},
	{"DaemonSet", nil, []string{"spec", "template", "spec"}},
	{"ReplicaSet", nil, []string{"spec", "template", "spec"}},
	{"Pod", nil, []string{"spec"}},
}

// Workloads lists, in manifest order, the objects of manifests that run pods; objects that do
// not (a ConfigMap, a Service) are left out.
func Workloads(manifests []map[string]any) []Workload {
	out := []Workload{}
	for _, m := range manifests {
		kind, _ := m["kind"].(string)
		i := slices.IndexFunc(workloadKinds, func(w workloadKind) bool { return w.kind == kind })
		if i < 0 {
			continue
		}
		at := workloadKinds[i]
		meta, _ := m["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		w := Workload{Kind: kind, Name: name}
		if batch := manifest.At(m, at.batch...); at.batch != nil && batch != nil {
			w.Parallelism, w.Completions, w.BackoffLimit = number(batch["parallelism"]), number(batch["completions"]), number(batch["backoffLimit"])
		}
		pod := manifest.At(m, at.pod...)
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

// number is v as a whole number (manifest.WholeNumber), nil when absent or not whole.
func number(v any) *int64 {
	n, ok := manifest.WholeNumber(v)
	if !ok {
		return nil
	}
	return &n
}
