// Command ends measures how soon a job's end is recorded, and so how soon its room is used again,
// on `tidegate dev`'s stack with the beat at AWS's minute, against the floor of what the sandbox
// itself allows: the watch between beats must record an end within 2 s at the median and at the
// 99th percentile, and short jobs must flow at 0.8 times the floor's rate or more.
//
// It first runs the floor, with no Tidegate: a watch-driven loop that keeps -c Jobs of the same
// pod going on the same sandbox and creates the next as soon as a pod of the ones before it ends,
// until -n have ended (floor.go). Then it runs devstack on the stand-ins with us-east-1's capacity
// at -c, submits -n jobs through the API whose one pod runs -run (kwok's pod-complete delay), and
// watches their pods itself: a pod's end is when the watch first shows it Succeeded, its record's
// end the time on its record's last status. It prints each figure beside its goal, and the ratio
// bench/table reads.
//
//	go run ./bench/ends [-n 200] [-c 10] [-run 1s] [-beat 60s] [-depth 0] [-floor=true]
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

	"github.com/tidegate/tidegate/bench/jobsapi"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/jobs"
)

// verbose is -v.
var verbose bool

// The goals, against which the figures are given as ratios.
const (
	goalP50 = 2 * time.Second
	goalP99 = 2 * time.Second
	// goalFloor: jobs a second at least goalFloor times the floor's.
	goalFloor = 0.8
	// goalClusterCPU: jobs a cluster CPU-second at least goalClusterCPU times the floor's. On a
	// machine whose cores the stand-ins for DynamoDB and SQS share with the cluster, jobs a
	// second measure the CPU those stand-ins take; in AWS they take none of the cluster's, and
	// what Tidegate makes the cluster do a job is the figure the floor can hold it to.
	goalClusterCPU = 0.65
)

func main() {
	n := flag.Int("n", 200, "jobs to run")
	capacity := flag.Int("c", 10, "us-east-1's capacity: jobs active at once")
	run := flag.Duration("run", time.Second, "how long each job's pod runs (kwok's pod-complete delay)")
	beat := flag.Duration("beat", time.Minute, "the reconcile beat's interval (AWS's is a minute)")
	timeout := flag.Duration("timeout", 10*time.Minute, "longest the jobs may take to end")
	depth := flag.Int("depth", 0, "how many watched jobs the beat follows at once (0: reconcile.DefaultFollowDepth)")
	withFloor := flag.Bool("floor", true, "measure the floor first (a loop of creates on the sandbox, no Tidegate)")
	flag.BoolVar(&verbose, "v", false, "print each job's pod end and record end, and the stack's log, to stderr")
	flag.Parse()
	if *n < 1 || *capacity < 1 {
		fail(fmt.Errorf("-n %d and -c %d must each be at least 1", *n, *capacity))
	}
	m, err := measure(*n, *capacity, *depth, *withFloor, *run, *beat, *timeout)
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
	// steps are a slot's cycle, step by step; idle how long each slot stood empty between pods;
	// busy how many drains found the region draining already.
	steps []step
	idle  []time.Duration
	busy  int
	// rounds are the drains' rounds; floor is the floor's run, when measured.
	rounds []round
	floor  *floorRun
	// cpu is the CPU time each command on the machine used while the jobs ran.
	cpu map[string]time.Duration
}

func measure(n, capacity, depth int, withFloor bool, run, beat, timeout time.Duration) (measured, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, work, stop, err := sandbox.AttachTemp(ctx, "tidegate-ends-", func(msg string) { progress("%s", msg) })
	if err != nil {
		return measured{}, err
	}
	defer stop()
	m := measured{n: n, capacity: capacity, run: run, beat: beat, load: loadAverage()}
	if withFloor {
		if m.floor, err = measureFloor(ctx, st.Kubeconfig, n, capacity, run); err != nil {
			return m, err
		}
	}
	log := newMarks(stackPrinter())
	stack, err := devstack.Start(ctx, devstack.Options{
		Addr: "127.0.0.1:0", APIKey: "ends-bench", Beat: beat,
		Dir: filepath.Join(work, "dev"), Standins: &st, Prefix: fmt.Sprintf("ends-%d", os.Getpid()),
		RegionCapacity: fmt.Sprintf("us-east-1=%d", capacity), RateLimit: 10000, RateBurst: 10000,
		FollowDepth: depth,
	}, slog.New(log), readyTimeout)
	if err != nil {
		return measured{}, err
	}
	defer stack.Stop()
	objects, err := watchObjects(ctx, st.Kubeconfig, "team-a")
	if err != nil {
		return measured{}, err
	}
	api := jobsapi.Client{URL: stack.State.URL, Key: stack.State.APIKey}

	// The stack's first beat, at once, has passed (applying the namespaces' isolation objects
	// takes a few seconds on a busy machine) and watches before the jobs come.
	time.Sleep(10 * time.Second)
	progress("submitting %d jobs of %s at capacity %d, the beat every %s", n, run, capacity, beat)
	start, cpuBefore := time.Now(), cpuTimes()
	request := func(name string) map[string]any {
		// kwok ends the pod this long after it runs (shared/dev/sandbox/stages/pod-complete.yaml).
		return jobsapi.JobRequest(name, map[string]string{"run": runLabel}, map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": run.String()}, "sleep", "1")
	}
	ids, err := api.SubmitAll(ctx, n, 8, func(i int) string { return fmt.Sprintf("%s-%d", runLabel, i) }, request)
	if err != nil {
		return m, err
	}
	ended, err := api.WaitEnded(ctx, "run="+runLabel, ids, time.Now().Add(timeout))
	if err != nil {
		return m, err
	}
	m.cpu = cpuSince(cpuBefore, cpuTimes())
	// The end's record is logged just after the write the listing saw.
	time.Sleep(100 * time.Millisecond)
	seen := objects.snapshot()
	var last time.Time
	var lives time.Duration
	for _, id := range ids {
		p, ok := seen[id]
		if !ok || p.ended.IsZero() {
			return m, fmt.Errorf("job %s ended (%s) but the watch never saw its pod end", id, ended[id].Status)
		}
		if ended[id].Status != jobs.StatusSucceeded {
			return m, fmt.Errorf("job %s ended %s, want succeeded", id, ended[id].Status)
		}
		at := statusAt(ended[id], ended[id].Status)
		m.latencies = append(m.latencies, at.Sub(p.ended))
		if verbose {
			progress("%s: pod ended at +%.1fs, record at +%.1fs", id, p.ended.Sub(start).Seconds(), at.Sub(start).Seconds())
		}
		last = latest(last, at)
		lives += p.ended.Sub(p.running)
	}
	slices.Sort(m.latencies)
	m.took, m.lifetime = last.Sub(start), lives/time.Duration(len(ids))
	m.steps, m.idle, m.busy, m.rounds = breakdown(seen, ended, log, capacity)
	return m, nil
}

// measureFloor runs the floor (floor.go) on the sandbox at kubeconfig, with the CPU it took.
func measureFloor(ctx context.Context, kubeconfig string, n, capacity int, run time.Duration) (*floorRun, error) {
	progress("the floor: %d Jobs of %s kept %d at once by a loop of creates, no Tidegate", n, run, capacity)
	before := cpuTimes()
	f, err := floor(ctx, kubeconfig, n, capacity, run)
	if err != nil {
		return nil, err
	}
	f.cpu = cpuSince(before, cpuTimes())
	progress("the floor took %s (%.2f jobs/s)", f.took.Round(10*time.Millisecond), float64(n)/f.took.Seconds())
	return &f, nil
}

// runLabel marks the run's jobs, so that listing them finds no other run's.
var runLabel = fmt.Sprintf("ends-%d", os.Getpid())

// breakdown is the run's slot cycle, step by step, how long each slot stood empty, how many
// rings found the region draining already, and the drains' rounds.
func breakdown(seen map[string]life, ended map[string]jobs.Job, log *marks, capacity int) ([]step, []time.Duration, int, []round) {
	at, recorded, rounds := log.times()
	var claims []time.Time
	for _, j := range ended {
		if t := statusAt(j, jobs.StatusDispatching); !t.IsZero() {
			claims = append(claims, t)
		}
	}
	slices.SortFunc(claims, time.Time.Compare)
	o := observed{lives: seen, records: ended, recorded: recorded, rang: at[markRang], draining: at[markDraining], claims: claims}
	return cycle(o), idle(seen, capacity), len(at[markBusy]), rounds
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

// stackPrinter prints the stack's errors to stderr, and all its lines but Debug with -v.
func stackPrinter() slog.Handler {
	level := slog.LevelError
	if verbose {
		level = slog.LevelInfo
	}
	return slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
}
