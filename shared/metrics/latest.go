package metrics

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Latest is one series' newest value: a metric under one set of its dimensions' values.
type Latest struct {
	Metric     Metric
	Dimensions map[string]string
	Value      float64
	At         time.Time
	// Samples and Sum are over every value of the series among the points: for a count (a request,
	// a dispatch), the Sum statistic a dashboard shows over the time they cover.
	Samples int
	Sum     float64
}

// Newest answers each series' latest value among points, as an operator checks what an alarm
// would see: the metrics in All's order, each metric's series by their dimensions' values in the
// metric's order. The latest of a point with several values is its last; of points recorded at
// the same millisecond, the one read last. Points are read, not written, here: nothing is touched.
func Newest(points []Point) []Latest {
	index := map[string]int{}
	var out []Latest
	for _, p := range points {
		if len(p.Values) == 0 {
			continue
		}
		l := Latest{Metric: p.Metric, Dimensions: p.Dimensions, Value: p.Values[len(p.Values)-1], At: p.At}
		key := seriesKey(p.Metric, p.Dimensions)
		i, seen := index[key]
		switch {
		case !seen:
			i = len(out)
			index[key] = i
			out = append(out, l)
		case !p.At.Before(out[i].At):
			l.Samples, l.Sum = out[i].Samples, out[i].Sum
			out[i] = l
		}
		for _, v := range p.Values {
			out[i].Samples++
			out[i].Sum += v
		}
	}
	order := map[string]int{}
	for i, m := range All {
		order[m.Name] = i
	}
	slices.SortFunc(out, func(a, b Latest) int {
		if c := cmp.Compare(order[a.Metric.Name], order[b.Metric.Name]); c != 0 {
			return c
		}
		for _, d := range a.Metric.Dimensions {
			if c := cmp.Compare(a.Dimensions[d], b.Dimensions[d]); c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

// seriesKey names m's series under dims: its name and its dimensions' values in its order.
func seriesKey(m Metric, dims map[string]string) string {
	parts := []string{m.Name}
	for _, d := range m.Dimensions {
		parts = append(parts, dims[d])
	}
	return strings.Join(parts, "\x00")
}
