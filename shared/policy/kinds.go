package policy

import (
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kindRule is what the policy knows about a kind it can check: the Go type a manifest of it
// decodes into, where its pods are, and any rule of its own.
type kindRule struct {
	plan *plan
	// pod returns the pod (a Pod's own) or the pod template inside obj; nil if the kind has
	// none.
	pod func(obj any) podRef
	// check adds the kind's own violations, if it has any: the API server's rules for the kind
	// and this policy's.
	check func(obj any, r *report)
	// name is the format the API server holds the kind's names to: a DNS subdomain unless
	// named says otherwise.
	name format
	// restart is the restart policies the kind's pods may have, if it has pods.
	restart restartRule
	// pods is how many pods of its template the kind runs at once, for its demand; set for
	// every kind with pods.
	pods podsCounter
	// claims returns the volume claims obj makes outside its pod (a StatefulSet's claim
	// templates, a PersistentVolumeClaim itself); nil if the kind makes none.
	claims func(obj any) []claimRef
}

// claiming returns r with its volume claims found by claims.
func (r kindRule) claiming(claims func(obj any) []claimRef) kindRule {
	r.claims = claims
	return r
}

// counting returns r with its pods at once read by pods.
func (r kindRule) counting(pods podsCounter) kindRule {
	r.pods = pods
	return r
}

// named returns r with its names held to f.
func (r kindRule) named(f format) kindRule {
	r.name = f
	return r
}

// restarting returns r with its pods' restart policies held to rr.
func (r kindRule) restarting(rr restartRule) kindRule {
	r.restart = rr
	return r
}

// podRef is one pod spec to check and where it sits in its manifest.
type podRef struct {
	meta     *metav1.ObjectMeta
	spec     *corev1.PodSpec
	metaPath string
	specPath string
}

func templateRef(t *corev1.PodTemplateSpec, at string) podRef {
	return podRef{meta: &t.ObjectMeta, spec: &t.Spec, metaPath: at + ".metadata", specPath: at + ".spec"}
}

// checkable is every kind an operator may allow: namespaced kinds whose pods, if any, this
// package can find. A kind not listed here cannot be allowed, because the policy could not tell
// whether it is namespaced or whether it runs pods that escape the Pod Security checks.
var checkable = map[Kind]kindRule{
	{"v1", "Pod"}: rule[corev1.Pod](func(p *corev1.Pod) podRef {
		return podRef{meta: &p.ObjectMeta, spec: &p.Spec, metaPath: "metadata", specPath: "spec"}
	}, nil).restarting(anyRestart).counting(onePod),
	{"batch/v1", "Job"}: rule[batchv1.Job](func(j *batchv1.Job) podRef {
		return templateRef(&j.Spec.Template, "spec.template")
	}, checkJob).restarting(jobRestart).counting(func(obj any, r *report) (int64, bool) {
		return jobPods(&obj.(*batchv1.Job).Spec, "spec", r)
	}),
	{"batch/v1", "CronJob"}: rule[batchv1.CronJob](func(c *batchv1.CronJob) podRef {
		return templateRef(&c.Spec.JobTemplate.Spec.Template, "spec.jobTemplate.spec.template")
	}, checkCronJob).restarting(jobRestart).counting(cronJobPods),
	{"apps/v1", "Deployment"}: rule[appsv1.Deployment](func(d *appsv1.Deployment) podRef {
		return templateRef(&d.Spec.Template, "spec.template")
	}, nil).restarting(alwaysRestart).counting(replicas(func(obj any) *int32 { return obj.(*appsv1.Deployment).Spec.Replicas })),
	{"apps/v1", "StatefulSet"}: rule[appsv1.StatefulSet](func(s *appsv1.StatefulSet) podRef {
		return templateRef(&s.Spec.Template, "spec.template")
	}, nil).restarting(alwaysRestart).counting(replicas(func(obj any) *int32 { return obj.(*appsv1.StatefulSet).Spec.Replicas })).claiming(func(obj any) []claimRef {
		ts := obj.(*appsv1.StatefulSet).Spec.VolumeClaimTemplates
		claims := make([]claimRef, len(ts))
		for i := range ts {
			at := indexed("spec.volumeClaimTemplates", i)
			claims[i] = claimRef{&ts[i].Spec, at + ".spec", &ts[i].ObjectMeta, at + ".metadata"}
		}
		return claims
	}),
	{"apps/v1", "ReplicaSet"}: rule[appsv1.ReplicaSet](func(s *appsv1.ReplicaSet) podRef {
		return templateRef(&s.Spec.Template, "spec.template")
	}, nil).restarting(alwaysRestart).counting(replicas(func(obj any) *int32 { return obj.(*appsv1.ReplicaSet).Spec.Replicas })),
	{"apps/v1", "DaemonSet"}: rule[appsv1.DaemonSet](func(s *appsv1.DaemonSet) podRef {
		return templateRef(&s.Spec.Template, "spec.template")
	}, nil).restarting(alwaysRestart).counting(daemonPods),
	{"v1", "ConfigMap"}: rule[corev1.ConfigMap](nil, checkConfigMap),
	{"v1", "Secret"}: rule[corev1.Secret](nil, func(s *corev1.Secret, r *report) {
		checkSecret(s, r)
		checkSecretKeys(s, r)
	}),
	{"v1", "PersistentVolumeClaim"}: rule[corev1.PersistentVolumeClaim](nil, nil).claiming(func(obj any) []claimRef {
		return []claimRef{{spec: &obj.(*corev1.PersistentVolumeClaim).Spec, path: "spec"}}
	}),
	{"v1", "ServiceAccount"}:             rule[corev1.ServiceAccount](nil, nil),
	{"policy/v1", "PodDisruptionBudget"}: rule[policyv1.PodDisruptionBudget](nil, nil),
	// A Service's name is a DNS label: RFC 1035's (starting with a letter) on servers without
	// RelaxedServiceNameValidation, RFC 1123's (a digit first too) on those with it. The looser
	// is held here, so that no server's accepted name is refused.
	{"v1", "Service"}: rule[corev1.Service](nil, func(s *corev1.Service, r *report) {
		checkService(s, r)
		checkServicePorts(s, r)
	}).named(dnsLabelName),
}

// rule builds a kindRule for Go type T from typed callbacks.
func rule[T any](pod func(*T) podRef, check func(*T, *report)) kindRule {
	r := kindRule{plan: planFor(reflect.TypeFor[T]()), name: dnsSubdomainName}
	if pod != nil {
		r.pod = func(obj any) podRef { return pod(obj.(*T)) }
	}
	if check != nil {
		r.check = func(obj any, rep *report) { check(obj.(*T), rep) }
	}
	return r
}

func checkableKinds() []Kind {
	ks := make([]Kind, 0, len(checkable))
	for k := range checkable {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b Kind) int {
		return strings.Compare(a.String(), b.String())
	})
	return ks
}

// rbacGroup holds Roles, ClusterRoles and their bindings: a tenant who could write them could
// grant itself anything.
const rbacGroup = "rbac.authorization.k8s.io"

// clusterScoped lists, by API group, the built-in kinds that live outside any namespace. A
// tenant owns namespaces, never the cluster, so none of these is ever allowed.
var clusterScoped = map[string][]string{
	"":                             {"Namespace", "Node", "PersistentVolume", "ComponentStatus"},
	"apiextensions.k8s.io":         {"CustomResourceDefinition"},
	"apiregistration.k8s.io":       {"APIService"},
	"admissionregistration.k8s.io": {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"},
	"storage.k8s.io":               {"StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass"},
	"scheduling.k8s.io":            {"PriorityClass"},
	"node.k8s.io":                  {"RuntimeClass"},
	"certificates.k8s.io":          {"CertificateSigningRequest", "ClusterTrustBundle"},
	"networking.k8s.io":            {"IngressClass", "IPAddress", "ServiceCIDR"},
	"flowcontrol.apiserver.k8s.io": {"FlowSchema", "PriorityLevelConfiguration"},
	"resource.k8s.io":              {"DeviceClass"},
	"policy":                       {"PodSecurityPolicy"},
	"authentication.k8s.io":        {"TokenReview", "SelfSubjectReview"},
	"authorization.k8s.io":         {"SubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview"},
}

// never says what kind k is if it may never be allowed ("cluster-scoped", "an RBAC object"),
// or "" if it may.
func never(k Kind) string {
	g := k.group()
	if g == rbacGroup {
		return "an RBAC object"
	}
	if slices.Contains(clusterScoped[g], k.Kind) {
		return "cluster-scoped"
	}
	return ""
}
