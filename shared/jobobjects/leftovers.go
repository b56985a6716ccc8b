package jobobjects

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Nothing is left behind: a job's end deletes every object applied for it (AtEnd), and the beat's
// sweep deletes any object carrying the job-id label whose job has ended or has no record
// (Swept), so that nothing a job made runs on outside the capacity, quotas and cost reports that
// count only active jobs. Both decide from what the cluster showed, and touch nothing.
//
// A finished batch/v1 Job of an ended job is kept (and every Job of a job that succeeded, which
// its Jobs all did): the cluster deletes it, and its pods,
// ttlSecondsAfterFinished after its end (WithJobTTL), and until then its pods' logs can still be
// read. Its pods have exited and hold no room. A Job still running when its job ended (a job
// failed for another Job's failure, say) is deleted like everything else.

// Object is one object carrying a job id, as the cluster showed it.
type Object struct {
	Resource  schema.GroupVersionResource
	Kind      string
	Namespace string
	Name      string
	// UID makes sure a delete takes this object and not a namesake made since it was read.
	UID types.UID
	// Job is the job id on its label (a listed object) or its annotation (a job's own object read
	// by name).
	Job string
	// Attempt is the attempt of the job that made it, from 1.
	Attempt int
	// Finished is true of a batch Job that has completed or failed.
	Finished bool
	// Owned is true of an object a controller made (a ReplicaSet, a CronJob's Job, a pod): it goes
	// when its owner goes, and the garbage collector deletes it if its owner is gone already.
	Owned bool
}

// observe is what the cluster shows of obj, of resource.
func observe(resource schema.GroupVersionResource, obj *unstructured.Unstructured, job string) Object {
	o := Object{Resource: resource, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
		UID: obj.GetUID(), Job: job, Attempt: AttemptOf(obj.GetAnnotations())}
	o.Finished = resource.Group == "batch" && resource.Resource == "jobs" && finished(obj)
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			o.Owned = true
		}
	}
	return o
}

// keptAfterEnd reports whether o stays after the end of its job, ended in status s: a batch Job
// that finished, for its TTL, or any batch Job of a job that succeeded. A job succeeds when all
// its Jobs have, and the beat may see that from a Job's pods a moment before the Job controller
// writes the Job's Complete condition (podended.go).
func keptAfterEnd(o Object, s jobs.Status) bool {
	return (o.Finished || s == jobs.StatusSucceeded) && o.Resource.Group == "batch" && o.Resource.Resource == "jobs"
}

// KeptWhole reports whether the end of job j in status s deletes none of its objects, so that
// they need not be read: it succeeded, and each of its manifests is a batch Job, which
// keptAfterEnd keeps for its TTL.
func KeptWhole(j jobs.Job, s jobs.Status) bool {
	if s != jobs.StatusSucceeded || len(j.Manifests) == 0 {
		return false
	}
	for _, m := range j.Manifests {
		gvk := (&unstructured.Unstructured{Object: m}).GroupVersionKind()
		if gvk.Group != "batch" || resources[gvk] != "jobs" {
			return false
		}
	}
	return true
}

// AtEnd are the objects of seen, job id's manifests' objects as read by name, that id's end in
// status s deletes: those carrying its id but the batch Jobs keptAfterEnd keeps. Deleting a
// CronJob deletes the Jobs it made, and so stops its runs.
func AtEnd(id string, s jobs.Status, seen []Object) []Object {
	var out []Object
	for _, o := range seen {
		if o.Job == id && !keptAfterEnd(o, s) {
			out = append(out, o)
		}
	}
	return out
}

// Swept are the objects of listed, each listed by the job-id label, that the sweep deletes: in a
// namespace Tidegate manages (managed), made by no controller (those go with their owner), and
// whose job either has no record (absent from states) or has ended; a finished batch Job of an
// ended job is kept for its TTL. An object of an active job, or in a namespace no tenant holds,
// is never deleted, nor one without a job id.
func Swept(listed []Object, states map[string]jobs.Status, managed map[string]bool) []Object {
	var out []Object
	for _, o := range listed {
		if o.Job == "" || !managed[o.Namespace] || o.Owned {
			continue
		}
		s, known := states[o.Job]
		if known && (!s.Terminal() || keptAfterEnd(o, s)) {
			continue
		}
		out = append(out, o)
	}
	return out
}
