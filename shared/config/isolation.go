package config

import (
	"fmt"
	"net/netip"
	"strconv"
)

// IsolationSettings are what the beat makes each namespace's NetworkPolicies, ResourceQuota and
// LimitRange from (shared/isolation). The address ranges are read here; the container defaults
// stay text, as the policy's caps do, for the beat's wiring to read as Kubernetes quantities
// (config links no Kubernetes package), "" when unset.
type IsolationSettings struct {
	// PodCIDRs, ServiceCIDRs and NodeCIDRs are the clusters' own addresses, which the hosted
	// apps may not reach.
	PodCIDRs     []netip.Prefix
	ServiceCIDRs []netip.Prefix
	NodeCIDRs    []netip.Prefix
	// Resolvers are the DNS servers the hosted apps may query (port 53, UDP and TCP).
	Resolvers []netip.Addr
	// DefaultCPU, DefaultMemory, DefaultCPURequest and DefaultMemoryRequest are what a tenant's
	// container that sets no resources gets.
	DefaultCPU           string
	DefaultMemory        string
	DefaultCPURequest    string
	DefaultMemoryRequest string
	// PodsPerJob is how many pods at once a tenant's namespace may run for each job its region admits.
	PodsPerJob int
}

// Defaults of the isolation settings. A cluster on the VPC CNI gives pods and nodes addresses of
// its VPC, which are private (RFC 1918, or 100.64.0.0/10 under custom networking); EKS puts
// services in 10.100.0.0/16 or 172.20.0.0/16. So, unless told the cluster's own, the apps may
// reach no private address. The resolvers are the public ones shared/podspec gives every host.
const (
	DefaultPodCIDRs     = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10"
	DefaultServiceCIDRs = "10.100.0.0/16,172.20.0.0/16"
	DefaultNodeCIDRs    = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"
	DefaultResolvers    = "1.1.1.1,8.8.8.8"
	// DefaultPodsPerJob lets each job run ten pods at once on average (a Job's parallelism, a
	// Deployment's replicas): room for a small fan-out without letting one replicas field fill
	// a cluster.
	DefaultPodsPerJob = 10
)

// isolation reads the isolation settings, each range and address checked.
func (r *reader) isolation() IsolationSettings {
	s := IsolationSettings{
		PodCIDRs:             r.cidrs(EnvPodCIDRs, DefaultPodCIDRs),
		ServiceCIDRs:         r.cidrs(EnvServiceCIDRs, DefaultServiceCIDRs),
		NodeCIDRs:            r.cidrs(EnvNodeCIDRs, DefaultNodeCIDRs),
		Resolvers:            r.addrs(EnvAppsResolvers, DefaultResolvers),
		DefaultCPU:           r.get(EnvContainerCPU),
		DefaultMemory:        r.get(EnvContainerMemory),
		DefaultCPURequest:    r.get(EnvContainerCPURequest),
		DefaultMemoryRequest: r.get(EnvContainerMemoryRequest),
		PodsPerJob:           DefaultPodsPerJob,
	}
	if v := r.get(EnvPodsPerJob); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10_000 {
			r.fail(EnvPodsPerJob, fmt.Errorf("%q is not a whole number from 1 to 10000", v))
		}
		s.PodsPerJob = n
	}
	return s
}

// cidrs is name's comma-separated ranges, def when unset. A range must be written as its
// network (10.0.0.0/8, not 10.1.2.3/8), and none may be everything (/0): the apps would reach
// nothing.
func (r *reader) cidrs(name, def string) []netip.Prefix {
	items := splitList(r.getenv(name))
	if len(items) == 0 {
		items = splitList(def)
	}
	var out []netip.Prefix
	for _, it := range items {
		p, err := netip.ParsePrefix(it)
		switch {
		case err != nil:
			r.fail(name, fmt.Errorf("%q is not a CIDR range such as 10.0.0.0/16", it))
		case p != p.Masked():
			r.fail(name, fmt.Errorf("%q has bits set past its length; write %s", it, p.Masked()))
		case p.Bits() == 0:
			r.fail(name, fmt.Errorf("%q is every address; name the cluster's own range", it))
		default:
			out = append(out, p)
		}
	}
	return out
}

// addrs is name's comma-separated IP addresses, def when unset.
func (r *reader) addrs(name, def string) []netip.Addr {
	items := splitList(r.getenv(name))
	if len(items) == 0 {
		items = splitList(def)
	}
	var out []netip.Addr
	for _, it := range items {
		a, err := netip.ParseAddr(it)
		if err != nil || a.Zone() != "" || a.IsUnspecified() {
			r.fail(name, fmt.Errorf("%q is not an IP address such as 1.1.1.1", it))
			continue
		}
		out = append(out, a.Unmap())
	}
	return out
}

// Defaults of what a tenant's container that sets no resources gets. The beat makes an unset
// limit the policy's cap on a pod instead, where there is one: the API server refuses a container
// whose request is above the limit it was given, and no container the policy admits asks for
// more than the cap. Without a cap, a limit of one CPU and 1 GiB keeps a container that forgot
// its limits from taking a node; a tenth of a CPU and 256 MiB requested (or the limit, if lower)
// is what a small batch step needs to be scheduled.
const (
	DefaultContainerCPU           = "1"
	DefaultContainerMemory        = "1Gi"
	DefaultContainerCPURequest    = "100m"
	DefaultContainerMemoryRequest = "256Mi"
)
