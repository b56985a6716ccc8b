// Package costing estimates what a finished job cost: for each node its pods ran on, the node's
// whole price per hour times the time this job's pods were on it. It is pure: the beat hands it
// the pods' runs, their nodes and the prices it read (shared/reconcile), and keeps the answer on
// the job's record.
//
// The estimate charges a node's whole price, not a share of it by the pods' requests: Tidegate's
// jobs are mostly GPU jobs that take a node to themselves (Karpenter brings one up for them), and
// a share by requests would need the node's allocatable and every other pod's requests over time,
// which the beat does not see. On a node shared with other workloads the estimate is an upper
// bound on the job's part.
package costing

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Currency is what every price and estimate is in.
const Currency = "USD"

// Capacity types, as Karpenter's karpenter.sh/capacity-type label spells them.
const (
	Spot     = "spot"
	OnDemand = "on-demand"
)

// Where a node's price came from.
const (
	FromSpotHistory   = "spot_price_history"
	FromOnDemandTable = "on_demand_table"
)

// Run is one pod's time on its node: from its start to the end of its last container (or the
// job's end, for a pod still running when the job ended).
type Run struct {
	Pod        string
	Node       string
	Start, End time.Time
}

// Node is what a node's labels say of it; a node that could not be read is missing from the map
// Estimate takes.
type Node struct {
	InstanceType string
	CapacityType string
	Zone         string
}

// Zoned names one instance type in one zone.
type Zoned struct{ InstanceType, Zone string }

// Prices are the prices per hour an estimate may use: each spot (instance type, zone) observed
// when the job ended, and the on-demand table of the configuration (TIDEGATE_ON_DEMAND_PRICES).
type Prices struct {
	Spot     map[Zoned]float64
	OnDemand map[string]float64
}

// Estimate is the cost of the runs, node by node in the order the nodes were first used. A
// node's seconds are the union of its runs: two pods of the job on one node at once count that
// time once, since the node is paid for once. A node whose type, capacity type or price is not
// known counts nothing and makes the estimate incomplete, with a reason naming it. A run of no
// time (a pod that ended in the second it started: the API keeps whole seconds) still names its
// node, at no cost.
func Estimate(runs []Run, nodes map[string]Node, p Prices) jobs.Cost {
	out := jobs.Cost{Currency: Currency, Nodes: []jobs.NodeCost{}, Complete: true}
	byNode := map[string][]Run{}
	var order []string
	for _, r := range runs {
		if r.Node == "" {
			continue // never scheduled
		}
		if _, seen := byNode[r.Node]; !seen {
			order = append(order, r.Node)
		}
		byNode[r.Node] = append(byNode[r.Node], r)
	}
	for _, name := range order {
		nc, reason := nodeCost(name, nodes, byNode[name], p)
		out.Nodes = append(out.Nodes, nc)
		out.Total += nc.Cost
		if reason != "" {
			out.Complete = false
			out.Reasons = append(out.Reasons, reason)
		}
	}
	out.Total = Round(out.Total)
	return out
}

// nodeCost is one node's part, or why its price is not known.
func nodeCost(name string, nodes map[string]Node, runs []Run, p Prices) (jobs.NodeCost, string) {
	nc := jobs.NodeCost{Name: name, Seconds: Seconds(runs)}
	n, ok := nodes[name]
	if !ok {
		return nc, fmt.Sprintf("node %s could not be read, so its instance type is not known", name)
	}
	nc.InstanceType, nc.CapacityType, nc.Zone = n.InstanceType, n.CapacityType, n.Zone
	var price float64
	switch {
	case n.InstanceType == "":
		return nc, fmt.Sprintf("node %s has no node.kubernetes.io/instance-type label", name)
	case n.CapacityType == Spot:
		if price, ok = p.Spot[Zoned{n.InstanceType, n.Zone}]; !ok {
			return nc, fmt.Sprintf("no spot price of %s in zone %q was known when the job ended (node %s)", n.InstanceType, n.Zone, name)
		}
		nc.PriceSource = FromSpotHistory
	case n.CapacityType == OnDemand:
		if price, ok = p.OnDemand[n.InstanceType]; !ok {
			return nc, fmt.Sprintf("%s has no on-demand price in TIDEGATE_ON_DEMAND_PRICES (node %s)", n.InstanceType, name)
		}
		nc.PriceSource = FromOnDemandTable
	default:
		return nc, fmt.Sprintf("node %s has no capacity type label (karpenter.sh/capacity-type or eks.amazonaws.com/capacityType)", name)
	}
	nc.PricePerHour = &price
	nc.Cost = price * nc.Seconds / 3600
	return nc, ""
}

// Seconds is the time covered by at least one of runs, in seconds: overlapping runs count once.
func Seconds(runs []Run) float64 {
	runs = slices.Clone(runs)
	slices.SortFunc(runs, func(a, b Run) int { return a.Start.Compare(b.Start) })
	var total time.Duration
	var from, to time.Time
	for i, r := range runs {
		if r.End.Before(r.Start) {
			r.End = r.Start // clocks disagreeing: no time, rather than less than none
		}
		switch {
		case i == 0:
			from, to = r.Start, r.End
		case r.Start.After(to):
			total += to.Sub(from)
			from, to = r.Start, r.End
		case r.End.After(to):
			to = r.End
		}
	}
	if len(runs) > 0 {
		total += to.Sub(from)
	}
	return total.Seconds()
}

// Round rounds a total to a hundredth of a cent, so that sums read cleanly.
func Round(v float64) float64 { return math.Round(v*10000) / 10000 }

// ParseOnDemand reads an on-demand price table, "TYPE=PRICE,…" in dollars per hour (say
// "g5.xlarge=1.006,m5.large=0.096"); empty is an empty table.
func ParseOnDemand(s string) (map[string]float64, error) {
	out := map[string]float64{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		t, v, ok := strings.Cut(item, "=")
		t = strings.TrimSpace(t)
		price, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || t == "" || err != nil || price < 0 || math.IsInf(price, 0) || math.IsNaN(price) {
			return nil, fmt.Errorf("%q is not TYPE=PRICE with a price per hour in dollars, such as g5.xlarge=1.006", item)
		}
		if _, dup := out[t]; dup {
			return nil, fmt.Errorf("%s is priced twice", t)
		}
		out[t] = price
	}
	return out, nil
}

// Types lists the spot instance types of nodes, once each, sorted: what the beat asks prices of.
func Types(nodes map[string]Node) []string {
	var out []string
	for _, n := range nodes {
		if n.CapacityType == Spot && n.InstanceType != "" && !slices.Contains(out, n.InstanceType) {
			out = append(out, n.InstanceType)
		}
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}
