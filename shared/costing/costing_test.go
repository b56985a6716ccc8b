package costing

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func run(pod, node string, from, to time.Duration) Run {
	return Run{Pod: pod, Node: node, Start: t0.Add(from), End: t0.Add(to)}
}

var prices = Prices{
	Spot:     map[Zoned]float64{{"g5.xlarge", "us-east-1a"}: 0.36, {"g5.xlarge", "us-east-1b"}: 0.5},
	OnDemand: map[string]float64{"g5.xlarge": 1.006, "m5.large": 0.096},
}

func TestSpotUsesTheZonesPrice(t *testing.T) {
	c := Estimate([]Run{run("p", "n1", 0, time.Hour)}, map[string]Node{"n1": {"g5.xlarge", Spot, "us-east-1b"}}, prices)
	if !c.Complete || c.Total != 0.5 || len(c.Nodes) != 1 {
		t.Fatalf("estimate = %+v, want complete, total 0.5 (us-east-1b's price, not the lowest zone's)", c)
	}
	n := c.Nodes[0]
	if n.PriceSource != FromSpotHistory || *n.PricePerHour != 0.5 || n.Seconds != 3600 || c.Currency != "USD" {
		t.Errorf("node = %+v", n)
	}
}

func TestOnDemandUsesTheTable(t *testing.T) {
	c := Estimate([]Run{run("p", "n1", 0, 30*time.Minute)}, map[string]Node{"n1": {"g5.xlarge", OnDemand, "us-east-1a"}}, prices)
	if !c.Complete || c.Total != 0.503 || c.Nodes[0].PriceSource != FromOnDemandTable {
		t.Fatalf("estimate = %+v, want complete, half an hour at 1.006 = 0.503", c)
	}
}

func TestOverlappingPodsOnOneNodeCountOnce(t *testing.T) {
	runs := []Run{
		run("a", "n1", 0, 40*time.Minute),
		run("b", "n1", 20*time.Minute, 60*time.Minute),  // overlaps a by 20 min
		run("c", "n1", 90*time.Minute, 120*time.Minute), // after a gap of 30 min
		run("d", "n2", 0, 60*time.Minute),               // another node: its own hour
	}
	nodes := map[string]Node{"n1": {"m5.large", OnDemand, "z"}, "n2": {"m5.large", OnDemand, "z"}}
	c := Estimate(runs, nodes, prices)
	if got := c.Nodes[0].Seconds; got != 90*60 {
		t.Errorf("n1 seconds = %v, want 5400 (0–60 min and 90–120 min)", got)
	}
	if c.Total != 0.24 || len(c.Nodes) != 2 || c.Nodes[1].Seconds != 3600 {
		t.Errorf("estimate = %+v, want 1.5 h + 1 h at 0.096 = 0.24", c)
	}
}

func TestUnknownPricesMakeItIncomplete(t *testing.T) {
	runs := []Run{
		run("a", "spot-c", 0, time.Hour), run("b", "od-x", 0, time.Hour), run("c", "gone", 0, time.Hour),
		run("d", "bare", 0, time.Hour), run("e", "ok", 0, time.Hour),
	}
	nodes := map[string]Node{
		"spot-c": {"g5.xlarge", Spot, "us-east-1c"}, // no price for this zone
		"od-x":   {"p5.48xlarge", OnDemand, "z"},    // not in the table
		"bare":   {"g5.xlarge", "", "z"},            // no capacity type
		"ok":     {"g5.xlarge", OnDemand, "z"},
	}
	c := Estimate(runs, nodes, prices)
	if c.Complete || c.Total != 1.006 || len(c.Reasons) != 4 {
		t.Fatalf("estimate = %+v, want incomplete, only the known node's 1.006, four reasons", c)
	}
	for i, want := range []string{"us-east-1c", "p5.48xlarge", "gone", "capacity type"} {
		if !strings.Contains(c.Reasons[i], want) {
			t.Errorf("reason %d = %q, want it to name %q", i, c.Reasons[i], want)
		}
	}
	if c.Nodes[0].PricePerHour != nil || c.Nodes[0].Cost != 0 {
		t.Errorf("an unpriced node = %+v, want no price and no cost", c.Nodes[0])
	}
}

func TestRunsOfNoTimeCostNothing(t *testing.T) {
	runs := []Run{{Pod: "unscheduled"}, run("q", "n1", time.Hour, time.Hour), run("skewed", "n1", time.Hour, 0)}
	c := Estimate(runs, map[string]Node{"n1": {"m5.large", OnDemand, "z"}}, prices)
	if !c.Complete || c.Total != 0 || len(c.Nodes) != 1 || c.Nodes[0].Seconds != 0 || *c.Nodes[0].PricePerHour != 0.096 {
		t.Errorf("estimate = %+v, want complete, n1 priced but for no time, the unscheduled pod left out", c)
	}
}

func TestParseOnDemand(t *testing.T) {
	got, err := ParseOnDemand(" g5.xlarge=1.006, m5.large = 0.096 ,")
	if err != nil || len(got) != 2 || got["g5.xlarge"] != 1.006 || got["m5.large"] != 0.096 {
		t.Fatalf("ParseOnDemand = %v, %v", got, err)
	}
	for _, bad := range []string{"g5.xlarge", "g5.xlarge=", "=1", "g5.xlarge=-1", "g5.xlarge=NaN", "a=1,a=2", "a=Inf"} {
		if _, err := ParseOnDemand(bad); err == nil {
			t.Errorf("ParseOnDemand(%q) accepted it", bad)
		}
	}
}

func TestTypes(t *testing.T) {
	got := Types(map[string]Node{"a": {"g5.xlarge", Spot, "z"}, "b": {"g5.xlarge", Spot, "y"}, "c": {"m5.large", OnDemand, "z"}, "d": {"c5.large", Spot, "z"}})
	if strings.Join(got, ",") != "c5.large,g5.xlarge" {
		t.Errorf("Types = %v", got)
	}
}
