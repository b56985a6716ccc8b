// Command clusters measures what one sandbox cluster set (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok: sandbox.StartCluster) costs on this machine, the
// price of `tidegate dev --clusters 2` over one cluster: how long it takes to start, one after the
// other and two at once; the CPU its five processes spend over a quiet minute (utime + stime from
// /proc/PID/stat); and their resident memory (VmRSS from /proc/PID/status).
//
//	go run ./bench/clusters [-n 3] [-quiet 1m] [-settle 20s] [-max-load 2]
//
// Another build or test run on the machine would be counted as the cluster's, in its start times
// above all, so it waits (up to -wait) until the one-minute load average is below -max-load, and
// prints the load averages beside every figure.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

func main() {
	runs := flag.Int("n", 3, "cluster starts to time, one after another, each a fresh cluster")
	quiet := flag.Duration("quiet", time.Minute, "how long an idle cluster's CPU is counted over")
	settle := flag.Duration("settle", 20*time.Second, "how long a started cluster is left before its idle CPU is counted: the controllers' first syncs are its start's, not its idling's")
	maxLoad := flag.Float64("max-load", 2, "the one-minute load average below which figures are taken (the machine has 2 cores)")
	wait := flag.Duration("wait", 10*time.Minute, "how long to wait for the load to fall below -max-load before measuring anyway, saying so")
	flag.Parse()
	if err := run(*runs, *quiet, *settle, *maxLoad, *wait); err != nil {
		fmt.Fprintf(os.Stderr, "clusters: %v\n", err)
		os.Exit(1)
	}
}

func run(runs int, quiet, settle time.Duration, maxLoad float64, wait time.Duration) error {
	if runs < 1 {
		return fmt.Errorf("-n %d: time at least one start", runs)
	}
	work, err := os.MkdirTemp("", "bench-clusters-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ctx := context.Background()
	fmt.Printf("bench/clusters on %d CPUs, %s\n", runtime.NumCPU(), time.Now().UTC().Format("2006-01-02 15:04 MST"))

	for i := range runs {
		quietMachine(maxLoad, wait)
		took, err := timeStarts(ctx, work, fmt.Sprintf("one-%d", i), 1, false)
		if err != nil {
			return err
		}
		fmt.Printf("start, one cluster:           %5.1f s   (load %s)\n", took.Seconds(), loadavg())
	}
	for _, together := range []bool{false, true} {
		quietMachine(maxLoad, wait)
		took, err := timeStarts(ctx, work, fmt.Sprintf("two-%v", together), 2, together)
		if err != nil {
			return err
		}
		how := "one after the other"
		if together {
			how = "both at once       "
		}
		fmt.Printf("start, two clusters %s: %5.1f s   (load %s)\n", how, took.Seconds(), loadavg())
	}

	quietMachine(maxLoad, wait)
	return idle(ctx, work, quiet, settle)
}

// timeStarts starts n clusters in folders under work named for label, together or one after the
// other, answers how long until all were ready, and stops them.
func timeStarts(ctx context.Context, work, label string, n int, together bool) (time.Duration, error) {
	began := time.Now()
	started := make([]*sandbox.Cluster, n)
	errs := make(chan error, n)
	for i := range n {
		start := func() {
			c, err := sandbox.StartCluster(ctx, fmt.Sprintf("%s/%s-%d", work, label, i), sandbox.ClusterName(i), nil)
			started[i] = c
			errs <- err
		}
		if together {
			go start()
		} else {
			start()
		}
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	took := time.Since(began)
	for _, c := range started {
		if c != nil {
			c.Stop()
		}
	}
	return took, first
}

// idle starts one cluster, leaves it settle, then counts its five processes' CPU over quiet and
// reads their resident memory, and prints both, per process and summed.
func idle(ctx context.Context, work string, quiet, settle time.Duration) error {
	c, err := sandbox.StartCluster(ctx, work+"/idle", sandbox.ClusterName(0), nil)
	if err != nil {
		return err
	}
	defer c.Stop()
	time.Sleep(settle)
	pids := c.PIDs()
	before, err := cpuTicks(pids)
	if err != nil {
		return err
	}
	loadBefore := loadavg()
	time.Sleep(quiet)
	after, err := cpuTicks(pids)
	if err != nil {
		return err
	}
	fmt.Printf("idle over %s after %s settling (load before %s, after %s):\n", quiet, settle, loadBefore, loadavg())
	fmt.Printf("  %-24s %14s %10s\n", "process", "CPU-s/minute", "RSS MiB")
	var cpuSum, rssSum float64
	for _, name := range processNames {
		rss, err := rssMiB(pids[name])
		if err != nil {
			return err
		}
		perMinute := float64(after[name]-before[name]) / clockTicks / quiet.Minutes()
		cpuSum, rssSum = cpuSum+perMinute, rssSum+rss
		fmt.Printf("  %-24s %14.2f %10.0f\n", name, perMinute, rss)
	}
	fmt.Printf("  %-24s %14.2f %10.0f\n", "one cluster set", cpuSum, rssSum)
	fmt.Printf("  (%.1f%% of one core)\n", cpuSum/60*100)
	return nil
}
