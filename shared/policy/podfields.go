package policy

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pod fields the Pod Security profile does not look at but that take a pod past the
// namespace its tenant is confined to: onto a node of the operator's (nodeName, tolerations, a
// runtime class, node labels and pod affinity: placement.go), into what a CSI driver serves,
// ahead of other tenants' pods (a priority class), into another workload's
// permissions (a service account, its token) or another tenant's storage (a claim binding an
// existing volume). Each is refused unless Config.Pods allows it.
//
// An emptyDir without sizeLimit is refused rather than given a default one: the policy decides
// and does not rewrite pods (the only field it fills in is the namespace), and a default would
// have the kubelet evict a tenant's pod at a size the tenant never wrote. The refusal says what
// to set.
//
// automountServiceAccountToken is refused only when true: an unset one is common in manifests
// and harmless once shared/jobobjects applies it as false, so refusing it would only make every
// tenant write the same line.

// claimRef is one volume claim to check and where it sits in its manifest. meta is a claim
// template's metadata, at metaPath; nil for a PersistentVolumeClaim, whose metadata is the
// object's.
type claimRef struct {
	spec     *corev1.PersistentVolumeClaimSpec
	path     string
	meta     *metav1.ObjectMeta
	metaPath string
}

// checkPodFields reports each of the pod's fields that Config.Pods does not allow.
func (c *Checker) checkPodFields(p podRef, r *report) {
	s, at := p.spec, p.specPath
	if s.NodeName != "" && !c.pods.AllowNodeName {
		r.addf(at+".nodeName", msgNodeName, s.NodeName)
	}
	for i, t := range s.Tolerations {
		path := indexed(at+".tolerations", i) + ".key"
		switch {
		case t.Key == "":
			r.addf(path, msgTolerationAll, remedy(c.pods.Tolerations, "remove the toleration", "set key to"))
		case !slices.Contains(c.pods.Tolerations, t.Key):
			r.addf(path, msgToleration, t.Key, remedy(c.pods.Tolerations, "remove the toleration", "tolerate"))
		}
	}
	runtimeClass := ""
	if s.RuntimeClassName != nil {
		runtimeClass = *s.RuntimeClassName
	}
	for _, f := range []struct {
		field, value, msg, remove string
		allowed, offered          []string
	}{
		{"priorityClassName", s.PriorityClassName, msgPriorityClass, "remove priorityClassName", c.pods.PriorityClasses, c.pods.PriorityClasses},
		{"runtimeClassName", runtimeClass, msgRuntimeClass, "remove runtimeClassName", c.pods.RuntimeClasses, c.pods.RuntimeClasses},
		{"serviceAccountName", s.ServiceAccountName, msgServiceAccount, `remove serviceAccountName to run as "default"`, c.accounts, c.pods.ServiceAccounts},
		// The deprecated spelling still sets the service account when serviceAccountName is empty.
		{"serviceAccount", s.DeprecatedServiceAccount, msgServiceAccount, `remove serviceAccount to run as "default"`, c.accounts, c.pods.ServiceAccounts},
	} {
		if f.value != "" && !slices.Contains(f.allowed, f.value) {
			r.addf(at+"."+f.field, f.msg, f.value, remedy(f.offered, f.remove, "use"))
		}
	}
	if t := s.AutomountServiceAccountToken; t != nil && *t && !c.pods.AllowServiceAccountToken {
		r.add(at+".automountServiceAccountToken", msgAutomountToken)
	}
	c.checkVolumes(p, r)
}

// remedy says what to do about a value outside an allow-list: remove the field, or pick an
// allowed value ("use one of a, b").
func remedy(allowed []string, remove, use string) string {
	if len(allowed) == 0 {
		return remove
	}
	return remove + ", or " + use + " one of " + strings.Join(allowed, ", ")
}

// checkVolumes holds the pod's emptyDir volumes to a size, its ephemeral volumes' claims to the
// claim rules, its inline CSI volumes to the allowed drivers, and its projected volumes to no
// service account token.
func (c *Checker) checkVolumes(p podRef, r *report) {
	var onDisk resource.Quantity
	over := false
	for i := range p.spec.Volumes {
		v := &p.spec.Volumes[i]
		path := indexed(p.specPath+".volumes", i)
		if e := v.EmptyDir; e != nil {
			memory := e.Medium == corev1.StorageMediumMemory
			switch {
			case e.SizeLimit == nil && memory:
				r.addf(path+".emptyDir.sizeLimit", msgEmptyDirNoLimit, v.Name, "memory")
			case e.SizeLimit == nil:
				r.addf(path+".emptyDir.sizeLimit", msgEmptyDirNoLimit, v.Name, "disk")
			case e.SizeLimit.Sign() <= 0:
				// The kubelet enforces a sizeLimit only when it is above zero.
				r.addf(path+".emptyDir.sizeLimit", msgEmptyDirZeroLimit, v.Name, e.SizeLimit.String())
			case !memory:
				// A memory-backed volume counts against the pod's memory; one on disk shares the
				// node's disk with the containers, so together they are held to the cap.
				onDisk.Add(*e.SizeLimit)
				if !over && onDisk.Cmp(c.ephemeralCap) > 0 {
					over = true
					r.addf(path+".emptyDir.sizeLimit", msgEmptyDirOverCap, onDisk.String(), v.Name, c.ephemeralCap.String(), c.ephemeralCap.String())
				}
			}
		}
		if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
			at := path + ".ephemeral.volumeClaimTemplate"
			c.checkClaim(claimRef{&e.VolumeClaimTemplate.Spec, at + ".spec", &e.VolumeClaimTemplate.ObjectMeta, at + ".metadata"}, r)
		}
		if csi := v.CSI; csi != nil && !slices.Contains(c.pods.CSIDrivers, csi.Driver) {
			r.addf(path+".csi.driver", msgCSIDriver, v.Name, csi.Driver, remedy(c.pods.CSIDrivers, "remove the volume, or mount a persistentVolumeClaim instead", "use"))
		}
		if pr := v.Projected; pr != nil && !c.pods.AllowServiceAccountToken {
			for j := range pr.Sources {
				if pr.Sources[j].ServiceAccountToken != nil {
					r.add(indexed(path+".projected.sources", j)+".serviceAccountToken", msgProjectedToken)
				}
			}
		}
	}
}

// checkClaim holds a volume claim to an allowed storage class and the size cap, and refuses one
// that would bind an existing volume: by its name, or by the empty class that only
// pre-provisioned volumes have.
func (c *Checker) checkClaim(cl claimRef, r *report) {
	checkOwnMeta(cl.meta, cl.metaPath, r)
	s := cl.spec
	if s.VolumeName != "" {
		r.addf(cl.path+".volumeName", msgClaimVolumeName, s.VolumeName)
	}
	const removeClass = "remove storageClassName to use the cluster's default class"
	switch sc := s.StorageClassName; {
	case sc == nil:
	case *sc == "":
		r.addf(cl.path+".storageClassName", msgClaimNoClass, remedy(c.pods.StorageClasses, removeClass, "use"))
	case !slices.Contains(c.pods.StorageClasses, *sc):
		r.addf(cl.path+".storageClassName", msgClaimClass, *sc, remedy(c.pods.StorageClasses, removeClass, "use"))
	}
	for _, l := range []struct {
		field string
		list  corev1.ResourceList
	}{{"requests", s.Resources.Requests}, {"limits", s.Resources.Limits}} {
		if q, ok := l.list[corev1.ResourceStorage]; ok && q.Cmp(c.volumeCap) > 0 {
			r.addf(cl.path+".resources."+l.field+"[storage]", msgClaimSize, q.String(), c.volumeCap.String(), c.volumeCap.String())
		}
	}
}
