package isolation

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// metadataRanges hold instance metadata and the link-local services beside it (the VPC's
// resolver at 169.254.169.253, the time server): fd00:ec2::254 is IMDS over IPv6.
var metadataRanges = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fd00:ec2::254/128"),
}

// dnsPort is where the apps' resolvers answer.
const dnsPort = 53

var policyTypeMeta = metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"}

// namespacePolicy lets a tenant's pods be reached from their own namespace only: pods of other
// namespaces (another tenant's jobs, the hosted apps) are refused. Egress has a policy of its own
// (namespaceEgress).
func namespacePolicy(ns, owner string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta:   policyTypeMeta,
		ObjectMeta: meta(ns, NamespacePolicy, owner),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}},
			}},
		},
	}
}

// appsIngress refuses every connection to a host: hosts connect out (to register, to fetch their
// sources, to their own backends), and nothing, not even another org's host, connects in.
func appsIngress(ns, owner string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta:   policyTypeMeta,
		ObjectMeta: meta(ns, AppsIngressPolicy, owner),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

// clusterDNS selects the cluster's resolver pods (CoreDNS on EKS keeps kube-dns's label), which a
// tenant's pods reach through the kube-dns Service; a policy sees the pods the Service sends to.
var clusterDNS = networkingv1.NetworkPolicyPeer{
	NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
	PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
}

// namespaceEgress closes a tenant's namespace on the way out as namespacePolicy does on the way in:
// its pods reach each other (a job's workers, its own Services), the cluster's DNS and the
// resolvers the operator names on port 53, and the world outside the cluster on every other
// port, but not instance metadata (the node's role credentials), nor the pod, service and node
// ranges the operator names (another tenant's pods, kube-system, node ports).
func namespaceEgress(ns string, s Settings) *networkingv1.NetworkPolicy {
	return egressPolicy(ns, NamespaceEgressPolicy, s.Owner,
		networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}},
		networkingv1.NetworkPolicyEgressRule{To: append([]networkingv1.NetworkPolicyPeer{clusterDNS}, resolvers(s)...), Ports: ports(dnsPort, dnsPort)},
		outside(s))
}

// resolvers are the DNS servers the operator names (Settings.Resolvers), each as a peer of its own.
func resolvers(s Settings) []networkingv1.NetworkPolicyPeer {
	var out []networkingv1.NetworkPolicyPeer
	for _, a := range s.Resolvers {
		out = append(out, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: netip.PrefixFrom(a, a.BitLen()).String()}})
	}
	return out
}

// egressPolicy is our egress NetworkPolicy name in ns, over every pod there, letting out what
// rules let out and nothing else.
func egressPolicy(ns, name, owner string, rules ...networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta:   policyTypeMeta,
		ObjectMeta: meta(ns, name, owner),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress:      rules,
		},
	}
}

// outside is the world outside the cluster: every address but the pod, service and node ranges
// given and instance metadata, on every port but DNS's (a pod that could query any server on 53
// could tunnel through it). IPv6 is let out only when some range given is IPv6, so a cluster's
// IPv6 addresses are never open because nobody named them.
func outside(s Settings) networkingv1.NetworkPolicyEgressRule {
	given := slices.Concat(s.Ranges.Pods, s.Ranges.Services, s.Ranges.Nodes)
	closed := slices.Concat(given, metadataRanges)
	worlds := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}
	if slices.ContainsFunc(given, func(p netip.Prefix) bool { return p.Addr().Is6() }) {
		worlds = append(worlds, netip.MustParsePrefix("::/0"))
	}
	var to []networkingv1.NetworkPolicyPeer
	for _, world := range worlds {
		to = append(to, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: world.String(), Except: within(world, closed)}})
	}
	return networkingv1.NetworkPolicyEgressRule{To: to, Ports: slices.Concat(ports(1, dnsPort-1), ports(dnsPort+1, 65535))}
}

// appsEgress lets hosts reach the world outside the cluster and nothing inside it (outside), and
// DNS only at the resolvers.
func appsEgress(ns string, s Settings) *networkingv1.NetworkPolicy {
	var rules []networkingv1.NetworkPolicyEgressRule
	if dns := resolvers(s); len(dns) > 0 {
		rules = append(rules, networkingv1.NetworkPolicyEgressRule{To: dns, Ports: ports(dnsPort, dnsPort)})
	}
	return egressPolicy(ns, AppsEgressPolicy, s.Owner, append(rules, outside(s))...)
}

// within is the ranges of closed inside world, masked, without repeats, sorted: an ipBlock's
// exceptions must lie inside its CIDR.
func within(world netip.Prefix, closed []netip.Prefix) []string {
	var out []string
	for _, p := range closed {
		p = p.Masked()
		if p.Addr().Is4() == world.Addr().Is4() && !slices.Contains(out, p.String()) {
			out = append(out, p.String())
		}
	}
	slices.Sort(out)
	return out
}

// ports are the ports from first to last, over UDP and TCP.
func ports(first, last int32) []networkingv1.NetworkPolicyPort {
	var out []networkingv1.NetworkPolicyPort
	for _, proto := range []corev1.Protocol{corev1.ProtocolUDP, corev1.ProtocolTCP} {
		p := networkingv1.NetworkPolicyPort{Protocol: ptr.To(proto), Port: ptr.To(intstr.FromInt32(first))}
		if last != first {
			p.EndPort = ptr.To(last)
		}
		out = append(out, p)
	}
	return out
}
