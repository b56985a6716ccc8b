package policy

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// What the Kubernetes API server would refuse on create, found here so that the tenant hears of
// it at submission rather than when dispatch applies the manifest: names, labels and
// annotations, containers' names, ports and environment, and the restart policies each kind's
// pods may have. Each object is judged as the API server judges it, after its defaults (an
// unset restartPolicy is Always) and after name generation. What this package cannot decide
// without a cluster, or is unsure of, it lets through for the cluster to decide: the metadata of
// a CronJob's job template and of a StatefulSet's volume claim templates (not validated on
// create by every server version), label selectors, and the many fields whose values only the
// server's own validation knows in full (probes, volumes, resources beyond the caps).

// checkAPIMeta checks an object's name (or generateName), labels and annotations.
func checkAPIMeta(rule kindRule, m *metav1.ObjectMeta, r *report) {
	if m.GenerateName != "" {
		if why := rule.name.prefix(m.GenerateName); why != "" {
			r.addf("metadata.generateName", msgGenerateName, clip(m.GenerateName), why)
		}
	}
	if m.Name != "" {
		if why := rule.name.refused(m.Name); why != "" {
			r.addf("metadata.name", msgName, clip(m.Name), why)
		}
	}
	checkLabelsAndAnnotations(m, "metadata", r)
}

// checkLabelsAndAnnotations holds metadata's labels and annotations to the API server's rules:
// label keys and annotation keys are qualified names (annotation keys in any case), label
// values at most 63 characters of the same alphabet, and all annotations together at most
// 256 KiB.
func checkLabelsAndAnnotations(m *metav1.ObjectMeta, path string, r *report) {
	for _, k := range sortedKeys(m.Labels, func(k, v string) bool {
		return !labelKey.valid(k) || !labelValue.valid(v)
	}) {
		at := path + ".labels[" + k + "]"
		if why := labelKey.refused(k); why != "" {
			r.addf(at, msgLabelKey, clip(k), why)
		}
		if why := labelValue.refused(m.Labels[k]); why != "" {
			r.addf(at, msgLabelValue, clip(m.Labels[k]), why)
		}
	}
	size := 0
	for k, v := range m.Annotations {
		size += len(k) + len(v)
	}
	for _, k := range sortedKeys(m.Annotations, func(k, _ string) bool { return !labelKey.valid(strings.ToLower(k)) }) {
		if why := labelKey.refused(strings.ToLower(k)); why != "" {
			r.addf(path+".annotations["+k+"]", msgAnnotationKey, clip(k), why)
		}
	}
	if size > apivalidation.TotalAnnotationSizeLimitB {
		r.addf(path+".annotations", msgAnnotationsSize, size, apivalidation.TotalAnnotationSizeLimitB)
	}
}

// sortedKeys is m's keys for which bad holds, sorted so that the same manifest always reports
// the same list; nil, without allocating, when there are none.
func sortedKeys[V any](m map[string]V, bad func(k string, v V) bool) []string {
	var keys []string
	for k, v := range m {
		if bad(k, v) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// checkKeys holds the keys of a ConfigMap's or Secret's data (field names which) to the API
// server's rule for them; other, if not nil, is the object's other bag of data, which may not
// hold the same key.
func checkKeys[V, W any](m map[string]V, field string, other map[string]W, otherField string, r *report) {
	for _, k := range sortedKeys(m, func(k string, _ V) bool {
		_, twice := other[k]
		return !configKey.valid(k) || twice
	}) {
		if why := configKey.refused(k); why != "" {
			r.addf(field+"["+k+"]", msgDataKey, clip(k), why)
		}
		if _, twice := other[k]; twice {
			r.addf(field+"["+k+"]", msgDataKeyTwice, clip(k), otherField)
		}
	}
}

func checkConfigMap(c *corev1.ConfigMap, r *report) {
	checkKeys(c.Data, "data", c.BinaryData, "binaryData", r)
	checkKeys(c.BinaryData, "binaryData", map[string]string(nil), "", r)
}

// checkSecretKeys is checkConfigMap for a Secret, whose stringData the API server merges into
// its data, a key in both taking stringData's value.
func checkSecretKeys(s *corev1.Secret, r *report) {
	checkKeys(s.Data, "data", map[string]string(nil), "", r)
	checkKeys(s.StringData, "stringData", map[string]string(nil), "", r)
}

// checkAPIPod checks a pod or pod template: its template's labels and annotations, its restart
// policy, its containers' and init containers' names, images, ports, environment variables and
// the limits of the resources that cannot be overcommitted, and its ephemeral containers'
// images. Ephemeral containers are otherwise left to the Pod Security checks.
func checkAPIPod(rule kindRule, p podRef, r *report) {
	if p.metaPath != "metadata" { // a Pod's own metadata is checked as the object's
		checkLabelsAndAnnotations(p.meta, p.metaPath, r)
	}
	checkRestartPolicy(rule.restart, p, r)
	s := p.spec
	n := len(s.Containers) + len(s.InitContainers)
	for i := range n {
		c, list, j := nthContainer(s, i)
		checkContainer(c, func() string { return indexed(p.specPath+"."+list, j) }, r)
	}
	checkEphemeralImages(p, r)
	checkPodQuantities(p, r)
	// As the API server does, the second container of a name is the one refused, init
	// containers coming after the pod's containers.
	eachDuplicate(n, func(i int) string { c, _, _ := nthContainer(s, i); return c.Name }, func(i int) {
		c, list, j := nthContainer(s, i)
		r.addf(indexed(p.specPath+"."+list, j)+".name", msgContainerDuplicate, c.Name)
	})
}

// nthContainer is the pod's i-th container, counting its containers and then its init
// containers, with the list it is in and its index there.
func nthContainer(s *corev1.PodSpec, i int) (c *corev1.Container, list string, index int) {
	if i < len(s.Containers) {
		return &s.Containers[i], "containers", i
	}
	i -= len(s.Containers)
	return &s.InitContainers[i], "initContainers", i
}

// checkContainer checks one container's name, image, ports, environment and resources; path is
// where it sits, made only if something is reported.
func checkContainer(c *corev1.Container, path func() string, r *report) {
	if c.Name == "" {
		r.add(path()+".name", msgContainerNoName)
	} else if why := dnsLabelValue.refused(c.Name); why != "" {
		r.addf(path()+".name", msgContainerName, clip(c.Name), why)
	}
	checkImagePresent(c.Image, false, path, r)
	for j := range c.Ports {
		if name := c.Ports[j].Name; name != "" {
			if why := portName.refused(name); why != "" {
				r.addf(indexed(path()+".ports", j)+".name", msgPortName, clip(name), why)
			}
		}
	}
	// Port names need only be unique within their container.
	eachDuplicate(len(c.Ports), func(j int) string { return c.Ports[j].Name }, func(j int) {
		r.addf(indexed(path()+".ports", j)+".name", msgPortDuplicate, c.Ports[j].Name)
	})
	for j := range c.Env {
		if why := envName.refused(c.Env[j].Name); why != "" {
			r.addf(indexed(path()+".env", j)+".name", msgEnvName, clip(c.Env[j].Name), why)
		}
	}
	checkResourceLimits(&c.Resources, path, r)
	if len(c.Resources.Requests)+len(c.Resources.Limits) > 0 {
		checkNonNegative(c.Resources.Requests, path()+".resources.requests", r)
		checkNonNegative(c.Resources.Limits, path()+".resources.limits", r)
	}
}

// eachDuplicate calls dup with each index whose non-empty name an earlier index has already.
// A short list is scanned; a long one (a megabyte of manifest holds thousands of ports) hashed.
func eachDuplicate(n int, name func(int) string, dup func(int)) {
	const scanned = 16
	if n <= scanned {
		for i := 1; i < n; i++ {
			ni := name(i)
			for j := 0; j < i && ni != ""; j++ {
				if name(j) == ni {
					dup(i)
					break
				}
			}
		}
		return
	}
	seen := make(map[string]bool, n)
	for i := range n {
		ni := name(i)
		if ni != "" && seen[ni] {
			dup(i)
		}
		seen[ni] = true
	}
}

// restartRule is which restart policies a kind's pods may have.
type restartRule struct {
	allowed []corev1.RestartPolicy
	text    string // the allowed ones, for a message
}

var (
	// anyRestart is a Pod's: every policy there is.
	anyRestart = restartRule{[]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}, "Always, OnFailure or Never"}
	// jobRestart is a Job's, and a CronJob's jobs': a pod that ends must be allowed to stay ended.
	jobRestart = restartRule{[]corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}, "OnFailure or Never"}
	// alwaysRestart is a Deployment's, StatefulSet's, ReplicaSet's and DaemonSet's.
	alwaysRestart = restartRule{[]corev1.RestartPolicy{corev1.RestartPolicyAlways}, "Always"}
)

// checkRestartPolicy holds the pod's restart policy to the kind's rule, an unset one being
// Always, as the API server's defaults make it before validating (a Job's too: hence its
// "Required value" for a Job without one).
func checkRestartPolicy(rule restartRule, p podRef, r *report) {
	set := p.spec.RestartPolicy
	if slices.Contains(rule.allowed, cmp.Or(set, corev1.RestartPolicyAlways)) {
		return
	}
	if set == "" {
		r.addf(p.specPath+".restartPolicy", msgRestartPolicyUnset, r.kind, rule.text)
		return
	}
	r.addf(p.specPath+".restartPolicy", msgRestartPolicy, clip(string(set)), r.kind, rule.text)
}

// generatedName stands for the name the API server generates from generateName: the prefix,
// cut to 58 characters, and five random lower-case letters and digits, so as valid and as long
// as any name it could generate. It is "" when the object has neither.
func generatedName(m *metav1.ObjectMeta) string {
	if m.Name != "" || m.GenerateName == "" {
		return m.Name
	}
	const maxPrefix, suffix = 58, "aaaaa" // apiserver's storage/names.SimpleNameGenerator
	return m.GenerateName[:min(len(m.GenerateName), maxPrefix)] + suffix
}

// checkJob refuses the names the API server refuses for a Job beyond the DNS subdomain rule.
// Unless its selector is manual, a Job's name is copied into its pods' job-name labels, so it
// may have at most 63 characters; an Indexed Job's pods are named after it with "-<index>" and
// the largest of those names must be a DNS label.
func checkJob(j *batchv1.Job, r *report) {
	name := generatedName(&j.ObjectMeta)
	if manual := j.Spec.ManualSelector; (manual == nil || !*manual) && len(name) > validation.LabelValueMaxLength {
		r.addf("metadata.name", msgJobNameLabel, len(name), validation.LabelValueMaxLength)
	}
	spec := &j.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || spec.Completions == nil || *spec.Completions <= 0 || name == "" {
		return
	}
	last := name + "-" + strconv.Itoa(int(*spec.Completions-1))
	if why := dnsLabelValue.refused(last); why != "" {
		r.addf("metadata.name", msgIndexedJobName, clip(last), why)
	}
}

// cronJobNameMax is the longest name a CronJob may have: its Jobs are named after it with an
// 11-character "-<minutes since 1970>" and must fit a 63-character DNS label.
const cronJobNameMax = validation.DNS1035LabelMaxLength - 11

func checkCronJob(c *batchv1.CronJob, r *report) {
	if name := generatedName(&c.ObjectMeta); len(name) > cronJobNameMax {
		r.addf("metadata.name", msgCronJobName, len(name), cronJobNameMax)
	}
	checkConcurrency(c, r)
	// The job template's metadata becomes each run's Job's.
	checkOwnMeta(&c.Spec.JobTemplate.ObjectMeta, "spec.jobTemplate.metadata", r)
}

// checkConcurrency refuses a CronJob whose runs may overlap (concurrencyPolicy Allow): a run
// slower than its schedule would start another beside it, and another, so what the CronJob
// runs at once, its demand, would have no bound. One that says nothing is applied with Forbid
// (jobobjects.Stamped) rather than Kubernetes' default of Allow, so its demand is one run's.
func checkConcurrency(c *batchv1.CronJob, r *report) {
	if c.Spec.ConcurrencyPolicy == batchv1.AllowConcurrent {
		r.add("spec.concurrencyPolicy", msgCronJobConcurrency)
	}
}

// checkServicePorts holds a Service's port names to the API server's rule: each a DNS label,
// unique, and required when there are several ports.
func checkServicePorts(s *corev1.Service, r *report) {
	ports := s.Spec.Ports
	for i := range ports {
		switch name := ports[i].Name; {
		case name == "" && len(ports) > 1:
			r.add(indexed("spec.ports", i)+".name", msgServicePortNoName)
		case name == "":
		default:
			if why := dnsLabelValue.refused(name); why != "" {
				r.addf(indexed("spec.ports", i)+".name", msgServicePortName, clip(name), why)
			}
		}
	}
	eachDuplicate(len(ports), func(i int) string { return ports[i].Name }, func(i int) {
		r.addf(indexed("spec.ports", i)+".name", msgServicePortDuplicate, ports[i].Name)
	})
}
