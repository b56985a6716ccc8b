// Package spotgate says whether a job's spot price cap is met: the lowest current price across a
// region's zones, from EC2's price history (which shared/ec2spot reads).
// Lowest and Allows decide and touch nothing.
package spotgate

import (
	"cmp"
	"math"
	"time"
)

// Point is one row of EC2's spot price history: the price of an instance type in one zone from
// At until the zone's next point.
type Point struct {
	Zone         string
	InstanceType string
	Price        float64 // NaN when EC2's answer could not be read
	At           time.Time
}

// Observation is the spot gate's view of one instance type in one region at CheckedAt: the lowest
// current price across the region's zones, and the zone that has it. Known is false when no zone
// had a price that could be used; the gate then holds capped jobs (fail closed).
type Observation struct {
	InstanceType string
	Price        float64
	Zone         string
	CheckedAt    time.Time
	Known        bool
}

// Allows says whether a job capped at maxPrice may run at the observed price: only when the
// price is known and at or below the cap.
func (o Observation) Allows(maxPrice float64) bool {
	return o.Known && o.Price <= maxPrice
}

// Lowest is the lowest current price of instanceType across the zones in history, as of now.
//
// A zone's current price is its newest point at or before now, however old: EC2 writes a point
// only when a price changes, and when asked from a StartTime it answers the point in effect then,
// so a zone whose price has not moved for days answers a days-old point, and that is its price.
// No age makes a point stale; EC2 itself bounds what it answers (90 days of history), and a zone
// that stops offering the type stops answering. What can be stale is the observation, which says
// when it was made in CheckedAt; ec2spot.Reader serves none older than its TTL.
//
// A point after now is not yet in effect and is passed over. A zone whose current point has no
// usable price (unreadable, negative, infinite) counts as a zone without a price, rather than
// falling back on its older point, which is no longer current. Two points of one zone at the same
// time count as the higher, the one that holds a job if either would. Points of other instance
// types are passed over. Ties between zones go to the zone that sorts first, so the observation
// never depends on the order of history.
func Lowest(instanceType string, history []Point, now time.Time) Observation {
	o := Observation{InstanceType: instanceType, CheckedAt: now}
	for zone, p := range current(instanceType, history, now) {
		if !usable(p.Price) {
			continue
		}
		if !o.Known || p.Price < o.Price || (p.Price == o.Price && zone < o.Zone) {
			o.Price, o.Zone, o.Known = p.Price, zone, true
		}
	}
	return o
}

// ByZone is each zone's current price of instanceType in history, as of now, as Lowest reads
// them; a zone whose current point is unusable is left out.
func ByZone(instanceType string, history []Point, now time.Time) map[string]float64 {
	out := map[string]float64{}
	for zone, p := range current(instanceType, history, now) {
		if usable(p.Price) {
			out[zone] = p.Price
		}
	}
	return out
}

// current is each zone's current point of instanceType in history at now.
func current(instanceType string, history []Point, now time.Time) map[string]Point {
	cur := map[string]Point{}
	for _, p := range history {
		if p.InstanceType != instanceType || p.At.After(now) {
			continue
		}
		if c, ok := cur[p.Zone]; !ok || newer(p, c) {
			cur[p.Zone] = p
		}
	}
	return cur
}

// newer says whether p replaces cur as its zone's current point: it is later, or as late and
// worse for the job (unusable, or higher).
func newer(p, cur Point) bool {
	if c := p.At.Compare(cur.At); c != 0 {
		return c > 0
	}
	switch {
	case !usable(cur.Price):
		return false
	case !usable(p.Price):
		return true
	}
	return cmp.Compare(p.Price, cur.Price) > 0
}

func usable(price float64) bool {
	return price >= 0 && !math.IsInf(price, 0) // false for NaN too
}
