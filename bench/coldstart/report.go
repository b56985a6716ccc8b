package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"
)

// stats are one function's figures, the ratio taken against hello's median.
type stats struct {
	name        string
	size        int64
	median, p90 time.Duration
	over        time.Duration
	ratio       float64
	// init and event are the medians of the emulator's own account of the init and the first
	// event; zero when it gave none.
	init, event time.Duration
}

func summarize(all []*target) []stats {
	var out []stats
	for _, t := range all {
		pick := func(f func(start) time.Duration) []time.Duration {
			ds := make([]time.Duration, len(t.starts))
			for i, s := range t.starts {
				ds[i] = f(s)
			}
			slices.Sort(ds)
			return ds
		}
		total := pick(func(s start) time.Duration { return s.total })
		out = append(out, stats{
			name: t.name, size: t.size, median: median(total), p90: nearestRank(total, 0.9),
			init:  median(pick(func(s start) time.Duration { return s.init })),
			event: median(pick(func(s start) time.Duration { return s.event })),
		})
	}
	floor := out[0].median // hello comes first in targets
	for i := range out {
		out[i].over = out[i].median - floor
		out[i].ratio = float64(out[i].median) / float64(floor)
	}
	return out
}

func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// nearestRank is the p-th percentile by the nearest-rank method: of 10 runs, p90 is the 9th fastest.
func nearestRank(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(float64(len(sorted))*p)) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// part is one of the emulator's figures, or a dash where its log gave none.
func part(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return ms(d)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func verdict(s stats) string {
	switch {
	case s.name == "hello":
		return "floor"
	case s.ratio <= goalRatio:
		return "ok"
	default:
		return "OVER GOAL"
	}
}

// report prints the figures as an aligned table, then as a markdown table for BENCHMARKS.md.
func report(w io.Writer, all []*target, runs int) {
	rows := summarize(all)
	fmt.Fprintf(w, "\nLambda cold start under aws-lambda-rie: %d runs each, %s, %d cores, load average %s, %s; goal: median ≤ %.0f× hello\n\n",
		runs, hostArch, runtime.NumCPU(), loadAverage(), runtime.Version(), goalRatio)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "function\tbinary\tmedian\tp90\tover hello\t× hello\tinit\tfirst event\t\t")
	for _, s := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.1f ms\t%.2f×\t%s\t%s\t%s\t\n", s.name, mib(s.size), ms(s.median), ms(s.p90),
			float64(s.over)/float64(time.Millisecond), s.ratio, part(s.init), part(s.event), verdict(s))
	}
	tw.Flush()

	fmt.Fprintln(w, "\n| Function | Binary | Cold start, median | p90 | Over hello | × hello (goal ≤ 2×) | Init | First event |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range rows {
		name, over := s.name, fmt.Sprintf("%+.1f ms", float64(s.over)/float64(time.Millisecond))
		if name == "hello" {
			name, over = "hello (floor)", "—"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f× | %s | %s |\n", name, mib(s.size), ms(s.median), ms(s.p90), over, s.ratio, part(s.init), part(s.event))
	}
}
