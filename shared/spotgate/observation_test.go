package spotgate_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/spotgate"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func pt(zone string, price float64, age time.Duration) spotgate.Point {
	return spotgate.Point{Zone: zone, InstanceType: "g5.xlarge", Price: price, At: now.Add(-age)}
}

func known(price float64, zone string) spotgate.Observation {
	return spotgate.Observation{InstanceType: "g5.xlarge", Price: price, Zone: zone, CheckedAt: now, Known: true}
}

var unknown = spotgate.Observation{InstanceType: "g5.xlarge", CheckedAt: now}

func TestLowest(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name    string
		history []spotgate.Point
		want    spotgate.Observation
	}{
		{"no history", nil, unknown},
		{"one zone", []spotgate.Point{pt("us-east-1a", 0.42, time.Minute)}, known(0.42, "us-east-1a")},
		{"the cheapest of several zones", []spotgate.Point{
			pt("us-east-1a", 0.50, time.Minute), pt("us-east-1b", 0.40, time.Hour), pt("us-east-1c", 0.45, time.Second)},
			known(0.40, "us-east-1b")},
		{"a zone's newest point counts, not its cheapest", []spotgate.Point{
			pt("us-east-1a", 0.10, time.Hour), pt("us-east-1a", 0.60, time.Minute), pt("us-east-1b", 0.50, 2*time.Hour)},
			known(0.50, "us-east-1b")},
		{"a price unchanged for weeks is still current", []spotgate.Point{pt("us-east-1a", 0.30, 40*day), pt("us-east-1b", 0.35, time.Minute)},
			known(0.30, "us-east-1a")},
		{"a point at now is in effect", []spotgate.Point{pt("us-east-1a", 0.30, 0)}, known(0.30, "us-east-1a")},
		{"a point after now is not yet in effect", []spotgate.Point{pt("us-east-1a", 0.10, -time.Second), pt("us-east-1a", 0.50, time.Hour)},
			known(0.50, "us-east-1a")},
		{"a zone with only future points has no price", []spotgate.Point{pt("us-east-1a", 0.10, -time.Minute)}, unknown},
		{"ties go to the zone that sorts first", []spotgate.Point{
			pt("us-east-1c", 0.40, time.Minute), pt("us-east-1a", 0.40, time.Hour), pt("us-east-1b", 0.40, time.Second)},
			known(0.40, "us-east-1a")},
		{"other instance types are passed over", []spotgate.Point{
			{Zone: "us-east-1a", InstanceType: "m5.large", Price: 0.03, At: now}, pt("us-east-1b", 0.40, time.Minute)},
			known(0.40, "us-east-1b")},
		{"an unreadable current price leaves its zone without one", []spotgate.Point{
			pt("us-east-1a", 0.10, time.Hour), pt("us-east-1a", math.NaN(), time.Minute), pt("us-east-1b", 0.40, time.Minute)},
			known(0.40, "us-east-1b")},
		{"negative and infinite prices are not prices", []spotgate.Point{
			pt("us-east-1a", -1, time.Minute), pt("us-east-1b", math.Inf(1), time.Minute), pt("us-east-1c", math.Inf(-1), time.Minute)},
			unknown},
		{"two points of a zone at one time count as the higher", []spotgate.Point{
			pt("us-east-1a", 0.20, time.Minute), pt("us-east-1a", 0.60, time.Minute), pt("us-east-1b", 0.50, time.Minute)},
			known(0.50, "us-east-1b")},
		{"a free instance is a price", []spotgate.Point{pt("us-east-1a", 0, time.Minute)}, known(0, "us-east-1a")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, spotgate.Lowest("g5.xlarge", tt.history, now)); diff != "" {
				t.Errorf("Lowest(%s) (-want +got):\n%s", tt.name, diff)
			}
			// Reversed, the same history says the same.
			rev := make([]spotgate.Point, len(tt.history))
			for i, p := range tt.history {
				rev[len(rev)-1-i] = p
			}
			if diff := cmp.Diff(tt.want, spotgate.Lowest("g5.xlarge", rev, now)); diff != "" {
				t.Errorf("Lowest(%s, reversed) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestAllows(t *testing.T) {
	tests := []struct {
		o    spotgate.Observation
		cap  float64
		want bool
	}{
		{known(0.40, "a"), 0.40, true},
		{known(0.40, "a"), 0.41, true},
		{known(0.40, "a"), 0.399999, false},
		{unknown, 1000, false},
		{known(0.40, "a"), math.NaN(), false},
	}
	for _, tt := range tests {
		if got := tt.o.Allows(tt.cap); got != tt.want {
			t.Errorf("Observation{Price: %v, Known: %v}.Allows(%v) = %v, want %v", tt.o.Price, tt.o.Known, tt.cap, got, tt.want)
		}
	}
}

func TestByZone(t *testing.T) {
	history := []spotgate.Point{
		pt("a", 0.5, 2*time.Hour), pt("a", 0.4, time.Hour), pt("b", 0.3, time.Hour),
		pt("b", 0.1, -time.Hour), // not yet in effect
		pt("c", math.NaN(), time.Hour),
		{Zone: "a", InstanceType: "m5.large", Price: 0.05, At: now.Add(-time.Hour)},
	}
	got := spotgate.ByZone("g5.xlarge", history, now)
	if diff := cmp.Diff(map[string]float64{"a": 0.4, "b": 0.3}, got); diff != "" {
		t.Errorf("ByZone, c's price unusable (-want +got):\n%s", diff)
	}
}
