// Command scale measures what Tidegate's periodic operations cost as the work grows: the time,
// the DynamoDB read and write units (every call asks ReturnConsumedCapacity) and the AWS and
// Kubernetes API calls of one drain, one reconcile beat, one hosting beat and one webhook fan-out,
// each at several sizes of its own input, on the stand-ins. It prints the table, each operation's
// growth exponent against its input (the slope of log cost on log size), and a monthly AWS bill
// for a stated workload.
//
//	go run ./bench/scale [-large] [-queued 1000,10000] [-active 200,1000] [-apps 200,1000] [-webhooks 1,100]
//
// The data is loaded with BatchWriteItem (dynamo.JobStore.Load), not through the API: the
// records are what the operations read, not what submitting them costs. With
// TIDEGATE_SANDBOX_STATE naming a running sandbox's state file (`tidegate sandbox --kube`), the
// run uses its stand-ins; otherwise it starts its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/dev/kubemeter"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
)

// The sizes the issue asks for. The largest ones are behind -large: loading 100,000 jobs,
// running 20,000 and hosting 10,000 apps take most of the half hour on two shared cores.
var (
	queuedSizes      = []int{1_000, 10_000}
	queuedSizesLarge = []int{100_000}
	activeSizes      = []int{200, 1_000}
	activeSizesLarge = []int{10_000, 20_000}
	appSizes         = []int{200, 1_000}
	appSizesLarge    = []int{10_000}
	webhookSizes     = []int{1, 100} // 100 a tenant is the most the API lets a tenant register
)

// tenants and regions the queued jobs are spread over, as the issue states the workload.
const (
	tenants = 50
	regions = 2
)

func main() {
	large := flag.Bool("large", false, "also the largest sizes: 100,000 queued jobs, 10,000 and 20,000 active ones, 10,000 apps")
	s := runSizes{queued: queuedSizes, active: activeSizes, apps: appSizes, webhooks: webhookSizes}
	flag.Func("queued", "the queue sizes, comma-separated, in place of the default ones (0: no drain)", sizeFlag(&s.queued))
	flag.Func("active", "the active sizes, comma-separated, in place of the default ones (0: no beat)", sizeFlag(&s.active))
	flag.Func("apps", "the app counts, comma-separated, in place of the default ones (0: no hosting beat)", sizeFlag(&s.apps))
	flag.Func("webhooks", "the webhooks a tenant, comma-separated, in place of the default ones (0: no fan-out)", sizeFlag(&s.webhooks))
	flag.Parse()
	if *large {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, grow := range map[string]struct {
			to   *[]int
			more []int
		}{"queued": {&s.queued, queuedSizesLarge}, "active": {&s.active, activeSizesLarge}, "apps": {&s.apps, appSizesLarge}} {
			if !set[name] {
				*grow.to = append(slices.Clone(*grow.to), grow.more...)
			}
		}
	}
	start := time.Now()
	rows, err := run(s)
	// What was measured before a failure is printed all the same: a long run is not lost to its last step.
	report(os.Stdout, rows, time.Since(start))
	if err != nil {
		fail(err)
	}
}

// sizes are the sizes of each input the run measures at.
type runSizes struct {
	queued, active, apps, webhooks []int
}

// sizeFlag reads a comma-separated list of sizes into to; 0 stands for none.
func sizeFlag(to *[]int) func(string) error {
	return func(v string) error {
		var out []int
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				return fmt.Errorf("%q is not a list of sizes such as 1000,10000", v)
			}
			if n > 0 {
				out = append(out, n)
			}
		}
		*to = out
		return nil
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "scale: %v\n", err)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "scale: "+format+"\n", args...)
}

// run measures the fan-outs at each webhook count, the drains at each queue size, the hosting
// beats at each app count and the beats at each active size.
func run(s runSizes) ([]row, error) {
	ctx := context.Background()
	st, work, stop, err := sandbox.AttachTemp(ctx, "tidegate-scale-", func(msg string) { progress("%s", msg) })
	if err != nil {
		return nil, err
	}
	defer stop()
	proxy, err := kubemeter.Start(st.Kubeconfig, work)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	env, err := newEnv(ctx, st, proxy)
	if err != nil {
		return nil, err
	}
	defer env.close()
	var rows []row
	for _, p := range []struct {
		what  string
		sizes []int
		f     func(context.Context, int) ([]row, error)
	}{
		{"fan-out to %d webhooks", s.webhooks, env.fanOut},
		{"drains over %d queued jobs", s.queued, env.drains},
		{"hosting beats over %d apps", s.apps, env.hosts},
		{"beats over %d active jobs", s.active, env.beats},
	} {
		for _, n := range p.sizes {
			r, err := p.f(ctx, n)
			rows = append(rows, r...)
			if err != nil {
				return rows, fmt.Errorf(p.what+": %w", n, err)
			}
		}
	}
	return rows, nil
}
