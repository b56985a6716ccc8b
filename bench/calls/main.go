// Command calls counts the AWS calls a job costs from submission to success, against the least
// the design needs, and prices 1,000 jobs at AWS list prices.
//
// It runs `tidegate dev`'s stack (devstack: the API, the dispatch and webhook queues polled into
// their handlers, the reconcile beat) on the stand-ins with a webhook subscribed to a loopback
// receiver, submits N jobs through the API as a client would, and waits until the receiver has
// every job's four events (queued, dispatched, started, completed). Every AWS SDK call goes
// through awscalls' middleware on the stack's SDK config, counted by the function whose
// invocation made it; the Kubernetes API requests go through a counting proxy.
//
//	go run ./bench/calls [-n 200] [-beat 5s]
//
// With TIDEGATE_SANDBOX_STATE naming a running sandbox's state file (`tidegate sandbox --kube`),
// the run uses its stand-ins; otherwise it starts its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tidegate/tidegate/bench/jobsapi"
	"github.com/tidegate/tidegate/shared/dev/awscalls"
	"github.com/tidegate/tidegate/shared/dev/devstack"
	"github.com/tidegate/tidegate/shared/dev/kubemeter"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// idleBeats are the beats counted with no job in the system, before the jobs: the beat's fixed
// part, taken off the run's beats so that what is left is what the jobs cost.
const idleBeats = 3

// settle is how long the last calls of the run get to end before they are counted.
const settle = time.Second

func main() {
	n := flag.Int("n", 200, "jobs to run from submission to success")
	beat := flag.Duration("beat", 5*time.Second, "the reconcile beat's interval (1 minute in AWS; `tidegate dev`'s default 5 s)")
	// One at a time by default: a Lambda instance serves one request at a time, so a request's
	// duration here should not include seven others sharing its CPU.
	workers := flag.Int("c", 1, "submissions in flight at once")
	timeout := flag.Duration("timeout", 15*time.Minute, "longest the jobs may take to succeed")
	flag.Parse()
	if *n < 1 || *workers < 1 {
		fail(fmt.Errorf("-n %d and -c %d must each be at least 1", *n, *workers))
	}
	// Run from the module's root, as `make bench` does.
	memory, err := memorySizes("template.yaml")
	if err != nil {
		fail(err)
	}
	m, err := run(*n, *workers, *beat, *timeout)
	if err != nil {
		fail(err)
	}
	report(os.Stdout, m, memory)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "calls: %v\n", err)
	os.Exit(1)
}

// readyTimeout bounds the stack's start on running stand-ins: tables, queues, a KMS key, the dev
// tenant and the namespaces, each a few requests.
const readyTimeout = 2 * time.Minute

// errorsOnly logs the stack's errors to stderr.
func errorsOnly() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "calls: "+format+"\n", args...)
}

// measured is what one run counted.
type measured struct {
	jobs, beats int
	beat        time.Duration
	took        time.Duration // from the first submission to the last job's last event
	// idle is the calls of idleBeats beats with no job; run those of the jobs' run.
	idle, run       map[awscalls.Key]awscalls.Tally
	idleInvocations map[string]awscalls.Invocations
	invocations     map[string]awscalls.Invocations
	kube            map[string]int
	deliveries      int
}

func run(n, workers int, beat, timeout time.Duration) (measured, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, work, stop, err := sandbox.AttachTemp(ctx, "tidegate-calls-", func(msg string) { progress("%s", msg) })
	if err != nil {
		return measured{}, err
	}
	defer stop()
	proxy, err := kubemeter.Start(st.Kubeconfig, work)
	if err != nil {
		return measured{}, err
	}
	defer proxy.Close()
	rcv, err := startReceiver()
	if err != nil {
		return measured{}, err
	}
	defer rcv.Close()

	counter := &awscalls.Counter{}
	stack, err := devstack.Start(ctx, devstack.Options{
		Addr: "127.0.0.1:0", APIKey: "calls-bench", Beat: beat, WebhooksAllowPrivate: true,
		Dir: filepath.Join(work, "dev"), Standins: &st, Prefix: fmt.Sprintf("calls-%d", os.Getpid()),
		Kubeconfig: proxy.Kubeconfig, Meter: counter,
		// Every job admitted at once, and no submission refused for its rate: the run counts
		// what a job costs, not what waiting for room or a rate limit costs.
		RegionCapacity: fmt.Sprintf("us-east-1=%d", n), RateLimit: 10000, RateBurst: 10000,
	}, errorsOnly(), readyTimeout)
	if err != nil {
		return measured{}, err
	}
	defer stack.Stop()
	api := jobsapi.Client{URL: stack.State.URL, Key: stack.State.APIKey}
	if err := api.Subscribe(ctx, rcv.url(), hookSecret, append(slices.Clone(jobEvents), "job.failed")); err != nil {
		return measured{}, err
	}

	m := measured{jobs: n, beat: beat}
	if m.idle, m.idleInvocations, err = countIdle(ctx, counter, beat); err != nil {
		return m, err
	}
	proxy.Counts(true)

	progress("submitting %d jobs, %d at a time", n, workers)
	start := time.Now()
	ids, err := api.SubmitAll(ctx, n, workers, jobName, jobRequest)
	if err != nil {
		return m, err
	}
	progress("waiting for their %d events", len(ids)*len(jobEvents))
	if err := rcv.waitAll(ctx, ids, timeout); err != nil {
		return m, err
	}
	m.took = time.Since(start)
	// The last deliveries' logs are written after the receiver answered, and the beat may be
	// midway: one more beat, then a moment, before counting; the stack's clean-up is not counted.
	if err := waitBeats(ctx, counter, counter.Invocations()["reconcile"].Count+1, beat); err != nil {
		return m, err
	}
	time.Sleep(settle)
	m.run, m.invocations, m.kube = counter.Calls(), counter.Invocations(), proxy.Counts(false)
	stack.Stop()
	m.beats = m.invocations["reconcile"].Count
	m.deliveries = rcv.counts()
	return m, nil
}

// countIdle counts idleBeats beats with no job, from the end of one (the beat running when it is
// called counts none of its calls), and answers their calls and invocations; the counter is then
// reset for the run.
func countIdle(ctx context.Context, counter *awscalls.Counter, beat time.Duration) (map[awscalls.Key]awscalls.Tally, map[string]awscalls.Invocations, error) {
	progress("counting %d beats with no job", idleBeats)
	counter.Reset()
	if err := waitBeats(ctx, counter, 1, beat); err != nil {
		return nil, nil, err
	}
	counter.Reset()
	if err := waitBeats(ctx, counter, idleBeats, beat); err != nil {
		return nil, nil, err
	}
	calls, invocations := counter.Calls(), counter.Invocations()
	counter.Reset()
	return calls, invocations, nil
}

// waitBeats waits until k beats have ended since the counter was reset.
func waitBeats(ctx context.Context, c *awscalls.Counter, k int, beat time.Duration) error {
	deadline := time.Now().Add(time.Duration(k+2) * (beat + 30*time.Second))
	for c.Invocations()["reconcile"].Count < k {
		if time.Now().After(deadline) {
			return errors.New("the beat did not run: see the stack's log")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
