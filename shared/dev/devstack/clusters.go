package devstack

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// Cluster is one cluster the dev regions run on, as the stack's state names it.
type Cluster struct {
	// Name is the regions' cluster name in TIDEGATE_REGIONS and, with more than one cluster, the
	// cluster's context in the state's Kubeconfig.
	Name       string   `json:"name"`
	Kubeconfig string   `json:"kubeconfig"` // the cluster's own admin kubeconfig
	Regions    []string `json:"regions"`
}

// placement is where the dev regions' jobs run: each region's cluster, and the kubeconfig the
// functions reach every one of them through (TIDEGATE_KUBECONFIG).
type placement struct {
	kubeconfig string
	regions    map[string]sandbox.ClusterState // region → its cluster
}

// place puts the dev regions on clusters. On the sandbox, with opt.Clusters of 2, each region has
// a cluster of its own, sb's first and second, reached through sb.RegionsKubeconfig's contexts;
// otherwise every region is on sb's first cluster, as it always was. On an operator's cluster
// (opt.Kubeconfig) every region is on it, named by its current context, which is how shared/kube
// reaches it: a context of another name that happened to be the regions' cluster name would be
// used instead.
func place(opt Options, sb sandbox.State) (placement, error) {
	pl := placement{regions: map[string]sandbox.ClusterState{}}
	if opt.Kubeconfig != "" {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: opt.Kubeconfig}
		raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).RawConfig()
		if err != nil {
			return pl, fmt.Errorf("reading --kubeconfig %s: %w", opt.Kubeconfig, err)
		}
		pl.kubeconfig = opt.Kubeconfig
		for _, r := range DevRegions {
			pl.regions[r] = sandbox.ClusterState{Name: cmp.Or(raw.CurrentContext, sandbox.ClusterName(0)), Kubeconfig: opt.Kubeconfig}
		}
		return pl, nil
	}
	want := max(opt.Clusters, 1)
	clusters := sb.KubeClusters()
	if len(clusters) < want {
		return pl, fmt.Errorf("the stand-ins have %d Kubernetes clusters, and --clusters asks for %d", len(clusters), want)
	}
	for i, r := range DevRegions {
		pl.regions[r] = clusters[i%want]
	}
	pl.kubeconfig = clusters[0].Kubeconfig
	if want > 1 {
		pl.kubeconfig = sb.RegionsKubeconfig
	}
	return pl, nil
}

// clusters are the clusters the regions are on, each once, in DevRegions' order, with their
// regions.
func (p placement) clusters() []Cluster {
	var out []Cluster
	for _, r := range DevRegions {
		c := p.regions[r]
		i := slices.IndexFunc(out, func(o Cluster) bool { return o.Name == c.Name })
		if i < 0 {
			out = append(out, Cluster{Name: c.Name, Kubeconfig: c.Kubeconfig})
			i = len(out) - 1
		}
		out[i].Regions = append(out[i].Regions, r)
	}
	return out
}

// regionNames is TIDEGATE_REGIONS as a map: each region's cluster name.
func (p placement) regionNames() map[string]string {
	out := map[string]string{}
	for r, c := range p.regions {
		out[r] = c.Name
	}
	return out
}

// withOwnClusters gives stand-ins shared with other stacks (tests) the clusters opt.Clusters asks
// for beyond theirs, started for this stack alone under opt.Dir: the shared sandbox of `make test`
// stays one cluster, which every other test uses, and only a stack asking for a cluster per region
// pays for a second. The answer's RegionsKubeconfig, in opt.Dir, reaches the shared clusters and
// these; stop ends these, and nothing of the shared stand-ins.
func withOwnClusters(ctx context.Context, opt Options, st sandbox.State, say io.Writer) (sandbox.State, func(), error) {
	have := st.KubeClusters()
	var own []*sandbox.Cluster
	stop := func() {
		for _, c := range slices.Backward(own) {
			c.Stop()
		}
	}
	for i := len(have); i < opt.Clusters; i++ {
		name := sandbox.ClusterName(i)
		fmt.Fprintf(say, "tidegate dev: starting Kubernetes cluster %s beside the shared stand-ins'\n", name)
		c, err := sandbox.StartCluster(ctx, filepath.Join(opt.Dir, name), name, func(m string) { fmt.Fprintf(say, "tidegate dev: %s\n", m) })
		if err != nil {
			stop()
			return st, nil, err
		}
		own = append(own, c)
		have = append(have, c.ClusterState)
	}
	st.Clusters = have
	st.RegionsKubeconfig = filepath.Join(opt.Dir, "regions.kubeconfig")
	if err := sandbox.WriteRegionsKubeconfig(st.RegionsKubeconfig, have); err != nil {
		stop()
		return st, nil, err
	}
	return st, stop, nil
}

// devCluster answers where the stack's regions run (place) and the namespace its apps are hosted
// in, having made in every cluster the dev tenant's namespaces, and that namespace in the hosting
// region's. Stacks sharing stand-ins (tests) each host their apps in a namespace of their own.
func devCluster(ctx context.Context, opt Options, sb sandbox.State) (pl placement, appsNamespace string, err error) {
	if pl, err = place(opt, sb); err != nil {
		return pl, "", err
	}
	appsNamespace = config.DefaultAppsNamespace
	if opt.Prefix != "" {
		appsNamespace = opt.Prefix + "-apps"
	}
	for _, c := range pl.clusters() {
		namespaces := slices.Clone(DevNamespaces)
		if slices.Contains(c.Regions, hostingRegion) {
			namespaces = append(namespaces, appsNamespace)
		}
		for _, ns := range namespaces {
			if err := sandbox.EnsureNamespace(ctx, c.Kubeconfig, ns); err != nil {
				return pl, "", fmt.Errorf("creating namespace %s in cluster %s: %w", ns, c.Name, err)
			}
		}
	}
	return pl, appsNamespace, nil
}

// hostingRegion is the dev region whose cluster hosts the apps: the first, whose cluster is the
// current context of the kubeconfig the stack gives its functions, so the hosted apps' runner
// and registrar, which read that kubeconfig, watch the cluster the apps are on.
var hostingRegion = DevRegions[0]

// clusterLines are the banner's lines naming the clusters: the kubeconfig to use, and with more
// than one cluster each one's regions and own kubeconfig.
func clusterLines(st State) string {
	if len(st.Clusters) < 2 {
		return fmt.Sprintf("  cluster   KUBECONFIG=%s\n", st.Kubeconfig)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  clusters  KUBECONFIG=%s   (a context for each: kubectl --context %s)\n", st.Kubeconfig, st.Clusters[1].Name)
	for _, c := range st.Clusters {
		fmt.Fprintf(&b, "            %-10s %s   (%s)\n", c.Name, c.Kubeconfig, strings.Join(c.Regions, ", "))
	}
	return b.String()
}
