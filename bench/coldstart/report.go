package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
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
	// initRatio is init against hello's whole cold start, the goal's measure.
	initRatio float64
	// calls are the first event's requests to the stand-ins, as describeCalls gives them, or
	// each run's where runs differed.
	calls string
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
			calls: callsOf(t.starts),
		})
	}
	floor := out[0].median // hello comes first in targets
	for i := range out {
		out[i].over = out[i].median - floor
		out[i].ratio = float64(out[i].median) / float64(floor)
		out[i].initRatio = float64(out[i].init) / float64(floor)
	}
	return out
}

// callsOf describes the calls of starts: one description when every run made the same, else
// the distinct ones, so a first event whose calls vary from run to run shows it.
func callsOf(starts []start) string {
	var seen []string
	for _, s := range starts {
		if d := describeCalls(s.calls); !slices.Contains(seen, d) {
			seen = append(seen, d)
		}
	}
	return strings.Join(seen, " / or / ")
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
	case s.initRatio <= goalRatio:
		return "ok"
	default:
		return "OVER GOAL"
	}
}

// report prints the figures as an aligned table, then as a markdown table for BENCHMARKS.md.
func report(w io.Writer, all []*target, runs int) {
	rows := summarize(all)
	fmt.Fprintf(w, "\nLambda cold start under aws-lambda-rie: %d runs each, %s, %d cores, load average %s, %s; goal: init ≤ %.0f× hello's whole cold start\n\n",
		runs, hostArch, runtime.NumCPU(), loadAverage(), runtime.Version(), goalRatio)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "function\tbinary\tmedian\tp90\tover hello\t× hello\tinit\tfirst event\tinit ÷ hello\t\t")
	for _, s := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.1f ms\t%.2f×\t%s\t%s\t%.2f×\t%s\t\n", s.name, mib(s.size), ms(s.median), ms(s.p90),
			float64(s.over)/float64(time.Millisecond), s.ratio, part(s.init), part(s.event), s.initRatio, verdict(s))
	}
	tw.Flush()

	fmt.Fprintln(w, "\n| Function | Binary | Cold start, median | p90 | Over hello | × hello | Init | First event | Init ÷ hello (goal ≤ 2×) | First event's calls |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, s := range rows {
		name, over, initRatio := s.name, fmt.Sprintf("%+.1f ms", float64(s.over)/float64(time.Millisecond)), fmt.Sprintf("%.2f×", s.initRatio)
		if name == "hello" {
			name, over = "hello (floor)", "—"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f× | %s | %s | %s | %s |\n", name, mib(s.size), ms(s.median), ms(s.p90), over, s.ratio, part(s.init), part(s.event), initRatio, s.calls)
	}
}
