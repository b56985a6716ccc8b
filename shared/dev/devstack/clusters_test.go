package devstack

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// twoClusters is a sandbox's state with two clusters, as `tidegate sandbox --kube --clusters 2`
// writes it.
var twoClusters = sandbox.State{
	Kubeconfig: "/sb/kube/admin.kubeconfig", KubeServer: "https://127.0.0.1:1",
	Clusters: []sandbox.ClusterState{
		{Name: "sandbox", Kubeconfig: "/sb/kube/admin.kubeconfig", Server: "https://127.0.0.1:1"},
		{Name: "sandbox-2", Kubeconfig: "/sb/sandbox-2/kube/admin.kubeconfig", Server: "https://127.0.0.1:2"},
	},
	RegionsKubeconfig: "/sb/regions.kubeconfig",
}

// TestPlaceRegions: with --clusters 2 each dev region is on a cluster of its own, reached through
// the regions' kubeconfig; with 1 (or 0, the zero Options) both are on the first cluster through
// its own kubeconfig, as before there could be two, even when the stand-ins have two; a state
// written before Clusters existed counts as one cluster named sandbox.
func TestPlaceRegions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		clusters  int
		st        sandbox.State
		regions   map[string]string
		config    string
		byCluster []Cluster
	}{
		{"two", 2, twoClusters,
			map[string]string{"us-east-1": "sandbox", "us-west-2": "sandbox-2"}, "/sb/regions.kubeconfig",
			[]Cluster{
				{Name: "sandbox", Kubeconfig: "/sb/kube/admin.kubeconfig", Regions: []string{"us-east-1"}},
				{Name: "sandbox-2", Kubeconfig: "/sb/sandbox-2/kube/admin.kubeconfig", Regions: []string{"us-west-2"}},
			}},
		{"one of two", 1, twoClusters,
			map[string]string{"us-east-1": "sandbox", "us-west-2": "sandbox"}, "/sb/kube/admin.kubeconfig",
			[]Cluster{{Name: "sandbox", Kubeconfig: "/sb/kube/admin.kubeconfig", Regions: []string{"us-east-1", "us-west-2"}}}},
		{"older state", 0, sandbox.State{Kubeconfig: "/old/admin.kubeconfig"},
			map[string]string{"us-east-1": "sandbox", "us-west-2": "sandbox"}, "/old/admin.kubeconfig",
			[]Cluster{{Name: "sandbox", Kubeconfig: "/old/admin.kubeconfig", Regions: []string{"us-east-1", "us-west-2"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := place(Options{Clusters: tc.clusters}, tc.st)
			if err != nil {
				t.Fatalf("place(--clusters %d): %v", tc.clusters, err)
			}
			if diff := cmp.Diff(tc.regions, pl.regionNames()); diff != "" {
				t.Errorf("regions' clusters (-want +got):\n%s", diff)
			}
			if pl.kubeconfig != tc.config {
				t.Errorf("kubeconfig = %s, want %s", pl.kubeconfig, tc.config)
			}
			if diff := cmp.Diff(tc.byCluster, pl.clusters()); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := place(Options{Clusters: 2}, sandbox.State{Kubeconfig: "/old/admin.kubeconfig"}); err == nil {
		t.Errorf("place(--clusters 2) on stand-ins of one cluster = nil error, want one saying how many they have")
	}
}

// TestClustersFlagRefused: --clusters other than 1 or 2, or 2 with --kubeconfig, is refused
// naming the flag.
func TestClustersFlagRefused(t *testing.T) {
	base := Options{Addr: "127.0.0.1:0", Beat: DefaultBeat}
	for _, opt := range []Options{{Clusters: 3}, {Clusters: -1}, {Clusters: 2, Kubeconfig: "/mine"}} {
		o := base
		o.Clusters, o.Kubeconfig = opt.Clusters, opt.Kubeconfig
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--clusters") {
			t.Errorf("Validate(--clusters %d, --kubeconfig %q) = %v, want a refusal naming --clusters", opt.Clusters, opt.Kubeconfig, err)
		}
	}
	for _, n := range []int{0, 1, 2} {
		o := base
		o.Clusters = n
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(--clusters %d) = %v, want nil", n, err)
		}
	}
}

// TestBannerNamesEachCluster: with two clusters the banner names the kubeconfig reaching both and
// each cluster's own, with its region; with one, the one line it always had.
func TestBannerNamesEachCluster(t *testing.T) {
	pl, err := place(Options{Clusters: 2}, twoClusters)
	if err != nil {
		t.Fatal(err)
	}
	got := clusterLines(State{Kubeconfig: pl.kubeconfig, Clusters: pl.clusters()})
	want := "  clusters  KUBECONFIG=/sb/regions.kubeconfig   (a context for each: kubectl --context sandbox-2)\n" +
		"            sandbox    /sb/kube/admin.kubeconfig   (us-east-1)\n" +
		"            sandbox-2  /sb/sandbox-2/kube/admin.kubeconfig   (us-west-2)\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("banner's cluster lines (-want +got):\n%s", diff)
	}
	one := State{Kubeconfig: "/a", Clusters: []Cluster{{Name: "sandbox", Kubeconfig: "/a"}}}
	if got := clusterLines(one); got != "  cluster   KUBECONFIG=/a\n" {
		t.Errorf("banner's cluster line with one cluster = %q", got)
	}
}
