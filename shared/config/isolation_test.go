package config

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseIsolationDefaults(t *testing.T) {
	c, err := Parse(env(full()))
	if err != nil {
		t.Fatalf("Parse(full) = %v", err)
	}
	s := c.Isolation
	if len(s.PodCIDRs) != 4 || len(s.ServiceCIDRs) != 2 || len(s.NodeCIDRs) != 3 || len(s.Resolvers) != 2 || s.PodsPerJob != DefaultPodsPerJob {
		t.Errorf("Parse(no isolation settings).Isolation = %+v; want the documented defaults", s)
	}
	if s.DefaultCPU != "" {
		t.Errorf("DefaultCPU = %q unset; want \"\" (the beat's wiring defaults it)", s.DefaultCPU)
	}
}

func TestParseIsolation(t *testing.T) {
	m := full()
	m[EnvPodCIDRs] = " 10.0.0.0/16, fd00:1::/64 "
	m[EnvServiceCIDRs] = "172.20.0.0/16"
	m[EnvNodeCIDRs] = "10.0.0.0/16"
	m[EnvAppsResolvers] = "10.0.0.2,::ffff:1.1.1.1"
	m[EnvContainerCPU] = "2"
	m[EnvPodsPerJob] = "4"
	c, err := Parse(env(m))
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	want := IsolationSettings{
		PodCIDRs:     []netip.Prefix{netip.MustParsePrefix("10.0.0.0/16"), netip.MustParsePrefix("fd00:1::/64")},
		ServiceCIDRs: []netip.Prefix{netip.MustParsePrefix("172.20.0.0/16")},
		NodeCIDRs:    []netip.Prefix{netip.MustParsePrefix("10.0.0.0/16")},
		Resolvers:    []netip.Addr{netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("1.1.1.1")},
		DefaultCPU:   "2",
		PodsPerJob:   4,
	}
	if diff := cmp.Diff(want, c.Isolation, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("Parse.Isolation (-want +got):\n%s", diff)
	}
}

func TestParseIsolationProblems(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{EnvPodCIDRs, "10.0.0.0", `"10.0.0.0" is not a CIDR range`},
		{EnvServiceCIDRs, "10.100.0.10/16", "write 10.100.0.0/16"},
		{EnvNodeCIDRs, "0.0.0.0/0", "is every address"},
		{EnvAppsResolvers, "dns.google", `"dns.google" is not an IP address`},
		{EnvAppsResolvers, "0.0.0.0", "is not an IP address"},
		{EnvPodsPerJob, "0", "from 1 to 10000"},
		{EnvPodsPerJob, "many", "from 1 to 10000"},
	} {
		m := full()
		m[tc.name] = tc.value
		_, err := Parse(env(m))
		if err == nil || !strings.Contains(err.Error(), tc.name+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s=%q) = %v; want an error naming the setting and saying %q", tc.name, tc.value, err, tc.want)
		}
	}
}
