package isolation

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/tidegate/tidegate/shared/tenancy"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what Wanted gives")

func prefixes(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// settings are an EKS cluster's: pods on the VPC's addresses, the default service range.
func settings() Settings {
	return Settings{
		Owner:         "tidegate-ControlTable-1Q2W3E4R5T6Y",
		AppsNamespace: "tidegate-apps",
		HostingRegion: "us-east-1",
		Ranges: Ranges{
			Pods:     prefixes("10.0.0.0/16", "100.64.0.0/10"),
			Services: prefixes("10.100.0.0/16"),
			Nodes:    prefixes("10.0.0.0/16"),
		},
		Resolvers: []netip.Addr{netip.MustParseAddr("1.1.1.1"), netip.MustParseAddr("8.8.8.8")},
		Containers: ContainerDefaults{
			CPU: resource.MustParse("1"), Memory: resource.MustParse("1Gi"),
			CPURequest: resource.MustParse("100m"), MemoryRequest: resource.MustParse("256Mi"),
		},
		PodsPerJob: 10,
		PodCaps:    PodCaps{CPU: quantity("4"), Memory: quantity("16Gi"), GPUs: quantity("1")},
	}
}

// one is a cluster of one region, as in AWS.
func one(region string, jobs int, gpus int64) Cluster {
	return Cluster{Regions: []Region{{Name: region, Jobs: jobs, GPUs: gpus}}}
}

func twoTenants() []tenancy.Tenant {
	return []tenancy.Tenant{
		{Name: "ml", Namespaces: []string{"team-a", "shared"}},
		{Name: "web", Namespaces: []string{"team-b", "shared"}},
	}
}

// golden compares got with testdata/name.golden, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run go test -update to write it): %v", path, err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Wanted differs from %s (-golden +got); if the change is meant, run go test ./shared/isolation -update:\n%s", path, diff)
	}
}

func render(t *testing.T, objs []Object) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes()
}

func TestWantedGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		c      Cluster
		s      func(*Settings)
	}{
		// The hosting region: the tenants' namespaces and the apps'.
		{"hosting-region", one("us-east-1", 10, 8), nil},
		// Another region: the tenants' namespaces only; no GPU cap, so the policy's bounds GPUs.
		{"other-region", one("us-west-2", 4, 0), nil},
		// Dev: both regions on one sandbox, which wants their capacities and GPU caps together.
		{"two-regions-one-cluster", Cluster{Regions: []Region{{"us-east-1", 1, 2}, {"us-west-2", 4, 6}}}, nil},
		// An IPv6 cluster: IPv6 is let out beside IPv4, except its ranges; no caps bound the quota
		// beyond pods.
		{"ipv6-no-caps", one("us-east-1", 2, 0), func(s *Settings) {
			s.Ranges = Ranges{Pods: prefixes("2600:1f18:aaaa::/56"), Services: prefixes("fd12:3456::/108"), Nodes: prefixes("10.0.0.0/16")}
			s.Resolvers = []netip.Addr{netip.MustParseAddr("fd12:3456::a")}
			s.PodCaps = PodCaps{}
		}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			s := settings()
			if tc.s != nil {
				tc.s(&s)
			}
			golden(t, tc.golden, render(t, Wanted(tc.c, twoTenants(), s)))
		})
	}
}

// A tenant's record is the tenant's to shape only through `admin tenants put`, which refuses
// these; the beat still never writes into them, whatever a record holds.
func TestWantedHostileNamespaces(t *testing.T) {
	s := settings()
	hostile := []tenancy.Tenant{{Name: "evil", Namespaces: []string{
		"kube-system", "kube-public", "default", "tidegate-apps", "Team_A", "../x", strings.Repeat("a", 64), "",
	}}}
	for _, c := range []Cluster{one("us-east-1", 1, 0), one("us-west-2", 1, 0)} {
		for _, o := range Wanted(c, hostile, s) {
			k := KeyOf(o)
			if k.Namespace != "tidegate-apps" || (k.Name != AppsIngressPolicy && k.Name != AppsEgressPolicy) {
				t.Errorf("Wanted(%s, a tenant holding reserved and malformed namespaces) = %s; want only the apps' own policies", c.Regions[0].Name, k)
			}
		}
	}
}

// A hosting region whose apps' namespace is the cluster's own gets no apps policies there.
func TestWantedReservedAppsNamespace(t *testing.T) {
	s := settings()
	s.AppsNamespace = "kube-system"
	if got := Wanted(one("us-east-1", 1, 0), nil, s); len(got) != 0 {
		t.Errorf("Wanted with apps in kube-system = %d objects, first %s; want none", len(got), KeyOf(got[0]))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Settings)
		want string // part of the error; "" for none
	}{
		{"the defaults of the tests", func(*Settings) {}, ""},
		{"request above limit", func(s *Settings) { s.Containers.CPURequest = resource.MustParse("2") }, "default CPU request 2 is above its default limit 1"},
		{"limit above the cap", func(s *Settings) { s.Containers.Memory = resource.MustParse("32Gi") }, "default memory limit 32Gi is above the policy's cap on a pod, 16Gi"},
		{"zero request", func(s *Settings) { s.Containers.MemoryRequest = resource.Quantity{} }, "must be above zero"},
		{"no pods a job", func(s *Settings) { s.PodsPerJob = 0 }, "pods a job 0 must be from 1 to 10000"},
		{"too many pods a job", func(s *Settings) { s.PodsPerJob = 10_001 }, "must be from 1 to 10000"},
	} {
		s := settings()
		tc.edit(&s)
		err := s.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Validate(%s) = %v; want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Validate(%s) = %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// A cap so large that the namespace's product would overflow leaves that resource unbounded.
func TestQuotaOverflow(t *testing.T) {
	s := settings()
	s.PodCaps.Memory = quantity("8Ei")
	q := quota("team-a", one("us-east-1", 10, 0), s)
	if _, ok := q.Spec.Hard["limits.memory"]; ok {
		t.Errorf("quota with an 8Ei memory cap for 100 pods bounds limits.memory at %s; want it left out", q.Spec.Hard.Memory())
	}
	if got := q.Spec.Hard["limits.cpu"]; got.String() != "400" {
		t.Errorf("quota limits.cpu = %s; want 400 (100 pods at the 4 CPU cap)", got.String())
	}
}

func TestOwnerOf(t *testing.T) {
	for table, want := range map[string]string{
		"tidegate-ControlTable-1Q2W3E4R5T6Y": "tidegate-ControlTable-1Q2W3E4R5T6Y",
		"t.control_1":                        "t.control_1",
		strings.Repeat("a", 64):              "ffe054fe7ae0cb6d",
		"-leading-dash":                      "bb224188a7a9b0c5",
	} {
		if got := OwnerOf(table); got != want {
			t.Errorf("OwnerOf(%q) = %q; want %q", table, got, want)
		}
	}
}
