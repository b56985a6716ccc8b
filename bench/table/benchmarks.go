package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Step is one benchmark command scripts/bench.sh runs, and the rows of the table its output fills.
type Step struct {
	// Name is what scripts/bench.sh takes to run this step alone.
	Name string
	// About is the line of progress printed before it runs.
	About   string
	Command string
	Rows    []Row
}

// Row is one ratio against a floor, the goal it is held to and where the step's output says it.
type Row struct {
	Step string
	// What says what is divided by what.
	What string
	Goal Goal
	Find Finder
}

// Label is the row's first cell, which also keys it from one run to the next.
func (r Row) Label() string { return fmt.Sprintf("`%s`: %s", r.Step, r.What) }

// Goal is a bound on a ratio: at most or at least Value. The zero Goal is none.
type Goal struct {
	Op    Op
	Value float64
}

// Op is a goal's direction.
type Op int

const (
	NoGoal Op = iota
	AtMost
	AtLeast
)

func atMost(v float64) Goal  { return Goal{AtMost, v} }
func atLeast(v float64) Goal { return Goal{AtLeast, v} }

// Met says whether ratio meets the goal; a ratio on the bound meets it.
func (g Goal) Met(ratio float64) bool {
	switch g.Op {
	case AtMost:
		return ratio <= g.Value
	case AtLeast:
		return ratio >= g.Value
	}
	return true
}

func (g Goal) String() string {
	bound := strconv.FormatFloat(g.Value, 'f', -1, 64) + "×"
	switch g.Op {
	case AtMost:
		return "≤ " + bound
	case AtLeast:
		return "≥ " + bound
	}
	return "none set"
}

// times writes a ratio to three significant figures or to the unit, as the history below the
// table does: 0.022×, 1.04×, 38.2×, 16,475×.
func times(r float64) string {
	switch {
	case r >= 1000:
		return thousands(fmt.Sprintf("%.0f", r)) + "×"
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	case r >= 10:
		return fmt.Sprintf("%.1f×", r)
	case r >= 0.1 || r == 0:
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.3f×", r)
}

func thousands(digits string) string {
	for i := len(digits) - 3; i > 0; i -= 3 {
		digits = digits[:i] + "," + digits[i:]
	}
	return digits
}

// goTest is the command of a Go benchmark as scripts/bench.sh has always run it.
func goTest(args string) string { return "go test -run '^$' " + args }

// steps are the benchmarks `make bench` runs, in order, each once.
var steps = []Step{
	{
		Name: "coldstart", About: "Lambda init under the runtime interface emulator, against hello-world's whole cold start",
		Command: "go run ./bench/coldstart",
		Rows: []Row{
			// Its markdown table: | Function | Binary | median | p90 | Over hello | × hello | Init | First event | Init ÷ hello | calls |
			{What: "api, init ÷ hello's whole cold start", Goal: atMost(2), Find: Cell{First: "api", Col: 9}},
			{What: "dispatch, init ÷ hello's whole cold start", Goal: atMost(2), Find: Cell{First: "dispatch", Col: 9}},
			{What: "reconcile, init ÷ hello's whole cold start", Goal: atMost(2), Find: Cell{First: "reconcile", Col: 9}},
			{What: "webhook, init ÷ hello's whole cold start", Goal: atMost(2), Find: Cell{First: "webhook", Col: 9}},
			{What: "authorizer, init ÷ hello's whole cold start", Goal: atMost(2), Find: Cell{First: "authorizer", Col: 9}},
		},
	},
	{
		Name: "devstart", About: "make dev to a healthy API, against starting the stand-ins alone",
		Command: "bash scripts/bench-devstart.sh 3",
		Rows: []Row{
			// The issue bounds it in time (a minute, tools cached), not as a ratio.
			{What: "make dev to a healthy API ÷ the stand-ins alone", Find: Cell{First: "make dev to healthy API", Col: 4}},
		},
	},
	{
		Name: "policy", About: "admission policy from the JSON text against encoding/json into typed objects and the upstream Pod Security evaluator",
		Command: goTest("-bench . -benchmem ./shared/policy/"),
		Rows: []Row{
			{What: "decode and check a Deployment ÷ encoding/json into typed objects and EvaluatePod", Goal: atMost(1), Find: Metric{"BenchmarkStraightDeployment", "x-straight"}},
			{What: "decode and check a 20-document bundle ÷ encoding/json into typed objects and EvaluatePod", Goal: atMost(1), Find: Metric{"BenchmarkStraightBundle20", "x-straight"}},
			// Reported beside the goal, not held to one: the same check against the evaluator
			// handed objects already typed, which reads no input.
			{What: "check of a Deployment ÷ upstream EvaluatePod", Find: Metric{"BenchmarkCheckDeployment", "x-upstream"}},
			{What: "check of a 20-document bundle ÷ upstream EvaluatePod", Find: Metric{"BenchmarkCheckBundle20", "x-upstream"}},
		},
	},
	{
		Name: "submit", About: "POST /api/v1/jobs end to end, against a raw TransactWriteItems + SendMessage of the same items",
		Command: goTest("-bench SubmitVsRaw -benchtime 200x ./shared/httpapi/"),
		Rows: []Row{
			{What: "POST /api/v1/jobs ÷ raw TransactWriteItems + SendMessage", Goal: atMost(1.3), Find: Metric{"BenchmarkSubmitVsRaw", "submit/raw"}},
		},
	},
	{
		Name: "admission", About: "admission over 100,000 and 200,000 queued jobs (linear: t(2N)/t(N) ≤ 2.3)",
		Command: goTest("-bench Decide -benchmem ./shared/admission/"),
		Rows: []Row{
			{What: "Decide over 200,000 ÷ 100,000 jobs, in dispatch order", Goal: atMost(2.3), Find: Metric{"BenchmarkDecide200k", "t200k/t100k"}},
			{What: "Decide over 200,000 ÷ 100,000 jobs, shuffled", Goal: atMost(2.3), Find: Metric{"BenchmarkDecide200kShuffled", "t200k/t100k"}},
		},
	},
	{
		Name: "quotas", About: "admission under quotas over 10,000 queued jobs of 50 tenants, against admission of the same jobs without quotas (≤ 1.5×), and linear (t(20k)/t(10k) ≤ 2.3)",
		Command: goTest("-bench Quotas -benchmem ./shared/admission/"),
		Rows: []Row{
			{What: "Decide under quotas ÷ without, 10,000 jobs of 50 tenants", Goal: atMost(1.5), Find: Metric{"BenchmarkQuotas10k", "x-noquota"}},
			{What: "Decide under quotas over 20,000 ÷ 10,000 jobs", Goal: atMost(2.3), Find: Metric{"BenchmarkQuotas20k", "t20k/t10k"}},
		},
	},
	{
		Name: "flavors", About: "admission in resources per flavor (DecideFlavors) over 100,000 queued jobs of 50 tenants, 4 resources and 3 flavors, against today's Decide of the same jobs under quotas (≤ 1.5×), and linear (t(200k)/t(100k) ≤ 2.3)",
		Command: goTest("-bench Flavors -benchmem ./shared/admission/"),
		Rows: []Row{
			{What: "DecideFlavors ÷ Decide under quotas, 100,000 jobs of 50 tenants, 4 resources, 3 flavors", Goal: atMost(1.5), Find: Metric{"BenchmarkFlavors100k", "x-decide"}},
			{What: "DecideFlavors over 200,000 ÷ 100,000 jobs", Goal: atMost(2.3), Find: Metric{"BenchmarkFlavors200k", "t200k/t100k"}},
			{What: "DecideFlavors ÷ Decide on Decide's own work (one flavor of jobs and GPUs), 100,000 jobs of 50 tenants", Goal: atMost(1.5), Find: Metric{"BenchmarkFlavorsSameWork100k", "x-decide"}},
		},
	},
	{
		Name: "reclaim", About: "admission with reclaim (evicting borrowed room) over 100,000 queued and 10,000 running jobs, against the same decision without it (≤ 1.3×)",
		Command: goTest("-bench Reclaim -benchmem ./shared/admission/"),
		Rows: []Row{
			{What: "DecideFlavors with reclaim ÷ without, 100,000 queued and 10,000 running jobs of 50 tenants", Goal: atMost(1.3), Find: Metric{"BenchmarkReclaim100k", "x-no-reclaim"}},
		},
	},
	{
		Name: "dispatch", About: "dispatch against raw client-go creates of the same Jobs",
		Command: goTest("-bench 'DispatchVsRaw' -benchtime 1x ./shared/dispatch/"),
		Rows: []Row{
			{What: "jobs dispatched a second ÷ raw client-go creates", Goal: atLeast(0.8), Find: Metric{"BenchmarkDispatchVsRawCreate", "dispatch/raw"}},
		},
	},
	{
		Name: "beat", About: "a no-op beat over 5,000 jobs against one raw LIST",
		Command: goTest("-bench 'NoopBeatVsRawList' -benchtime 1x -timeout 20m ./shared/reconcile/"),
		Rows: []Row{
			{What: "no-op beat over 5,000 jobs ÷ one raw LIST, fastest of each", Goal: atMost(1.3), Find: Metric{"BenchmarkNoopBeatVsRawList", "beat/raw"}},
		},
	},
	{
		Name: "signing", About: "webhook signing of 1 KB against a bare HMAC-SHA256 of the same bytes",
		Command: goTest("-bench SignVsRawHMAC -benchmem ./shared/signing/"),
		Rows: []Row{
			{What: "a 1 KB body signed ÷ a bare HMAC-SHA256 of it", Goal: atMost(1.3), Find: Metric{"BenchmarkSignVsRawHMAC", "x-hmac"}},
		},
	},
	{
		Name: "delivery", About: "webhook fan-out and signed delivery to a loopback receiver, against a durable floor (a conditional write and a POST a delivery) and bare POSTs",
		Command: goTest("-bench FanOutVsRawPost -benchtime 5x ./shared/delivery/"),
		Rows: []Row{
			// Time per event, so more is slower; the goal is set on throughput.
			{What: "20 events drained and delivered ÷ bare POSTs, time per event", Find: Metric{"BenchmarkFanOutVsRawPost", "delivered/raw"}},
			{What: "deliveries a second to 1 webhook ÷ a conditional write and a POST each", Goal: atLeast(1), Find: Metric{"BenchmarkFanOutVsRawPostThroughput/webhooks=1", "delivered/durable"}},
			{What: "deliveries a second to 8 webhooks ÷ a conditional write and a POST each", Goal: atLeast(1), Find: Metric{"BenchmarkFanOutVsRawPostThroughput/webhooks=8", "delivered/durable"}},
			{What: "deliveries a second to 1 webhook ÷ bare POSTs", Find: Metric{"BenchmarkFanOutVsRawPostThroughput/webhooks=1", "delivered/raw"}},
			{What: "deliveries a second to 8 webhooks ÷ bare POSTs", Find: Metric{"BenchmarkFanOutVsRawPostThroughput/webhooks=8", "delivered/raw"}},
		},
	},
	{
		Name: "hostplan", About: "host plan over 10,000 and 20,000 apps of 5 pods, against grouping the pods alone (x-index ≤ 3) and linear (t20k/t10k ≤ 2.3)",
		Command: goTest("-bench . -benchmem ./shared/hostplan/"),
		Rows: []Row{
			{What: "plan of 10,000 apps ÷ grouping their pods alone", Goal: atMost(3), Find: Metric{"BenchmarkPlan10k", "x-index"}},
			{What: "plan of 20,000 apps ÷ 10,000", Goal: atMost(2.3), Find: Metric{"BenchmarkPlan20k", "t20k/t10k"}},
		},
	},
	{
		Name: "seedplan", About: "host plan against the seed runner's Python planned() on the same 10,000 apps (≥ 100× faster; the seed takes minutes)",
		Command: "go run ./bench/hostplan -n 10000",
		Rows: []Row{
			// Its markdown row: | Apps (pods) | seed planned() | hostplan.Plan | × faster |
			{What: "the seed's Python planned() ÷ the plan, 10,000 apps", Goal: atLeast(100), Find: Cell{First: "10000 (", Col: 4}},
		},
	},
	{
		Name: "hosting", About: "a no-op hosting beat over 2,000 live apps, against one raw LIST of their pods (≤ 1.3×)",
		Command: goTest("-bench 'NoopBeatVsRawList' -benchtime 1x -timeout 20m ./shared/hosting/"),
		Rows: []Row{
			{What: "no-op hosting beat over 2,000 apps ÷ one raw LIST, fastest of each", Goal: atMost(1.3), Find: Metric{"BenchmarkNoopBeatVsRawList", "beat/raw"}},
		},
	},
	{
		Name: "ends", About: "a job's end to its record and one-second jobs a second at capacity 10 on the dev stack with a minute's beat, against the goals (p50 and p99 ≤ 2 s) and the floor, a loop of creates on the same sandbox (≥ 0.8×)",
		Command: "go run ./bench/ends -n 200 -c 10",
		Rows:    endsRows("200 one-second jobs at capacity 10"),
	},
	{
		Name: "ends100", About: "the same at capacity 100, 1,000 jobs",
		Command: "go run ./bench/ends -n 1000 -c 100",
		Rows:    endsRows("1,000 one-second jobs at capacity 100"),
	},
	{
		Name: "ends500", About: "the same at capacity 500, 2,500 jobs",
		Command: "go run ./bench/ends -n 2500 -c 500",
		Rows:    endsRows("2,500 one-second jobs at capacity 500"),
	},
	{
		Name: "depends", About: "releasing a job's 100 and 1,000 dependents, and 100 among 100,000 other blocked jobs: DynamoDB calls and units, their growth with the dependents and with the queue",
		Command: "go run ./bench/depends -dependents 100,1000 -blocked 100000",
		Rows: []Row{
			// Its summary table: | Figure | Measured | Goal | Ratio |, the ratio the measure ÷ the goal.
			{What: "releasing 100 and 1,000 dependents: growth exponent of the calls ÷ 1.1", Goal: atMost(1), Find: Cell{First: "release, growth exponent of calls", Col: 4}},
			{What: "releasing 100 and 1,000 dependents: growth exponent of the read and write units ÷ 1.1", Goal: atMost(1), Find: Cell{First: "release, growth exponent of units", Col: 4}},
			{What: "releasing 100 dependents among 100,000 other blocked jobs ÷ among none, in units", Goal: atMost(1.1), Find: Cell{First: "release among", Col: 4}},
		},
	},
	{
		Name: "arrays", About: "a 10,000-child array's submission against as many single submissions in DynamoDB units, and an array of 1,000 one-second children at parallelism 50 run to its end on the dev stack",
		Command: "go run ./bench/arrays -size 10000 -singles 1000 -run-size 1000 -parallelism 50",
		Rows: []Row{
			// Its summary table: | Figure | Measured | Goal | Ratio |.
			{What: "submitting a 10,000-child array ÷ 10,000 single submissions, in DynamoDB units", Goal: atMost(1.1), Find: Cell{First: "array submission ÷ single submissions", Col: 4}},
			{What: "1,000 children at parallelism 50: the most let in at once, sampled each second ÷ 50", Goal: atMost(1), Find: Cell{First: "most children let in at once", Col: 4}},
			{What: "1,000 children at parallelism 50: succeeded ÷ the array's size", Goal: atLeast(1), Find: Cell{First: "children succeeded", Col: 4}},
		},
	},
	{
		Name: "calls", About: "AWS calls per job from submission to success on the dev stack, against the least the design needs, and the cost of 1,000 jobs",
		Command: "go run ./bench/calls -n 200",
		Rows: []Row{
			// Its markdown rows: | all AWS calls | measured | minimum | ratio | and | cost of 1000 jobs | $ | $ | ratio |.
			{What: "AWS calls per job, submission to success ÷ the design's minimum", Find: Cell{First: "all AWS calls", Col: 4}},
			{What: "cost of 1,000 jobs (Lambda, API Gateway, DynamoDB, SQS) ÷ its cost at the minimum's calls", Find: Cell{First: "cost of 1000 jobs", Col: 4}},
		},
	},
	{
		Name: "decodemem", About: "peak heap of decoding the worst 1 MiB YAML and JSON bodies, and of their admission, each in a fresh process (≤ 32 MiB: 32× the body)",
		Command: "go run ./bench/decodemem",
		Rows: []Row{
			// Its summary table: | Worst body | Name | Peak heap | ÷ its size | — the floor is the body itself.
			{What: "peak heap decoding the worst 1 MiB YAML body ÷ its size", Goal: atMost(32), Find: Cell{First: "YAML decode", Col: 4}},
			{What: "peak heap decoding the worst 1 MiB JSON body ÷ its size", Goal: atMost(32), Find: Cell{First: "JSON decode", Col: 4}},
			{What: "peak heap admitting (decode + policy check) the worst 1 MiB YAML body ÷ its size", Goal: atMost(32), Find: Cell{First: "admission of a YAML body", Col: 4}},
			{What: "peak heap admitting (decode + policy check) the worst 1 MiB JSON body ÷ its size", Goal: atMost(32), Find: Cell{First: "admission of a JSON body", Col: 4}},
		},
	},
}

// endsRows are bench/ends' rows for a run of what: its markdown rows | Figure | Measured | Goal |
// Ratio |, the latencies against their goal, the jobs a second against the floor's.
func endsRows(what string) []Row {
	return []Row{
		{What: what + ": a job's end to its record, p50 ÷ 2 s", Goal: atMost(1), Find: Cell{First: "end to record, p50", Col: 4}},
		{What: what + ": a job's end to its record, p99 ÷ 2 s", Goal: atMost(1), Find: Cell{First: "end to record, p99", Col: 4}},
		{What: what + ": jobs a second ÷ the floor's (a loop of creates, no Tidegate)", Goal: atLeast(0.8), Find: Cell{First: "jobs a second ÷ the floor's", Col: 4}},
		{What: what + ": jobs a cluster CPU-second ÷ the floor's (the cluster's commands' CPU a job, the floor's ÷ Tidegate's)", Goal: atLeast(0.65), Find: Cell{First: "cluster CPU a job", Col: 4}},
	}
}

func init() {
	for i := range steps {
		for j := range steps[i].Rows {
			steps[i].Rows[j].Step = steps[i].Name
		}
	}
}

// choose is the steps named, in the order given; all of them when none is.
func choose(all []Step, names []string) ([]Step, error) {
	if len(names) == 0 {
		return all, nil
	}
	var chosen []Step
	for _, n := range names {
		i := slices.IndexFunc(all, func(s Step) bool { return s.Name == n })
		if i < 0 {
			known := make([]string, len(all))
			for j, s := range all {
				known[j] = s.Name
			}
			return nil, fmt.Errorf("no benchmark named %q; the names are %s", n, strings.Join(known, ", "))
		}
		chosen = append(chosen, all[i])
	}
	return chosen, nil
}
