package policy

import "fmt"

// A batch job ends when what runs to an end does (its Jobs, a CronJob's first run, its bare pods
// with restartPolicy Never or OnFailure), and its end deletes every object applied for it. An
// object that never ends beside those (a Deployment, a StatefulSet, a ReplicaSet, a
// bare pod that restarts Always, Kubernetes' default for a Pod) would be cut off at that end, or,
// before the end deleted anything, run on outside every capacity, quota and cost report once its
// job was recorded done. Such a submission is refused as a whole, naming each object that never
// ends. A job of only never-ending objects has no end to cut them off: one of only Deployments
// and StatefulSets is long-running (shared/jobs KindOf), and one with a bare pod that restarts
// Always, or a ReplicaSet, runs, holding its room, until it is cancelled. A DaemonSet is refused
// wherever it stands, as its demand cannot be counted (demand.go), so it is not named here again.

// ending is how one manifest of an allowed kind stands towards the job's end.
type ending int

const (
	noPods     ending = iota // a ConfigMap, a Service: it runs nothing
	endsItself               // a Job, a CronJob's first run, a bare pod that does not restart Always
	neverEnds                // a Deployment and its like, a bare pod that restarts Always
)

// endingOf says how manifest m, of kind k, stands towards its job's end.
func endingOf(k Kind, m map[string]any) ending {
	switch k {
	case Kind{"batch/v1", "Job"}, Kind{"batch/v1", "CronJob"}:
		return endsItself
	case Kind{"apps/v1", "Deployment"}, Kind{"apps/v1", "StatefulSet"}, Kind{"apps/v1", "ReplicaSet"}:
		return neverEnds
	case Kind{"v1", "Pod"}:
		spec, _ := m["spec"].(map[string]any)
		switch spec["restartPolicy"] {
		case "Never", "OnFailure":
			return endsItself
		case nil, "", "Always":
			return neverEnds
		}
		// Any other value is refused by the pod's own rules (msgRestartPolicy).
	}
	return noPods
}

// checkEnds reports each manifest of manifests that never ends in a submission with one that
// does, naming the first that does. It reads kind and restartPolicy from the documents as
// given; a document whose kind is missing or not allowed is reported by its own checks.
func (c *Checker) checkEnds(manifests []map[string]any, res *Result) {
	ender := -1
	var never []int
	for i, m := range manifests {
		k, ok := manifestKind(m)
		if _, allowed := c.kinds[k]; !ok || !allowed {
			continue
		}
		switch endingOf(k, m) {
		case endsItself:
			if ender < 0 {
				ender = i
			}
		case neverEnds:
			never = append(never, i)
		}
	}
	if ender < 0 {
		return
	}
	ek, _ := manifestKind(manifests[ender])
	endsWith := fmt.Sprintf("document %d, %s %q", ender, ek.Kind, nameOf(manifests[ender]))
	for _, i := range never {
		k, _ := manifestKind(manifests[i])
		v := Violation{Document: i, Kind: k.Kind, Name: nameOf(manifests[i]), Field: "kind"}
		if k.Kind == "Pod" {
			v.Field = "spec.restartPolicy"
			v.Message = fmt.Sprintf(msgPodNeverEnds, endsWith)
		} else {
			v.Message = fmt.Sprintf(msgNeverEnds, k.Kind, endsWith, k.Kind)
		}
		res.Violations = append(res.Violations, v)
	}
}

// manifestKind is m's apiVersion and kind, and whether it has both.
func manifestKind(m map[string]any) (Kind, bool) {
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	return Kind{APIVersion: apiVersion, Kind: kind}, apiVersion != "" && kind != ""
}

func nameOf(m map[string]any) string {
	meta, _ := m["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}
