package policy

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The metadata that is Tidegate's or the cluster's to write, never a tenant's: keys under
// tidegate.io/, finalizers and ownerReferences. It is held to that on every object, every pod
// template, a CronJob's job template and every volume claim template, since what a template
// carries lands on the objects made from it.
//
// Tidegate stamps its own keys (the job's id, its attempt, the deployment that applied it, the
// retry watch) at apply, after this policy, on copies of the manifests (jobobjects.Stamped and
// Owned). Some of them it writes only sometimes, the attempt only past the first, so one a tenant
// wrote would stand where Tidegate wrote none: a first attempt saying it is the 99th is read as
// an earlier attempt's leftover and shown pending while it runs. So every key under the prefix is
// refused, not only the ones in use today.
//
// Label keys are case-sensitive and their prefix is a lower-case DNS subdomain, so a label
// "TIDEGATE.IO/x" is refused as Kubernetes refuses it, not as Tidegate's. Annotation keys may
// have any case; one differing from Tidegate's only in case is refused too, as no tenant has a
// use for it but to pass for Tidegate's with a reader that folds case.

// tenantWritable are the keys under tidegate.io/ that a tenant writes itself: the sandbox of
// `tidegate dev` ends a pod as they say (shared/dev/sandbox), and nothing else reads them.
var tenantWritable = []string{"tidegate.io/sandbox-exit-code", "tidegate.io/sandbox-oom-kill"}

// tidegateKey reports whether k is under tidegate.io/ or a subdomain of it, in any case.
func tidegateKey(k string) bool {
	prefix, _, found := strings.Cut(strings.ToLower(k), "/")
	return found && (prefix == "tidegate.io" || strings.HasSuffix(prefix, ".tidegate.io"))
}

// checkOwnMeta refuses in m, which sits at path, Tidegate's keys, finalizers and ownerReferences.
func checkOwnMeta(m *metav1.ObjectMeta, path string, r *report) {
	if m == nil {
		return
	}
	// A label key Kubernetes refuses is reported as that (checkLabelsAndAnnotations) and not
	// again here.
	for _, k := range sortedKeys(m.Labels, func(k, _ string) bool { return labelKey.valid(k) && tidegateKey(k) }) {
		r.addf(path+".labels["+k+"]", msgTidegateKey, "label", clip(k))
	}
	for _, k := range sortedKeys(m.Annotations, func(k, _ string) bool {
		return tidegateKey(k) && !slices.Contains(tenantWritable, k)
	}) {
		r.addf(path+".annotations["+k+"]", msgTidegateKey, "annotation", clip(k))
	}
	if len(m.Finalizers) > 0 {
		r.add(path+".finalizers", msgFinalizers)
	}
	if len(m.OwnerReferences) > 0 {
		r.add(path+".ownerReferences", msgOwnerReferences)
	}
}
