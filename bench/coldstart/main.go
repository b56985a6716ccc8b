// Command coldstart measures each Lambda function's cold start under the Lambda runtime interface
// emulator, against a hello-world function built and started the same way in the same run.
//
// A cold start is the time from starting `aws-lambda-rie ./bootstrap` to the first invocation
// answered with the function's own answer: the emulator's start, the function's process start,
// its init (config, SDK clients, handler) and one cheap real event. The emulator's own report
// splits out the init and the first event. Runs are interleaved across the functions, so a
// machine that slows down mid-run slows all of them alike.
//
//	go run ./bench/coldstart [-n 10]
//
// With TIDEGATE_SANDBOX_STATE naming a running sandbox's state file, the functions use its
// stand-ins; otherwise the benchmark starts its own for the run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// invokePath is where the emulator takes invocations, as the Lambda Invoke API names it.
const invokePath = "/2015-03-31/functions/function/invocations"

// pollEvery is how often an emulator that is not listening yet is tried again; it bounds the
// timing error of one run, against cold starts of tens of milliseconds.
const pollEvery = time.Millisecond

// goalRatio is the most a function's init (process start to ready, as the emulator reports it)
// may take against hello's whole cold start: Tidegate's wiring (config, SDK clients, handler)
// must not cost more than the Go runtime and emulator it sits on. The first event's own store
// and cluster work is reported apart, with its calls.
const goalRatio = 2.0

func main() {
	runs := flag.Int("n", 10, "cold starts to measure per function")
	rie := flag.String("rie", filepath.Join(sandbox.CacheDir(), "bin", "aws-lambda-rie"), "the runtime interface emulator (scripts/tools-aws.sh installs it)")
	timeout := flag.Duration("timeout", 30*time.Second, "longest one cold start may take before the run fails")
	flag.Parse()
	if err := run(*runs, *rie, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "coldstart: %v\n", err)
		os.Exit(1)
	}
}

func run(runs int, rie string, timeout time.Duration) error {
	if runs < 1 {
		return fmt.Errorf("-n %d: measure at least one run", runs)
	}
	if _, err := os.Stat(rie); err != nil {
		return fmt.Errorf("the runtime interface emulator is missing (run scripts/tools-aws.sh): %w", err)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	// The first events read DynamoDB and the beat LISTs the hosting cluster's pods, so the
	// functions run against the real stand-ins, with tables and queues of their own: a cold
	// start here includes its first store and cluster calls, as in AWS.
	ctx := context.Background()
	st, work, stop, err := sandbox.AttachTemp(ctx, "coldstart-", func(msg string) { progress("%s", msg) })
	if err != nil {
		return err
	}
	defer stop()
	res, err := createResources(ctx, st)
	if err != nil {
		return err
	}
	defer res.remove()

	// The functions reach the stand-ins through counting proxies, so each first event is
	// reported with the calls it made.
	m := newMeter()
	defer m.stop()
	metered, err := meterStandins(m, st, work)
	if err != nil {
		return err
	}

	all := targets()
	for _, t := range all {
		progress("building %s", t.pkg)
		if err := t.build(root, work); err != nil {
			return err
		}
	}
	env := functionEnv(work, metered, res)
	for _, t := range all {
		t.environ = env
		if t.env != nil {
			t.environ = append(slices.Clip(env), t.env(metered)...)
		}
	}
	if err := measure(all, m, runs, rie, timeout); err != nil {
		return err
	}
	report(os.Stdout, all, runs)
	return nil
}

// measure records runs cold starts of every target, interleaved, each with the calls m counted
// while it ran.
func measure(all []*target, m *meter, runs int, rie string, timeout time.Duration) error {
	// One unmeasured start each first, as benchmarks warm up: in a trial without it, the first
	// run after the build was by far the slowest (hello 178 ms against about 20 ms after it).
	for _, t := range all {
		if _, err := coldStart(t, rie, timeout); err != nil {
			return fmt.Errorf("warm-up: %s: %w", t.name, err)
		}
	}
	progress("measuring %d runs; load average at start: %s", runs, loadAverage())
	for i := range runs {
		var line []string
		// Each run starts at a different function, so none is always first after a quiet spell.
		for j := range all {
			t := all[(i+j)%len(all)]
			m.take()
			s, err := coldStart(t, rie, timeout)
			if err != nil {
				return fmt.Errorf("run %d: %s: %w", i+1, t.name, err)
			}
			s.calls = m.take()
			t.starts = append(t.starts, s)
			line = append(line, fmt.Sprintf("%s %s", t.name, ms(s.total)))
		}
		progress("run %d/%d: %s", i+1, runs, strings.Join(line, ", "))
	}
	return nil
}

// moduleRoot is the folder of the go.mod the benchmark belongs to.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run `go run ./bench/coldstart` from the checkout")
	}
	return filepath.Dir(gomod), nil
}

// loadAverage is the 1-minute load average where Linux tells it: cold starts on a busy machine
// measure the scheduler as much as the function.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "coldstart: "+format+"\n", args...)
}
