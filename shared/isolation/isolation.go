// Package isolation provides the objects that keep tenants' namespaces and the hosted apps'
// namespace apart in each region's cluster — NetworkPolicies, a ResourceQuota and a LimitRange —
// and the steps that make a cluster's objects match them. Objects in, steps out: nothing here
// touches the cluster.
package isolation

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/netip"
	"regexp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Object is one of the objects this package wants: a *networkingv1.NetworkPolicy, a
// *corev1.ResourceQuota or a *corev1.LimitRange.
type Object interface {
	metav1.Object
	runtime.Object
}

// Labels on every object of ours; Selector lists them and nothing else.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "tidegate"
	ComponentLabel = "app.kubernetes.io/component"
	Component      = "isolation"
	// OwnerLabel holds Settings.Owner: which deployment keeps the object, so that two sharing a
	// cluster (staging and production, or tests on one sandbox) never delete each other's.
	OwnerLabel = "tidegate.io/isolation-owner"
)

// Selector is the label selector of owner's objects, and of nothing a tenant's job made: every
// object a tenant's job makes carries jobs.IDKey, so one carrying it is a tenant's, whatever
// other labels it copied from ours.
func Selector(owner string) string {
	return ManagedByLabel + "=" + ManagedBy + "," + ComponentLabel + "=" + Component + "," + OwnerLabel + "=" + owner + ",!" + jobs.IDKey
}

// ownerDigits of a SHA-256 name an owner whose name is no label value: 64 bits.
const ownerDigits = 16

// OwnerOf is the owner label value of the deployment whose control table is named table: the
// name itself where it is a label value (at most 63 of letters, digits, '-', '_', '.', starting
// and ending with a letter or digit), else the start of its SHA-256.
func OwnerOf(table string) string {
	if labelValue.MatchString(table) {
		return table
	}
	sum := sha256.Sum256([]byte(table))
	return hex.EncodeToString(sum[:])[:ownerDigits]
}

var labelValue = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// FieldManager is who owns the fields Tidegate applies (server-side apply).
const FieldManager = "tidegate"

// Names of our objects. A tenant's namespace has one of each of the first four; the apps'
// namespace the last two.
const (
	NamespacePolicy       = "tidegate-namespace-isolation"
	NamespaceEgressPolicy = "tidegate-namespace-egress"
	NamespaceQuota        = "tidegate-quota"
	NamespaceLimits       = "tidegate-limits"
	AppsIngressPolicy     = "tidegate-apps-deny-ingress"
	AppsEgressPolicy      = "tidegate-apps-egress"
)

// names are every name of ours: a labelled object by any other name is not ours to delete.
var names = []string{NamespacePolicy, NamespaceEgressPolicy, NamespaceQuota, NamespaceLimits, AppsIngressPolicy, AppsEgressPolicy}

// Settings are the operator's, the same for every region.
type Settings struct {
	// Owner is the deployment's name on its objects (OwnerOf its control table).
	Owner string
	// AppsNamespace holds the hosted apps (config.Config.AppsNamespace) in HostingRegion's cluster.
	AppsNamespace string
	HostingRegion string
	// Ranges are what the apps may not reach: the clusters' own addresses.
	Ranges Ranges
	// Resolvers are the DNS servers the apps may query, on port 53 over UDP and TCP.
	Resolvers []netip.Addr
	// Containers are what a tenant's container that sets no resources gets.
	Containers ContainerDefaults
	// PodsPerJob is how many pods at once a tenant's namespace may run for each job its region
	// admits; see Quota.
	PodsPerJob int64
	// PodCaps are the admission policy's caps on one pod (TIDEGATE_POLICY_MAX_*).
	PodCaps PodCaps
}

// Ranges are a cluster's address ranges. A cluster on the VPC CNI gives pods addresses of its
// VPC, so Pods and Nodes may well be the same.
type Ranges struct {
	Pods     []netip.Prefix
	Services []netip.Prefix
	Nodes    []netip.Prefix
}

// Region is one region and what the drain lets its active jobs hold at once.
type Region struct {
	Name string
	// Jobs is the region's capacity (config.Config.Capacity); GPUs its GPU cap, 0 for none.
	Jobs int
	GPUs int64
}

// Cluster is one cluster and the regions whose jobs run on it: in AWS each region has its own;
// in dev every region runs on the one sandbox, whose objects must say one thing, not one per
// region in turn.
type Cluster struct{ Regions []Region }

// reach is what the drain lets every region of c hold at once together: their capacities, and
// their GPU caps when every one has one (a region without a cap leaves GPUs uncapped).
func (c Cluster) reach() (jobs int, gpus int64) {
	capped := true
	for _, r := range c.Regions {
		jobs, gpus = jobs+r.Jobs, gpus+r.GPUs
		capped = capped && r.GPUs > 0
	}
	if !capped {
		gpus = 0
	}
	return jobs, gpus
}

// hosts reports whether c runs the hosted apps.
func (c Cluster) hosts(s Settings) bool {
	return slices.ContainsFunc(c.Regions, func(r Region) bool { return r.Name == s.HostingRegion })
}

// Wanted is every object of ours that cluster c should hold: two NetworkPolicies (ingress and
// egress), a ResourceQuota and a LimitRange in each namespace a tenant holds, and, where the hosted apps run, the apps'
// namespace's two NetworkPolicies. A namespace of the cluster itself (kube-*), default,
// or the apps' (which a tenant cannot be given, but a record may say otherwise) is never a
// tenant's here, whatever its record holds. Objects are sorted by namespace, then name.
func Wanted(c Cluster, tenants []tenancy.Tenant, s Settings) []Object {
	held := map[string]bool{}
	for _, t := range tenants {
		for _, ns := range t.Namespaces {
			if tenancy.IsDNSLabel(ns) && tenancy.ReservedNamespace(ns, s.AppsNamespace) == nil {
				held[ns] = true
			}
		}
	}
	var out []Object
	for _, ns := range slices.Sorted(maps.Keys(held)) {
		out = append(out, namespacePolicy(ns, s.Owner), namespaceEgress(ns, s), limits(ns, s), quota(ns, c, s))
	}
	apps := s.AppsNamespace
	if c.hosts(s) && tenancy.IsDNSLabel(apps) && tenancy.ReservedNamespace(apps, "") == nil {
		out = append(out, appsIngress(apps, s.Owner), appsEgress(apps, s))
	}
	slices.SortStableFunc(out, func(a, b Object) int { return compareKeys(KeyOf(a), KeyOf(b)) })
	return out
}

// meta is the metadata of our object name in namespace ns.
func meta(ns, name, owner string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: ns,
		Labels: map[string]string{ManagedByLabel: ManagedBy, ComponentLabel: Component, OwnerLabel: owner},
	}
}
