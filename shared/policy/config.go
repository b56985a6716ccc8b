package policy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/demand"
)

// Kind names a manifest type as the manifest spells it: apiVersion and kind.
type Kind struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// String is how messages name a kind: "batch/v1 Job".
func (k Kind) String() string { return k.APIVersion + " " + k.Kind }

// group is the API group of the kind's apiVersion; "" for the core group ("v1").
func (k Kind) group() string {
	g, _, found := strings.Cut(k.APIVersion, "/")
	if !found {
		return ""
	}
	return g
}

// DefaultKinds is the allow-list when Config.Kinds is empty: the batch and serving workloads a
// tenant runs, and the two namespaced helpers they need (a Service is further held to
// ClusterIP).
func DefaultKinds() []Kind {
	return []Kind{
		{"batch/v1", "Job"},
		{"batch/v1", "CronJob"},
		{"apps/v1", "Deployment"},
		{"apps/v1", "StatefulSet"},
		{"v1", "Pod"},
		{"v1", "ConfigMap"},
		{"v1", "Service"},
	}
}

// Config is the operator's policy, the same for every tenant.
type Config struct {
	// Kinds is the allow-list; empty means DefaultKinds. Only kinds this package knows how to
	// check may be listed, and never a cluster-scoped or RBAC kind.
	Kinds []Kind

	// MaxGPUs, MaxCPU and MaxMemory cap what one pod of a manifest may ask for (see
	// effectiveAmount for how a pod's amount is counted); nil means no cap. A cap of zero GPUs
	// is a real cap: no GPUs at all.
	MaxGPUs   *resource.Quantity
	MaxCPU    *resource.Quantity
	MaxMemory *resource.Quantity

	// TrustedRegistries, when not empty, are the prefixes every image must start with, written
	// as a fully qualified reference prefix: "ghcr.io/acme", "docker.io/library/nginx",
	// "123456789012.dkr.ecr.us-east-1.amazonaws.com". A prefix matches whole path components,
	// so "ghcr.io/acme" does not admit "ghcr.io/acme-evil/x".
	TrustedRegistries []string

	// The pod fields that would step around the namespace a tenant is confined to, each refused
	// unless allowed here (see podfields.go). The zero value allows none of them.
	Pods PodFields

	// ContainerDefaults are the requests a container that sets neither a request nor a limit of
	// CPU or memory gets from the LimitRange in the tenant's namespace, which a job's demand
	// counts for it (Result.Demand); zero counts nothing for it.
	ContainerDefaults demand.Defaults

	// AppsNamespace is the namespace of the hosted apps (config.Config.AppsNamespace), refused
	// to every manifest as kube-* and default are, whatever a tenant's record says; "" for none.
	AppsNamespace string
}

// PodFields are the operator's allowances for the pod fields that reach past a tenant's
// namespace: the node, other pods' priority, the runtime, service accounts and their tokens,
// and storage.
type PodFields struct {
	// AllowNodeName lets a pod set spec.nodeName, which skips the scheduler and with it every
	// taint, so a pod lands on any node (the hosting nodes, say).
	AllowNodeName bool
	// Tolerations are the taint keys a pod may tolerate. A toleration with no key tolerates
	// every taint and is never allowed.
	Tolerations []string
	// PriorityClasses are the priority classes a pod may name; one could preempt other
	// tenants' pods.
	PriorityClasses []string
	// RuntimeClasses are the runtime classes a pod may name; a RuntimeClass's scheduling
	// brings its nodes' tolerations, so naming gVisor's would land a job on the hosting nodes.
	RuntimeClasses []string
	// ServiceAccounts are the service accounts, besides "default", a pod may run as.
	ServiceAccounts []string
	// AllowServiceAccountToken lets a pod mount its service account's token: by
	// automountServiceAccountToken true or a projected serviceAccountToken source.
	AllowServiceAccountToken bool
	// StorageClasses are the storage classes a volume claim (a pod's ephemeral volume, a
	// StatefulSet's claim template, a PersistentVolumeClaim where allowed) may name. A claim
	// naming none gets the cluster's default class.
	StorageClasses []string
	// MaxEphemeralStorage caps the ephemeral storage one pod asks for (counted as the other
	// caps are) and what its emptyDir volumes on disk may hold in all; nil is
	// DefaultMaxEphemeralStorage.
	MaxEphemeralStorage *resource.Quantity
	// MaxVolumeSize caps the storage one volume claim asks for; nil is DefaultMaxVolumeSize.
	MaxVolumeSize *resource.Quantity
	// CSIDrivers are the drivers an inline CSI volume (a pod's volumes[].csi) may name. Such a
	// volume mounts whatever its driver serves with the driver's own credentials (the secrets
	// store's driver serves the cloud's secrets), so none is allowed unless listed.
	CSIDrivers []string
	// NodeSelectorKeys are the node label keys a pod may select nodes by, in its nodeSelector
	// and its node affinity's terms; empty is DefaultNodeSelectorKeys. Any other key could pick
	// the operator's own nodes that no taint guards, or make the autoscaler buy the costliest
	// instance type.
	NodeSelectorKeys []string
}

// The caps that hold when the operator sets none. 20Gi is the whole root volume an EKS managed
// node group gives a Linux node by default, shared by every pod on it, so no pod has a use for
// more there; an operator with larger disks raises it. 50Gi is a generous scratch volume for one
// job; a tenant that needs more asks the operator rather than quietly provisioning terabytes.
var (
	DefaultMaxEphemeralStorage = resource.MustParse("20Gi")
	DefaultMaxVolumeSize       = resource.MustParse("50Gi")
)

// DefaultNodeSelectorKeys are the node labels a job legitimately picks its capacity by, when the
// operator lists none: spot or on-demand (Karpenter's capacity type, which dispatch also sets
// for the on-demand fallback), the instance type, the zone, the CPU architecture and the GPU
// model (NVIDIA's GPU feature discovery label). They are the labels a region's flavors are told
// apart by, so a job can name its flavor's.
func DefaultNodeSelectorKeys() []string {
	return []string{
		"karpenter.sh/capacity-type",
		"node.kubernetes.io/instance-type",
		"topology.kubernetes.io/zone",
		"kubernetes.io/arch",
		"nvidia.com/gpu.product",
	}
}

// clone copies p's lists, so that a caller changing its Config later changes no Checker, with
// DefaultNodeSelectorKeys in force where p lists none.
func (p PodFields) clone() PodFields {
	p.Tolerations = slices.Clone(p.Tolerations)
	p.PriorityClasses = slices.Clone(p.PriorityClasses)
	p.RuntimeClasses = slices.Clone(p.RuntimeClasses)
	p.ServiceAccounts = slices.Clone(p.ServiceAccounts)
	p.StorageClasses = slices.Clone(p.StorageClasses)
	p.CSIDrivers = slices.Clone(p.CSIDrivers)
	p.NodeSelectorKeys = slices.Clone(p.NodeSelectorKeys)
	if len(p.NodeSelectorKeys) == 0 {
		p.NodeSelectorKeys = DefaultNodeSelectorKeys()
	}
	return p
}

// ephemeralStorageCap is the ephemeral storage cap in force.
func (p PodFields) ephemeralStorageCap() resource.Quantity {
	if p.MaxEphemeralStorage != nil {
		return p.MaxEphemeralStorage.DeepCopy()
	}
	return DefaultMaxEphemeralStorage.DeepCopy()
}

// volumeSizeCap is the volume claim cap in force.
func (p PodFields) volumeSizeCap() resource.Quantity {
	if p.MaxVolumeSize != nil {
		return p.MaxVolumeSize.DeepCopy()
	}
	return DefaultMaxVolumeSize.DeepCopy()
}

// Validate reports every problem with the config at once.
func (c Config) Validate() error {
	var errs []error
	for _, k := range c.Kinds {
		if err := admittable(k); err != nil {
			errs = append(errs, err)
		}
	}
	for _, cp := range []struct {
		name string
		q    *resource.Quantity
	}{{"MaxGPUs", c.MaxGPUs}, {"MaxCPU", c.MaxCPU}, {"MaxMemory", c.MaxMemory},
		{"MaxEphemeralStorage", c.Pods.MaxEphemeralStorage}, {"MaxVolumeSize", c.Pods.MaxVolumeSize},
		{"ContainerDefaults.CPU", &c.ContainerDefaults.CPU}, {"ContainerDefaults.Memory", &c.ContainerDefaults.Memory}} {
		switch {
		case cp.q == nil:
		case cp.q.Sign() < 0:
			errs = append(errs, fmt.Errorf("%s %s must not be negative", cp.name, cp.q))
		case cp.q.AsApproximateFloat64() > math.MaxInt64:
			// Comparing with a cap like 1e999999999 would build a billion-digit number.
			errs = append(errs, fmt.Errorf("%s %s is too large to be a cap: leave it unset for none", cp.name, cp.q))
		}
	}
	for _, p := range c.TrustedRegistries {
		if err := validRegistryPrefix(p); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.Pods.validate()...)
	return errors.Join(errs...)
}

// validate refuses an allow-list entry no pod could name: each is held to the format the API
// server holds the field to.
func (p PodFields) validate() []error {
	var errs []error
	for _, l := range []struct {
		name  string
		items []string
		f     format
	}{
		{"Tolerations", p.Tolerations, labelKey}, // a taint's key is a qualified name, as a label key is
		{"PriorityClasses", p.PriorityClasses, dnsSubdomainName},
		{"RuntimeClasses", p.RuntimeClasses, dnsSubdomainName},
		{"ServiceAccounts", p.ServiceAccounts, dnsSubdomainName},
		{"StorageClasses", p.StorageClasses, dnsSubdomainName},
		// Kubernetes holds a CSI driver's name to a DNS subdomain of at most 63 characters.
		{"CSIDrivers", p.CSIDrivers, dnsSubdomainName},
		{"NodeSelectorKeys", p.NodeSelectorKeys, labelKey},
	} {
		for _, item := range l.items {
			if why := l.f.refused(item); why != "" {
				errs = append(errs, fmt.Errorf("%s: %q is not a name a pod could give: %s", l.name, item, why))
			}
		}
	}
	return errs
}

// admittable says why kind k may not be on the allow-list, or nil if it may.
func admittable(k Kind) error {
	if why := never(k); why != "" {
		return fmt.Errorf("kind %s can never be allowed, even if configured: it is %s, and tenants may not create those", k, why)
	}
	if _, ok := checkable[k]; !ok {
		return fmt.Errorf("kind %s is not one this policy knows how to check (it cannot tell whether it is namespaced or runs pods); known kinds: %s", k, kindList(checkableKinds()))
	}
	return nil
}

// validRegistryPrefix refuses a prefix that could never match a normalised image reference, or
// that matches far more than it seems to.
func validRegistryPrefix(p string) error {
	switch {
	case p == "":
		return errors.New("a trusted registry prefix must not be empty")
	case strings.Contains(p, "://"):
		return fmt.Errorf("trusted registry prefix %q must not have a scheme: write it as an image reference starts, e.g. ghcr.io/acme", p)
	case strings.ContainsAny(p, " \t\n"):
		return fmt.Errorf("trusted registry prefix %q must not contain whitespace", p)
	}
	host, _, _ := strings.Cut(p, "/")
	if !isRegistryHost(host) {
		return fmt.Errorf("trusted registry prefix %q must start with a registry host (one with a dot or a port, or localhost); for Docker Hub write docker.io/library/%s", p, p)
	}
	return nil
}

func kindList(ks []Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.String()
	}
	return strings.Join(names, ", ")
}
