package devstack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tidegate/tidegate/shared/capacitytype"
	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/flavors"
)

// The dev stack's own flavors of a region, where nothing else gives it any: a spot and an on-demand
// one, as a Karpenter node pool of each would be.
const (
	// A g5.4xlarge's 16 vCPU and 64 GiB.
	devFlavorCPU    = "16"
	devFlavorMemory = "64Gi"
	// The kubelet's default maxPods.
	devFlavorPods = "110"
	// As many as the sandbox's own nodes have; only on-demand capacity has GPUs, so a GPU job runs
	// there and the spot flavor's room is for the rest.
	devFlavorGPUs = "8"
)

// The sandbox's capacity-type label's values on spot and on-demand nodes.
var (
	spotValue, _     = capacitytype.SpotValue(sandbox.CapacityTypeLabel)
	onDemandValue, _ = capacitytype.OnDemandValue(sandbox.CapacityTypeLabel)
)

// regionLabel is the node label each dev flavor selects its own region's nodes by: both regions
// share the one sandbox cluster (unless --clusters 2), and without it a region's pods would take
// the other's nodes.
const regionLabel = "topology.kubernetes.io/region"

// devFlavorLabels are a dev flavor's node labels in region r: its capacity type, r, and the mark
// of the dev flavors' nodes, which keeps its pods off the sandbox's own FakeNodeName and
// OnDemandNodeName (labelled us-east-1 too), so the flavor's node is all the room it has.
func devFlavorLabels(capacityType, r string) map[string]string {
	return map[string]string{sandbox.CapacityTypeLabel: capacityType, regionLabel: r, sandbox.FlavorNodeLabel: devFlavorSet}
}

// devFlavors is the TIDEGATE_FLAVORS the dev stack runs the sandbox with when none is given: a
// spot and an on-demand flavor for each of regions that no map of older names (the regions
// TIDEGATE_REGION_CAPACITY and TIDEGATE_REGION_GPUS give room to), each selecting its own node
// (devFlavorLabels). A region older names keeps the room they give it, as it would in AWS. ""
// when every region is named.
func devFlavors(regions []string, older ...map[string]int) string {
	set := flavors.Set{}
	for _, r := range regions {
		if slices.ContainsFunc(older, func(m map[string]int) bool { _, ok := m[r]; return ok }) {
			continue
		}
		spot := map[string]string{
			string(corev1.ResourceCPU): devFlavorCPU, string(corev1.ResourceMemory): devFlavorMemory, string(corev1.ResourcePods): devFlavorPods,
		}
		onDemand := maps.Clone(spot)
		onDemand[flavors.GPU] = devFlavorGPUs
		set[r] = []flavors.Flavor{
			{Name: "spot", NodeLabels: devFlavorLabels(spotValue, r), Resources: spot},
			{Name: "on-demand", NodeLabels: devFlavorLabels(onDemandValue, r), Resources: onDemand},
		}
	}
	if len(set) == 0 {
		return ""
	}
	b, err := json.Marshal(set)
	if err != nil {
		panic(fmt.Sprintf("devstack: marshalling the dev flavors: %v", err)) // maps of strings always marshal
	}
	return string(b)
}

// flavorNodes are the sandbox nodes for set's flavors: one for each flavor of each of regions that
// set gives flavors (a flavor of set's "*" once for every region it stands for). A region left to
// the fallback gets none: its pods select no labels and run on the sandbox's own nodes, as before.
func flavorNodes(set flavors.Set, regions []string) ([]sandbox.FlavorNode, error) {
	var out []sandbox.FlavorNode
	for _, r := range regions {
		if !set.Configured(r) {
			continue
		}
		for _, f := range set.In(r, 0, 0) {
			res, err := sandbox.FlavorResources(f.Resources)
			if err != nil {
				return nil, fmt.Errorf("flavor %s of %s: %w", f.Name, r, err)
			}
			out = append(out, sandbox.FlavorNode{Region: r, Flavor: f.Name, Labels: f.NodeLabels, Resources: res})
		}
	}
	return out, nil
}

// flavorsSource says where the flavors the stack runs with come from, as its start says.
func flavorsSource(o Options) string {
	switch {
	case o.Flavors != "":
		return "--flavors"
	case o.getenv(config.EnvFlavors) != "":
		return config.EnvFlavors
	case o.Kubeconfig == "":
		return "dev's own"
	}
	return ""
}

// flavorLines are what `tidegate dev` says at start of each region's flavors: their names and
// resources, and where they come from (source, or the region's room in jobs where no flavors are
// given).
func flavorLines(cfg config.Config, regions []string, source string) ([]string, error) {
	set, err := flavors.Parse(cfg.Flavors)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range regions {
		from := source
		if !set.Configured(r) {
			from = fmt.Sprintf("%d jobs as pods", cfg.Capacity(r))
		}
		var fs []string
		for _, f := range set.In(r, cfg.Capacity(r), cfg.GPUCapacity(r)) {
			var res []string
			for _, name := range slices.Sorted(maps.Keys(f.Resources)) {
				res = append(res, name+"="+f.Resources[name])
			}
			fs = append(fs, f.Name+" "+strings.Join(res, ","))
		}
		out = append(out, fmt.Sprintf("%s runs flavors (%s): %s", r, from, strings.Join(fs, "; ")))
	}
	return out, nil
}

// sayFlavors tells the person starting the stack which flavors each region runs with, one line a
// region, as it tells them the other settings it took.
func sayFlavors(opt Options, say io.Writer) error {
	cfg, err := opt.settings()
	if err != nil {
		return err
	}
	lines, err := flavorLines(cfg, DevRegions, flavorsSource(opt))
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(say, "tidegate dev: "+l)
	}
	return nil
}

// devFlavorSet names the sandbox nodes the dev stack keeps for its flavors (FlavorNodeLabel's
// value), and begins their names: tidegate-us-east-1-spot.
const devFlavorSet = "tidegate"

// seedFlavorNodes gives each sandbox cluster pl places regions on a node for each flavor of cfg's
// in those regions (flavorNodes). The stack's own sandbox is its alone, so a node of a flavor no
// longer configured goes; on stand-ins shared with other stacks, whose jobs may run on any of the
// nodes, none does.
func seedFlavorNodes(ctx context.Context, opt Options, cfg config.Config, pl placement) error {
	set, err := flavors.Parse(cfg.Flavors)
	if err != nil {
		return err
	}
	for _, c := range pl.clusters() {
		nodes, err := flavorNodes(set, c.Regions)
		if err != nil {
			return err
		}
		cs, err := sandbox.KubeClient(c.Kubeconfig)
		if err != nil {
			return err
		}
		if err := sandbox.SyncFlavorNodes(ctx, cs, devFlavorSet, nodes, opt.Standins == nil); err != nil {
			return fmt.Errorf("making the flavors' nodes in cluster %s: %w", c.Name, err)
		}
	}
	return nil
}
