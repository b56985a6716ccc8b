package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// report prints the run's figures and, in the table bench/table reads, each against its goal.
func report(w io.Writer, m measured) {
	p50, p99 := percentile(m.latencies, 50), percentile(m.latencies, 99)
	rate := float64(m.n) / m.took.Seconds()
	fmt.Fprintf(w, "%d jobs of %s at capacity %d, the beat every %s, load %s\n\n", m.n, m.run, m.capacity, m.beat, m.load)
	if m.floor != nil {
		idle := slices.Sorted(slices.Values(m.floor.idle))
		fmt.Fprintf(w, "- the floor, a loop of creates on the sandbox with no Tidegate: %s (%.2f jobs/s), a slot empty %s at the median\n",
			m.floor.took.Round(10*time.Millisecond), float64(m.n)/m.floor.took.Seconds(), percentile(idle, 50).Round(time.Millisecond))
	}
	if m.floor != nil && m.floor.cpu != nil {
		printCPU(w, "the floor", m.floor.cpu, m.n)
	}
	fmt.Fprintf(w, "- first submission to last end recorded: %s (%.2f jobs/s)\n", m.took.Round(10*time.Millisecond), rate)
	if m.cpu != nil {
		printCPU(w, "Tidegate", m.cpu, m.n)
	}
	fmt.Fprintf(w, "- a pod's life as its watch saw it, Running to Succeeded: %s on average\n", m.lifetime.Round(10*time.Millisecond))
	fmt.Fprintf(w, "- pod's end to its record's end: p50 %s, p99 %s, max %s\n",
		p50.Round(10*time.Millisecond), p99.Round(10*time.Millisecond), m.latencies[len(m.latencies)-1].Round(10*time.Millisecond))
	if len(m.rounds) > 0 {
		var sum round
		for _, r := range m.rounds {
			sum.took, sum.reading, sum.claiming, sum.admitted = sum.took+r.took, sum.reading+r.reading, sum.claiming+r.claiming, sum.admitted+r.admitted
		}
		n := time.Duration(len(m.rounds))
		fmt.Fprintf(w, "- dispatch: %d drain rounds, each on average %s (reading %s, claiming %s) for %.1f jobs admitted\n",
			len(m.rounds), (sum.took / n).Round(time.Millisecond), (sum.reading / n).Round(time.Millisecond),
			(sum.claiming / n).Round(time.Millisecond), float64(sum.admitted)/float64(len(m.rounds)))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Figure | Measured | Goal | Ratio |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	fmt.Fprintf(w, "| end to record, p50 | %s | %s | %.2f× |\n", p50.Round(10*time.Millisecond), goalP50, p50.Seconds()/goalP50.Seconds())
	fmt.Fprintf(w, "| end to record, p99 | %s | %s | %.2f× |\n", p99.Round(10*time.Millisecond), goalP99, p99.Seconds()/goalP99.Seconds())
	if m.floor != nil {
		floorRate := float64(m.n) / m.floor.took.Seconds()
		fmt.Fprintf(w, "| jobs a second ÷ the floor's | %.2f | %.2f (%.1f× the floor's %.2f) | %.2f× |\n",
			rate, goalFloor*floorRate, goalFloor, floorRate, rate/floorRate)
	}
	if m.floor != nil && m.floor.cpu != nil && m.cpu != nil {
		ours, floor := clusterCPU(m.cpu), clusterCPU(m.floor.cpu)
		if ours > 0 && floor > 0 {
			fmt.Fprintf(w, "| cluster CPU a job, the floor's ÷ Tidegate's | %s | %s (%.2f× the floor's %s) | %.2f× |\n",
				(ours / time.Duration(m.n)).Round(time.Millisecond), (time.Duration(float64(floor)/goalClusterCPU) / time.Duration(m.n)).Round(time.Millisecond),
				goalClusterCPU, (floor / time.Duration(m.n)).Round(time.Millisecond), floor.Seconds()/ours.Seconds())
		}
	}
	fmt.Fprintf(w, "\nA slot's cycle, step by step (%d drains found the region draining already):\n\n", m.busy)
	fmt.Fprintln(w, "| Step | Mean | p50 | Jobs |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	for _, s := range m.steps {
		sorted := slices.Sorted(slices.Values(s.takes))
		fmt.Fprintf(w, "| %s | %s | %s | %d |\n", s.name, mean(s.takes).Round(time.Millisecond), percentile(sorted, 50).Round(time.Millisecond), len(s.takes))
	}
	idle := slices.Sorted(slices.Values(m.idle))
	fmt.Fprintf(w, "| a slot empty, pod end → next pod Running | %s | %s | %d |\n", mean(idle).Round(time.Millisecond), percentile(idle, 50).Round(time.Millisecond), len(idle))
}

// percentile is the p-th percentile of sorted, the nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
