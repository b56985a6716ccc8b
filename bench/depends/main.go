// Command depends measures what releasing a job's dependents costs in DynamoDB calls and
// capacity units (every call asks ReturnConsumedCapacity), on the stand-ins: the dependents of
// one job at two sizes, whose growth exponent (the slope of log cost on log dependents) says
// whether the work is the dependents' (1) or more, and the same release among a hundred thousand
// other blocked jobs against none, which says whether it is the queue's.
//
//	go run ./bench/depends [-dependents 100,1000] [-blocked 100000]
//
// The other blocked jobs are loaded with BatchWriteItem (dynamo.JobStore.Load): what a release
// must not read. The dependents are submitted as the API stores them (JobStore.Create with their
// edges and marks). With TIDEGATE_SANDBOX_STATE naming a running sandbox's state file (`tidegate
// sandbox --kube`), the run uses its stand-ins; otherwise it starts its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tidegate/tidegate/shared/dev/awscalls"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/unblock"
)

// goalExponent bounds the growth of a release's work with its dependents: linear, with room
// for noise.
const goalExponent = 1.1

func main() {
	sizes := flag.String("dependents", "100,1000", "the two numbers of dependents to release, smaller first")
	blocked := flag.Int("blocked", 100_000, "other blocked jobs in the table for the second run of the smaller size")
	flag.Parse()
	ns, err := parseSizes(*sizes)
	if err != nil || len(ns) != 2 || ns[0] >= ns[1] || *blocked < 0 {
		fail(fmt.Errorf("-dependents must be two sizes, smaller first (got %q), and -blocked at least 0", *sizes))
	}
	if err := run(ns[0], ns[1], *blocked); err != nil {
		fail(err)
	}
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a size", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "depends: %v\n", err)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "depends: "+format+"\n", args...)
}

// work is what one release cost.
type work struct {
	dependents, blocked int
	calls               int
	read, write         float64
	took                time.Duration
}

func run(small, large, blocked int) error {
	ctx := context.Background()
	st, _, stop, err := sandbox.AttachTemp(ctx, "tidegate-depends-", func(msg string) { progress("%s", msg) })
	if err != nil {
		return err
	}
	defer stop()
	counter := &awscalls.Counter{}
	cfg := st.AWSConfig()
	counter.Instrument(&cfg)
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(st.DynamoDBEndpoint) })
	base := fmt.Sprintf("depends-%d", os.Getpid())
	tables := dynamo.Tables{Jobs: base + "-jobs", Events: base + "-events", Control: base + "-control"}
	if err := dynamo.CreateTables(ctx, db, tables); err != nil {
		return err
	}
	defer func() {
		for _, s := range tables.Specs() {
			_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.Name)})
		}
	}()
	b := &bench{store: dynamo.NewJobStore(db, tables), counter: counter, now: time.Now().UTC()}
	b.rel = &unblock.Releaser{Jobs: b.store, Now: func() time.Time { return b.now }}
	var rows []work
	for _, n := range []int{small, large} {
		w, err := b.release(ctx, n, 0)
		if err != nil {
			return err
		}
		rows = append(rows, w)
	}
	if err := b.loadBlocked(ctx, blocked); err != nil {
		return err
	}
	w, err := b.release(ctx, small, blocked)
	if err != nil {
		return err
	}
	rows = append(rows, w)
	report(rows)
	return nil
}

type bench struct {
	store   *dynamo.JobStore
	rel     *unblock.Releaser
	counter *awscalls.Counter
	now     time.Time
	seq     int
}

func (b *bench) newJob(tenant string) jobs.Job {
	b.seq++
	name := fmt.Sprintf("j%07d", b.seq)
	j := jobs.New(fmt.Sprintf("job-bench-%07d", b.seq), tenant, "team-a", "us-east-1", 50, nil,
		[]map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "team-a"}}}, b.now)
	j.Podless = true
	return j
}

// release submits a job and n jobs that wait for any end of it, ends it, and counts what
// releasing them costs; every one of them must be queued after.
func (b *bench) release(ctx context.Context, n, blocked int) (work, error) {
	x := b.newJob("ml")
	if _, _, err := b.store.Create(ctx, x, jobs.Event(outbox.JobQueued, x, "", b.now), nil, b.now); err != nil {
		return work{}, err
	}
	progress("submitting %d jobs that wait for %s", n, x.ID)
	ids := make([]string, 0, n)
	for range n {
		d := b.newJob("ml")
		d.DependsOn = []jobs.Dependency{{Job: x.ID, On: jobs.OnEnded}}
		d = jobs.Block(d, jobs.StatusBlocked, []string{x.ID}, jobs.ReasonWaitingForDependencies, b.now)
		if _, _, err := b.store.Create(ctx, d, jobs.Event(outbox.JobBlocked, d, "", b.now), nil, b.now); err != nil {
			return work{}, err
		}
		ids = append(ids, d.ID)
	}
	_, c, err := jobs.Move(x, jobs.StatusCancelled, "bench", b.now)
	if err != nil {
		return work{}, err
	}
	if err := b.store.Apply(ctx, x, c); err != nil {
		return work{}, err
	}
	b.counter.Reset()
	start := time.Now()
	res, err := b.rel.Release(ctx, x.ID)
	if err != nil {
		return work{}, err
	}
	w := work{dependents: n, blocked: blocked, took: time.Since(start)}
	for _, t := range b.counter.Calls() {
		w.calls += t.Calls
		w.read += t.ReadUnits
		w.write += t.WriteUnits
	}
	if len(res.Queued) != n {
		return w, fmt.Errorf("the release of %d dependents queued %d", n, len(res.Queued))
	}
	progress("released %d dependents in %s: %d calls, %.0f read and %.0f write units", n, w.took.Round(time.Millisecond), w.calls, w.read, w.write)
	return w, nil
}

// loadBlocked loads n blocked jobs that wait on jobs that never end: what no release may read.
func (b *bench) loadBlocked(ctx context.Context, n int) error {
	const page = 10_000
	for done := 0; done < n; {
		batch := make([]jobs.Job, 0, min(page, n-done))
		for range cap(batch) {
			j := b.newJob("others")
			j = jobs.Block(j, jobs.StatusBlocked, []string{"job-never"}, jobs.ReasonWaitingForDependencies, b.now)
			batch = append(batch, j)
		}
		if err := b.store.Load(ctx, batch); err != nil {
			return err
		}
		done += len(batch)
		progress("loaded %d of %d other blocked jobs", done, n)
	}
	return nil
}

// report prints each release's cost and the ratios bench/table reads.
func report(rows []work) {
	fmt.Println("| Dependents | Other blocked jobs | Calls | Read units | Write units | Calls a dependent | Write units a dependent | Took |")
	fmt.Println("|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, w := range rows {
		fmt.Printf("| %d | %d | %d | %.1f | %.1f | %.2f | %.2f | %s |\n", w.dependents, w.blocked, w.calls, w.read, w.write,
			float64(w.calls)/float64(w.dependents), w.write/float64(w.dependents), w.took.Round(time.Millisecond))
	}
	small, large, among := rows[0], rows[1], rows[2]
	grow := math.Log(float64(large.dependents) / float64(small.dependents))
	callsExp := math.Log(float64(large.calls)/float64(small.calls)) / grow
	unitsExp := math.Log((large.read+large.write)/(small.read+small.write)) / grow
	fmt.Println()
	fmt.Println("| Figure | Measured | Goal | Ratio |")
	fmt.Println("|---|--:|--:|--:|")
	fmt.Printf("| release, growth exponent of calls | %.2f | %.1f | %.2f× |\n", callsExp, goalExponent, callsExp/goalExponent)
	fmt.Printf("| release, growth exponent of units | %.2f | %.1f | %.2f× |\n", unitsExp, goalExponent, unitsExp/goalExponent)
	ratio := (among.read + among.write) / (small.read + small.write)
	fmt.Printf("| release among %d other blocked jobs ÷ among none, in units | %.1f ÷ %.1f | ≤ %.1f | %.2f× |\n",
		among.blocked, among.read+among.write, small.read+small.write, goalExponent, ratio)
}
