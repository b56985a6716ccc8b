// Command ends measures how soon a job's end is recorded, and so how soon its room is used again,
// on `tidegate dev`'s stack with the beat at AWS's minute: the watch between beats must record an
// end within 2 s at the median and 5 s at the 99th percentile, and short jobs at capacity C must
// run at C/3 a second or more (a slot idles about 2 s at most between jobs).
//
// It runs devstack on the stand-ins with us-east-1's capacity at -c, submits -n jobs through the
// API whose one pod runs -run (kwok's pod-complete delay), and watches their pods itself: a pod's
// end is when the watch first shows it Succeeded, its record's end the time on its record's last
// status. It prints each figure beside its goal, and the ratio bench/table reads.
//
//	go run ./bench/ends [-n 200] [-c 10] [-run 1s] [-beat 60s]
//
// With TIDEGATE_SANDBOX_STATE naming a running sandbox's state file (`tidegate sandbox --kube`),
// the run uses its stand-ins; otherwise it starts its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// verbose is -v.
var verbose bool

// The goals, against which the figures are given as ratios.
const (
	goalP50 = 2 * time.Second
	goalP99 = 5 * time.Second
	// goalShare: jobs a second at least capacity ÷ goalShare.
	goalShare = 3
)

func main() {
	n := flag.Int("n", 200, "jobs to run")
	capacity := flag.Int("c", 10, "us-east-1's capacity: jobs active at once")
	run := flag.Duration("run", time.Second, "how long each job's pod runs (kwok's pod-complete delay)")
	beat := flag.Duration("beat", time.Minute, "the reconcile beat's interval (AWS's is a minute)")
	timeout := flag.Duration("timeout", 10*time.Minute, "longest the jobs may take to end")
	flag.BoolVar(&verbose, "v", false, "print each job's pod end and record end, and the stack's log, to stderr")
	flag.Parse()
	if *n < 1 || *capacity < 1 {
		fail(fmt.Errorf("-n %d and -c %d must each be at least 1", *n, *capacity))
	}
	m, err := measure(*n, *capacity, *run, *beat, *timeout)
	if err != nil {
		fail(err)
	}
	report(os.Stdout, m)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "ends: %v\n", err)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ends: "+format+"\n", args...)
}

// measured is what one run saw.
type measured struct {
	n, capacity int
	run, beat   time.Duration
	// latencies are each job's pod end to its record's end, sorted.
	latencies []time.Duration
	// took is from the first submission to the last end recorded.
	took time.Duration
	// lifetime is the pods' mean time from Running to Succeeded, as the watch saw them.
	lifetime time.Duration
	load     string
}

func measure(n, capacity int, run, beat, timeout time.Duration) (measured, error) {
	work, err := os.MkdirTemp("", "tidegate-ends-")
	if err != nil {
		return measured{}, err
	}
	defer os.RemoveAll(work)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, stopStandins, err := sandbox.Attach(ctx, filepath.Join(work, "sandbox"), func(msg string) { progress("%s", msg) })
	if err != nil {
		return measured{}, err
	}
	defer stopStandins()
	stack, err := devstack.Start(ctx, devstack.Options{
		Addr: "127.0.0.1:0", APIKey: "tg_ends_bench", Beat: beat,
		Dir: filepath.Join(work, "dev"), Standins: &st, Prefix: fmt.Sprintf("ends-%d", os.Getpid()),
		RegionCapacity: fmt.Sprintf("us-east-1=%d", capacity), RateLimit: 10000, RateBurst: 10000,
	}, stackLog(), readyTimeout)
	if err != nil {
		return measured{}, err
	}
	defer stack.Stop()
	pods, err := watchPods(ctx, st.Kubeconfig, "team-a")
	if err != nil {
		return measured{}, err
	}
	api := client{url: stack.State.URL, key: stack.State.APIKey}

	m := measured{n: n, capacity: capacity, run: run, beat: beat, load: loadAverage()}
	// The stack's first beat, at once, has passed (applying the namespaces' isolation objects
	// takes a few seconds on a busy machine) and watches before the jobs come.
	time.Sleep(10 * time.Second)
	progress("submitting %d jobs of %s at capacity %d, the beat every %s", n, run, capacity, beat)
	start := time.Now()
	ids, err := api.submitAll(ctx, n, 8, run)
	if err != nil {
		return m, err
	}
	ended, err := api.waitEnded(ctx, ids, time.Now().Add(timeout))
	if err != nil {
		return m, err
	}
	seen := pods.snapshot()
	var last time.Time
	var lives time.Duration
	for _, id := range ids {
		p, ok := seen[id]
		if !ok || p.ended.IsZero() {
			return m, fmt.Errorf("job %s ended (%s) but the watch never saw its pod end", id, ended[id].status)
		}
		if ended[id].status != "succeeded" {
			return m, fmt.Errorf("job %s ended %s, want succeeded", id, ended[id].status)
		}
		m.latencies = append(m.latencies, ended[id].at.Sub(p.ended))
		if verbose {
			progress("%s: pod ended at +%.1fs, record at +%.1fs", id, p.ended.Sub(start).Seconds(), ended[id].at.Sub(start).Seconds())
		}
		last = latest(last, ended[id].at)
		lives += p.ended.Sub(p.running)
	}
	slices.Sort(m.latencies)
	m.took, m.lifetime = last.Sub(start), lives/time.Duration(len(ids))
	return m, nil
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// loadAverage is the machine's one-minute load average as /proc says it, for the report.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	var one string
	fmt.Sscan(string(b), &one)
	return one
}

// readyTimeout bounds the stack's start on running stand-ins.
const readyTimeout = 2 * time.Minute

// stackLog logs the stack's errors to stderr, and all its lines with -v.
func stackLog() *slog.Logger {
	level := slog.LevelError
	if verbose {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
