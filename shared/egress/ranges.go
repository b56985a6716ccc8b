// Package egress provides the HTTP client webhook deliveries go out through: it refuses, at dial
// time and on the address actually dialled, every loopback, private, link-local, metadata and other
// non-public destination, follows no redirects, ignores proxy settings and bounds each request's
// time and the response it reads.
package egress

import (
	"net/netip"
)

// blockedRange is a prefix no delivery may reach, and why.
type blockedRange struct {
	prefix netip.Prefix
	reason string
}

func mustRanges(pairs ...string) []blockedRange {
	out := make([]blockedRange, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, blockedRange{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// blockedV4 is the IPv4 special-purpose registry (RFC 6890 and its updates) less the ranges that
// are globally reachable.
var blockedV4 = mustRanges(
	"0.0.0.0/8", "unspecified (this network)",
	"10.0.0.0/8", "private (RFC 1918)",
	"100.64.0.0/10", "carrier-grade NAT (RFC 6598)",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local, cloud metadata included",
	"172.16.0.0/12", "private (RFC 1918)",
	"192.0.0.0/24", "IETF protocol assignments",
	"192.0.2.0/24", "documentation (TEST-NET-1)",
	"192.88.99.0/24", "6to4 relay anycast",
	"192.168.0.0/16", "private (RFC 1918)",
	"198.18.0.0/15", "benchmarking",
	"198.51.100.0/24", "documentation (TEST-NET-2)",
	"203.0.113.0/24", "documentation (TEST-NET-3)",
	"224.0.0.0/4", "multicast",
	"240.0.0.0/4", "reserved (broadcast included)",
)

// blockedV6 are the IPv6 ranges refused outright. Ranges that embed an IPv4 address (mapped,
// NAT64, 6to4) are unwrapped first and judged by that address instead.
var blockedV6 = mustRanges(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"::/96", "IPv4-compatible (deprecated)",
	"64:ff9b:1::/48", "local-use NAT64",
	"100::/64", "discard-only",
	"2001::/32", "Teredo",
	"2001:2::/48", "benchmarking",
	"2001:10::/28", "ORCHID (deprecated)",
	"2001:20::/28", "ORCHIDv2",
	"2001:db8::/32", "documentation",
	"fc00::/7", "unique local (private)",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local (deprecated)",
	"ff00::/8", "multicast",
)

// Prefixes whose addresses carry an IPv4 address: a NAT64 or 6to4 gateway would forward to it.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	// globalV6 is the only IPv6 unicast space the IANA allocates for global use.
	globalV6 = netip.MustParsePrefix("2000::/3")
)

// Refusal says why an address may not be dialled; empty means it may.
func Refusal(ip netip.Addr) string {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		if r := Refusal(ip.Unmap()); r != "" {
			return "IPv4-mapped " + r
		}
		return ""
	}
	if ip.Is4() {
		return lookup(blockedV4, ip)
	}
	if !ip.Is6() {
		return "not an IP address"
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		if r := Refusal(netip.AddrFrom4([4]byte(b[12:16]))); r != "" {
			return "NAT64 of " + r
		}
		return ""
	case sixToFour.Contains(ip):
		if r := Refusal(netip.AddrFrom4([4]byte(b[2:6]))); r != "" {
			return "6to4 of " + r
		}
		return ""
	}
	if r := lookup(blockedV6, ip); r != "" {
		return r
	}
	if !globalV6.Contains(ip) {
		return "outside global unicast (2000::/3)"
	}
	return ""
}

func lookup(ranges []blockedRange, ip netip.Addr) string {
	for _, r := range ranges {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	return ""
}
