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
	apps          = 2_000
	webhooks      = 100
	minutesMonth  = 730 * 60 // AWS bills a month as 730 hours
	billRegions   = 2
	billQueue     = 100_000 // queued jobs in each region all month: the census reads them
	pollsPerJob   = 10      // GET /api/v1/jobs/{id} a job, by its client
	pollGBSeconds = 0.02 * 0.5
	pollRRU       = 2            // the record, and a queued job's place counted when asked
	appTarballGB  = 0.005        // 5 MB an app
	appStarts     = 30           // host starts an app a month, each reading its tarball
	memoryGB      = 512.0 / 1024 // dispatch and reconcile, template.yaml
	// perThousandJobs is what bench/calls measured 1,000 jobs to cost from submission to success,
	// their four events delivered to one webhook: $0.062 on 2026-12-01 (BENCHMARKS.md, "AWS
	// calls per job"), with that machine's durations.
	perThousandJobs = 0.062
)

// bill prints the monthly bill for the workload, from the rows measured, carried to the
// workload's sizes along the line through the two largest sizes measured (at).
func bill(w io.Writer, rows []row) {
	fmt.Fprintf(w, "\n### A month: %s jobs, %s running at peak, %s apps, %d webhooks, %d regions\n\n",
		thousands(monthJobs), thousands(peakActive), thousands(apps), webhooks, billRegions)
	fmt.Fprintln(w, "| Part | How many a month | Each | $ a month |")
	fmt.Fprintln(w, "|---|--:|---|--:|")
	total := 0.0
	line := func(part string, count float64, each string, dollars float64) {
		total += dollars
		fmt.Fprintf(w, "| %s | %s | %s | %.2f |\n", part, thousands(int(count)), each, dollars)
	}
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
	line("app tarballs in S3 (stored, uploaded, read at each host start)", apps, fmt.Sprintf("%.0f MB, %d starts", appTarballGB*1000, appStarts),
		apps*(appTarballGB*s3PerGBMonth+s3PerPut+appStarts*s3PerGet))
	fmt.Fprintf(w, "| **total** | | | **%.2f** |\n", total)
	fmt.Fprintln(w, "\nPrices (us-east-1 list, no free tier): Lambda $0.20 a million requests and $0.0000133334 a GB-s (arm64);")
	fmt.Fprintln(w, "API Gateway HTTP API $1.00 a million; DynamoDB on-demand $0.625 a million write and $0.125 a million")
	fmt.Fprintln(w, "read request units; SQS $0.40 a million requests; S3 Standard $0.023 a GB-month, $0.005 per 1,000 PUTs,")
	fmt.Fprintln(w, "$0.0004 per 1,000 GETs. Durations are this machine's, at 512 MB. Not in it: the hosting beat and a")
	fmt.Fprintln(w, "fan-out to many webhooks (not measured by this suite), EKS, EC2 nodes and data transfer.")
}

// largest is op's row at its largest size.
func largest(rows []row, op string) (row, bool) {
	rs := byOp(rows, op)
	if len(rs) == 0 {
		return row{}, false
	}
	return rs[len(rs)-1], true
}

// at is op's cost at size n, on the line through its two largest sizes (a fixed part and a part
// a unit of its input), never below what the largest measured; with one size, that size's cost
// scaled by n over it (an upper bound where growth is at most linear).
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
	a, b := rs[len(rs)-2], rs[len(rs)-1]
	line := func(ya, yb float64) float64 {
		slope := (yb - ya) / float64(b.n-a.n)
		return max(yb+slope*float64(n-b.n), yb)
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
