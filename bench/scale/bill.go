package main

import (
	"fmt"
	"io"
	"time"
)

// List prices in us-east-1 as AWS publishes them, without free tiers, as bench/calls states them
// (in force since 2024-11-01, DynamoDB on-demand's halving), and S3 Standard's.
const (
	lambdaPerRequest  = 0.20 / 1e6
	lambdaPerGBSecond = 0.0000133334 // arm64, template.yaml's Architectures
	apiPerRequest     = 1.00 / 1e6   // HTTP API
	dynamoPerWRU      = 0.625 / 1e6
	dynamoPerRRU      = 0.125 / 1e6
	sqsPerRequest     = 0.40 / 1e6
	s3PerGBMonth      = 0.023
	s3PerPut          = 0.005 / 1000
	s3PerGet          = 0.0004 / 1000
)

// The workload the bill is for, as the issue states it, and what it assumes besides.
const (
	monthJobs     = 1_000_000
	peakActive    = 20_000
	monthApps     = 2_000
	monthWebhooks = 100
	minutesMonth  = 730 * 60 // AWS bills a month as 730 hours
	billRegions   = 2
	billQueue     = 100_000 // queued jobs in each region all month: the census reads them
	pollsPerJob   = 10      // GET /api/v1/jobs/{id} a job, by its client
	pollGBSeconds = 0.02 * 0.5
	pollRRU       = 2            // the record, and a queued job's place counted when asked
	appTarballGB  = 0.005        // 5 MB an app
	appStarts     = 30           // host starts an app a month, each reading its tarball
	memoryGB      = 512.0 / 1024 // dispatch and reconcile, template.yaml
	webhookGB     = 256.0 / 1024 // the webhook function, template.yaml
	eventsPerJob  = 4            // queued, dispatched, started, completed (bench/calls)
	// billTenants hold the webhooks: 100 over 50 tenants is each event to two webhooks, one of
	// which perThousandJobs already counts.
	billTenants = tenants
	// perThousandJobs is what bench/calls measured 1,000 jobs to cost from submission to success,
	// their four events delivered to one webhook: $0.080 on 2026-12-02 12:39, transactions' write
	// units counted from their items (BENCHMARKS.md, "AWS calls per job"), with that machine's
	// durations.
	perThousandJobs = 0.080
)

// bill prints the monthly bill for the workload, from the rows measured, carried to the
// workload's sizes along the line through the two largest sizes measured (at).
func bill(w io.Writer, rows []row) {
	fmt.Fprintf(w, "\n### A month: %s jobs, %s running at peak, %s apps, %d webhooks, %d regions\n\n",
		thousands(monthJobs), thousands(peakActive), thousands(monthApps), monthWebhooks, billRegions)
	fmt.Fprintln(w, "| Part | How many a month | Each | $ a month |")
	fmt.Fprintln(w, "|---|--:|---|--:|")
	total := 0.0
	line := func(part string, count float64, each string, dollars float64) {
		total += dollars
		fmt.Fprintf(w, "| %s | %s | %s | %.2f |\n", part, thousands(int(count)), each, dollars)
	}
	defer func() { billNotes(w, total) }()
	line("jobs, submission to success (bench/calls)", monthJobs, fmt.Sprintf("$%.3f per 1,000", perThousandJobs), monthJobs/1000*perThousandJobs)
	beats := float64(minutesMonth)
	if q, ok := at(rows, "beat: nothing changed", peakActive); ok {
		line(fmt.Sprintf("quiet beats over %s active jobs", thousands(peakActive)), beats, units(q, 1), beats*cost(q, 1))
	} else {
		fmt.Fprintln(w, "| beats | — | not measured in this run | — |")
	}
	drains := float64(monthJobs) + beats*billRegions // a ring a submission, a sweep a beat a region
	if d, ok := largest(rows, "drain: full region"); ok {
		line("drains' fixed part (lease, active jobs; the jobs' own claims are above)", drains, units(d, 1), drains*cost(d, 1))
	}
	// The census drain's queued jobs are both regions'; it counts its own region's half.
	first, ok1 := at(rows, "drain: the minute's first, full region (census)", billQueue*regions)
	plain, ok2 := at(rows, "drain: full region", billQueue*regions)
	if ok1 && ok2 {
		census := first
		census.read, census.write = max(first.read-plain.read, 0), max(first.write-plain.write, 0)
		census.took = max(first.took-plain.took, 0)
		line(fmt.Sprintf("queue censuses, %s queued in each region", thousands(billQueue)), beats*billRegions, units(census, 1),
			beats*billRegions*cost(census, 1))
	}
	polls := float64(monthJobs * pollsPerJob)
	line("job reads by clients (API Gateway, Lambda, DynamoDB)", polls, fmt.Sprintf("%d RRU, %.2f GB-s", pollRRU, pollGBSeconds),
		polls*(apiPerRequest+lambdaPerRequest+pollGBSeconds*lambdaPerGBSecond+pollRRU*dynamoPerRRU))
	line("app tarballs in S3 (stored, uploaded, read at each host start)", monthApps, fmt.Sprintf("%.0f MB, %d starts", appTarballGB*1000, appStarts),
		monthApps*(appTarballGB*s3PerGBMonth+s3PerPut+appStarts*s3PerGet))
	billHosting(rows, line)
	billFanOuts(rows, line)
}

// billLine adds a part to the bill.
type billLine func(part string, count float64, each string, dollars float64)

// billHosting bills a quiet hosting beat every minute over the workload's apps, and each host
// start (appStarts an app a month) at what a beat that revived 1% of the hosts cost beyond a
// quiet one, a host.
func billHosting(rows []row, line billLine) {
	beats := float64(minutesMonth)
	quiet, ok := at(rows, "hosting beat: nothing to do", monthApps)
	if !ok {
		line("hosting beats", 0, "not measured in this run", 0)
		return
	}
	line(fmt.Sprintf("quiet hosting beats over %s apps (inside the beat's invocation)", thousands(monthApps)), beats, units(quiet, 1),
		beats*(cost(quiet, 1)-lambdaPerRequest))
	changed, ok := at(rows, "hosting beat: 1% of hosts lost", monthApps)
	if !ok {
		return
	}
	hosts := float64(max(monthApps/100, 1))
	start := changed
	start.read, start.write = max(changed.read-quiet.read, 0)/hosts, max(changed.write-quiet.write, 0)/hosts
	start.took = max(changed.took-quiet.took, 0) / time.Duration(hosts)
	starts := float64(monthApps * appStarts)
	line("host starts by the hosting beat (the beat's own share)", starts, units(start, 1), starts*(cost(start, 1)-lambdaPerRequest))
}

// billFanOuts bills each job event's deliveries beyond the first webhook (which perThousandJobs
// counts), at what one more webhook added to the fan-out of one event, measured between the
// fewest and the most webhooks.
func billFanOuts(rows []row, line billLine) {
	rs := byOp(rows, "fan-out of one event, first attempts sent")
	if len(rs) < 2 {
		line("fan-outs to many webhooks", 0, "not measured in this run", 0)
		return
	}
	a, b := rs[0], rs[len(rs)-1]
	k := float64(b.n - a.n)
	more := row{read: max(b.read-a.read, 0) / k, write: max(b.write-a.write, 0) / k, took: max(b.took-a.took, 0) / time.Duration(k)}
	extra := float64(monthJobs*eventsPerJob) * (float64(monthWebhooks)/billTenants - 1)
	each := fmt.Sprintf("%.1f RRU, %.1f WRU, %.3f GB-s", more.read, more.write, more.took.Seconds()*webhookGB)
	line(fmt.Sprintf("deliveries to the other webhooks (%d over %d tenants)", monthWebhooks, billTenants), extra, each,
		extra*(more.read*dynamoPerRRU+more.write*dynamoPerWRU+more.took.Seconds()*webhookGB*lambdaPerGBSecond))
}

// billNotes ends the bill: its total and the prices.
func billNotes(w io.Writer, total float64) {
	fmt.Fprintf(w, "| **total** | | | **%.2f** |\n", total)
	fmt.Fprintln(w, "\nPrices (us-east-1 list, no free tier): Lambda $0.20 a million requests and $0.0000133334 a GB-s (arm64);")
	fmt.Fprintln(w, "API Gateway HTTP API $1.00 a million; DynamoDB on-demand $0.625 a million write and $0.125 a million")
	fmt.Fprintln(w, "read request units; SQS $0.40 a million requests; S3 Standard $0.023 a GB-month, $0.005 per 1,000 PUTs,")
	fmt.Fprintln(w, "$0.0004 per 1,000 GETs. Durations are this machine's, at 512 MB (the webhook function's at 256 MB).")
	fmt.Fprintln(w, "Not in it: EKS, EC2 nodes and data transfer.")
}

// largest is op's row at its largest size.
func largest(rows []row, op string) (row, bool) {
	rs := byOp(rows, op)
	if len(rs) == 0 {
		return row{}, false
	}
	return rs[len(rs)-1], true
}

// at is op's cost at size n: between two sizes measured, on the line through them; past the
// largest, on the line through the two largest (a fixed part and a part a unit of its input),
// never below what the largest measured; with one size, that size's cost scaled by n over it (an
// upper bound where growth is at most linear).
func at(rows []row, op string, n int) (row, bool) {
	rs := byOp(rows, op)
	switch len(rs) {
	case 0:
		return row{}, false
	case 1:
		r, k := rs[0], float64(n)/float64(rs[0].n)
		r.read, r.write, r.took, r.n = r.read*k, r.write*k, time.Duration(float64(r.took)*k), n
		return r, true
	}
	i := len(rs) - 1
	for i > 1 && rs[i-1].n >= n {
		i--
	}
	a, b := rs[i-1], rs[i]
	line := func(ya, yb float64) float64 {
		y := yb + (yb-ya)/float64(b.n-a.n)*float64(n-b.n)
		if n > b.n {
			return max(y, yb)
		}
		return max(y, 0)
	}
	out := b
	out.n = n
	out.read, out.write = line(a.read, b.read), line(a.write, b.write)
	out.took = time.Duration(line(float64(a.took), float64(b.took)))
	return out, true
}

// cost is one run of r, scaled by scale: its DynamoDB units, and a Lambda request and duration.
func cost(r row, scale float64) float64 {
	return scale*(r.read*dynamoPerRRU+r.write*dynamoPerWRU+r.took.Seconds()*memoryGB*lambdaPerGBSecond) + lambdaPerRequest
}

func units(r row, scale float64) string {
	return fmt.Sprintf("%.1f RRU, %.1f WRU, %.2f GB-s", r.read*scale, r.write*scale, r.took.Seconds()*scale*memoryGB)
}
