// Package jobobjects provides what Tidegate does to a job's objects in its cluster: stamps and
// applies its manifests, deletes them, and reads its pods, their events, logs and placement.
// Dispatch applies, the beat and the API read, cancel deletes; all through here.
package jobobjects

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/manifest"
	"github.com/tidegate/tidegate/shared/podspec"
)

// resources maps each kind the admission policy can allow to its API resource. A kind missing
// here cannot be applied, whatever the policy says.
var resources = map[schema.GroupVersionKind]string{
	{Group: "batch", Version: "v1", Kind: "Job"}:                  "jobs",
	{Group: "batch", Version: "v1", Kind: "CronJob"}:              "cronjobs",
	{Group: "apps", Version: "v1", Kind: "Deployment"}:            "deployments",
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}:           "statefulsets",
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:            "replicasets",
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:             "daemonsets",
	{Group: "", Version: "v1", Kind: "Pod"}:                       "pods",
	{Group: "", Version: "v1", Kind: "ConfigMap"}:                 "configmaps",
	{Group: "", Version: "v1", Kind: "Secret"}:                    "secrets",
	{Group: "", Version: "v1", Kind: "Service"}:                   "services",
	{Group: "", Version: "v1", Kind: "ServiceAccount"}:            "serviceaccounts",
	{Group: "", Version: "v1", Kind: "PersistentVolumeClaim"}:     "persistentvolumeclaims",
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}: "poddisruptionbudgets",
}

// Kinds are the kinds Tidegate can apply, in a fixed order: whatever an operator lets tenants
// submit is among them, so the sweep LISTs these (one LIST a kind a region a minute) without
// reading the admission policy, which the beat does not link.
func Kinds() []schema.GroupVersionKind {
	out := slices.Collect(maps.Keys(resources))
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int {
		return cmp.Compare(a.Group+"/"+a.Kind, b.Group+"/"+b.Kind)
	})
	return out
}

// ErrNameCollision is a manifest whose name is taken by an object Tidegate did not make for this job.
var ErrNameCollision = errors.New("name collision")

// ErrNameFinishing is a manifest whose name is held by a finished Job of an earlier job whose
// end is not recorded yet: replacing that Job now would take away what the beat reads the end
// from, and the earlier job would never end. The job goes back to the queue until it has.
var ErrNameFinishing = errors.New("name in use by a finished job whose end is not recorded yet")

// Ended reports whether job id's end is recorded (or it has no record): its finished objects may
// make way for a rerun.
type Ended func(ctx context.Context, id string) (bool, error)

// Apply creates each of the job's manifests in its namespace, stamped with the job id and with
// stack, the deployment's label value (podspec.StackValue), as podspec.StackLabel (Owned). An
// object that already exists with this job's annotation was created by an earlier try of this
// same dispatch, and counts as done, unless an earlier attempt of a retried job made it: that one
// is replaced; a finished Job of an earlier job makes way once that job's
// end is recorded; anything else is a name collision.
func Apply(ctx context.Context, dc dynamic.Interface, j jobs.Job, stack string, isEnded Ended) error {
	for i, m := range j.Manifests {
		obj := Owned(Stamped(m, j), stack)
		gvk := obj.GroupVersionKind()
		res, ok := resources[gvk]
		if !ok {
			return fmt.Errorf("manifest %d: %s %w", i, gvk, ErrNotApplicable)
		}
		ri := dc.Resource(gvk.GroupVersion().WithResource(res)).Namespace(j.Namespace)
		_, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "tidegate"})
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return fmt.Errorf("creating %s %s/%s: %w", gvk.Kind, j.Namespace, obj.GetName(), err)
			}
			continue
		}
		existing, getErr := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if getErr != nil {
			// Gone since the create found it, say: not the server's last word, so a retry (%v).
			return fmt.Errorf("reading the existing %s %s/%s: %v", gvk.Kind, j.Namespace, obj.GetName(), getErr)
		}
		owner := existing.GetAnnotations()[jobs.IDKey]
		if owner == j.ID && AttemptOf(existing.GetAnnotations()) < j.AttemptOf() {
			// What an earlier attempt of this job left (its end is recorded: the job was retried).
			if err := replace(ctx, ri, existing, obj); err != nil {
				return fmt.Errorf("%w: %s %s/%s of attempt %d: %v", ErrNameFinishing, gvk.Kind, j.Namespace, obj.GetName(), AttemptOf(existing.GetAnnotations()), err)
			}
			continue
		}
		if owner == j.ID {
			continue
		}
		if owner != "" && finished(existing) {
			// A finished Job of an earlier Tidegate job holds the name: once its record keeps what
			// mattered of it (status, placement, log tail), it makes way, as a rerun expects.
			done, err := isEnded(ctx, owner)
			if err != nil {
				return fmt.Errorf("reading job %s, whose %s %s/%s holds the name: %w", owner, gvk.Kind, j.Namespace, obj.GetName(), err)
			}
			if !done {
				return fmt.Errorf("%w: %s %s/%s belongs to job %s", ErrNameFinishing, gvk.Kind, j.Namespace, obj.GetName(), owner)
			}
			if err := replace(ctx, ri, existing, obj); err != nil {
				return err
			}
			continue
		}
		who := "an object Tidegate did not create"
		if owner != "" {
			who = "job " + owner + ", which is still running"
		}
		return fmt.Errorf("%w: %s %s/%s already exists, made by %s; rename it in the manifest or delete the old one",
			ErrNameCollision, gvk.Kind, j.Namespace, obj.GetName(), who)
	}
	return nil
}

// finished reports whether obj is a batch Job that has completed or failed.
func finished(obj *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if (m["type"] == "Complete" || m["type"] == "Failed") && m["status"] == "True" {
			return true
		}
	}
	return false
}

// replaceWait bounds waiting for a finished object to go: foreground deletion removes its pods
// first, which takes the kubelet a grace period; a finished Job's pods have already exited.
const replaceWait = 30 * time.Second

// replace deletes old (this very object: a UID precondition) in the foreground, waits until it is
// gone, and creates obj in its place.
func replace(ctx context.Context, ri dynamic.ResourceInterface, old, obj *unstructured.Unstructured) error {
	foreground := metav1.DeletePropagationForeground
	uid := old.GetUID()
	err := ri.Delete(ctx, old.GetName(), metav1.DeleteOptions{PropagationPolicy: &foreground, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting the finished %s %s: %w", old.GetKind(), old.GetName(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, replaceWait)
	defer cancel()
	for {
		_, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "tidegate"})
		if err == nil || !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return fmt.Errorf("creating %s %s in place of a finished one: %w", obj.GetKind(), obj.GetName(), err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the finished %s %s was not gone after %s: %w", old.GetKind(), old.GetName(), replaceWait, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stamped is a copy of manifest m ready to create: the job's namespace, the job id as label
// and annotation on the object and on every pod template inside it, every pod's
// automountServiceAccountToken false where the manifest leaves it unset, every container the
// contract's environment (contract.go) and the memory its retry rules raised, a StatefulSet's
// claims deleted with it (claimsGoWithTheSet), and a CronJob's runs kept from overlapping
// (oneRunAtATime).
func Stamped(m map[string]any, j jobs.Job) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: deepCopy(m)}
	obj.SetNamespace(j.Namespace)
	mark(obj.Object, j.ID)
	markAttempt(obj.Object, j)
	for _, path := range podTemplatePaths {
		if tmpl, found, _ := unstructured.NestedMap(obj.Object, path...); found {
			mark(tmpl, j.ID)
			markAttempt(tmpl, j)
			_ = unstructured.SetNestedMap(obj.Object, tmpl, path...)
		}
	}
	for _, spec := range manifest.PodSpecs(obj.Object) {
		noToken(spec)
		withContract(spec, j)
		withMemory(spec, j.MemoryFactor)
	}
	switch obj.GetKind() {
	case "StatefulSet":
		claimsGoWithTheSet(obj.Object, j.ID)
	case "CronJob":
		oneRunAtATime(obj.Object)
	}
	return obj
}

// Owned labels obj with podspec.StackLabel: stack, the deployment that applies it, in place of
// whatever the manifest said there; "" takes the label off. Deployments that share a cluster, or
// a namespace of one, each sweep only the objects they applied (Labelled): a job id another
// deployment's records do not know is not an unknown job's.
func Owned(obj *unstructured.Unstructured, stack string) *unstructured.Unstructured {
	labels := obj.GetLabels()
	delete(labels, podspec.StackLabel)
	if stack != "" {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[podspec.StackLabel] = stack
	}
	obj.SetLabels(labels)
	return obj
}

// oneRunAtATime gives a CronJob that names no concurrencyPolicy Forbid, where Kubernetes would
// default it to Allow: a run slower than its schedule would otherwise start another beside it,
// and the job's demand, counted at submission as one run's, would not hold. The admission policy
// refuses an explicit Allow; Forbid and Replace are kept as written.
func oneRunAtATime(cron map[string]any) {
	if v, _, _ := unstructured.NestedFieldNoCopy(cron, "spec", "concurrencyPolicy"); v == nil || v == "" {
		_ = unstructured.SetNestedField(cron, "Forbid", "spec", "concurrencyPolicy")
	}
}

// claimsGoWithTheSet makes the volume claims a StatefulSet's controller creates from its claim
// templates go when the set goes: Kubernetes keeps them by default, so a cancelled or finished
// job would leave its volumes (and their cost) behind in the tenant's namespace. The job's
// objects live as long as the job, so whenDeleted is Delete whatever the manifest says; each
// claim template also carries the job id, so a claim left by a cluster that keeps them anyway
// is still known as the job's.
func claimsGoWithTheSet(sts map[string]any, id string) {
	templates, _, _ := unstructured.NestedSlice(sts, "spec", "volumeClaimTemplates")
	if len(templates) == 0 {
		return
	}
	for _, t := range templates {
		if claim, ok := t.(map[string]any); ok {
			mark(claim, id)
		}
	}
	_ = unstructured.SetNestedSlice(sts, templates, "spec", "volumeClaimTemplates")
	_ = unstructured.SetNestedField(sts, "Delete", "spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted")
}

// noToken keeps the service account's token out of a pod that does not ask for it: Kubernetes
// mounts one unless automountServiceAccountToken is false, and a tenant's pod has no business
// with the cluster's API. The admission policy refuses an explicit true unless the operator
// allows tokens, so absent (or null, which the API server reads as absent) becomes false here.
func noToken(spec map[string]any) {
	if v, set := spec["automountServiceAccountToken"]; !set || v == nil {
		spec["automountServiceAccountToken"] = false
	}
}

// podTemplatePaths are where workload kinds keep their pod templates.
var podTemplatePaths = [][]string{
	{"spec", "template"},                        // Job, Deployment, StatefulSet, ReplicaSet, DaemonSet
	{"spec", "jobTemplate"},                     // CronJob: the Jobs it makes
	{"spec", "jobTemplate", "spec", "template"}, // CronJob: their pods
}

func mark(obj map[string]any, id string) {
	for _, field := range []string{"labels", "annotations"} {
		meta, _ := obj["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			obj["metadata"] = meta
		}
		kv, _ := meta[field].(map[string]any)
		if kv == nil {
			kv = map[string]any{}
		}
		kv[jobs.IDKey] = id
		meta[field] = kv
	}
}

// deepCopy copies decoded JSON, turning json.Number into what unstructured accepts.
func deepCopy(v map[string]any) map[string]any {
	return runtimeCopy(v).(map[string]any)
}

func runtimeCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = runtimeCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = runtimeCopy(x)
		}
		return out
	case interface{ Int64() (int64, error) }:
		if n, err := t.Int64(); err == nil {
			return n
		}
		if f, ok := t.(interface{ Float64() (float64, error) }); ok {
			if x, err := f.Float64(); err == nil {
				return x
			}
		}
		return strings.TrimSpace(fmt.Sprint(t))
	}
	return v
}
