package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/dev/awscalls"
)

// costJobs is how many jobs the cost is given for.
const costJobs = 1000

// bill is what a number of jobs cost, item by item, in dollars.
type bill struct {
	lambdaRequests, lambdaGBs, apiRequests, dynamoRead, dynamoWrite, sqs, kms float64
}

func (b bill) total() float64 {
	return b.lambdaRequests + b.lambdaGBs + b.apiRequests + b.dynamoRead + b.dynamoWrite + b.sqs + b.kms
}

func report(w io.Writer, m measured, memory map[string]int) {
	jobs := perJob(m)
	mins := minimum(m.jobs, invocationCounts(m))
	invPerJob, gbsPerJob := lambdaPerJob(m, memory)

	fmt.Fprintf(w, "%d jobs from submission to success in %s, with one webhook subscribed (%d deliveries); "+
		"the beat every %s (%d beats, less %d idle beats' calls); invocations: api %d, dispatch %d, webhook %d.\n\n",
		m.jobs, m.took.Round(100*time.Millisecond), m.deliveries, m.beat, m.beats, m.idleInvocations["reconcile"].Count,
		m.invocations["api"].Count, m.invocations["dispatch"].Count, m.invocations["webhook"].Count)
	callTable(w, jobs, mins)
	totalTable(w, jobs, mins)
	lambdaTable(w, m, memory, invPerJob, gbsPerJob)
	measuredBill := costOf(jobs, invPerJob, gbsPerJob)
	minimumBill := costAtMinimum(jobs, mins, invPerJob, gbsPerJob)
	costTable(w, measuredBill, minimumBill)
	idleTable(w, m)
	kubeTable(w, m)
}

func invocationCounts(m measured) map[string]int {
	out := map[string]int{}
	for f, inv := range m.invocations {
		out[f] = inv.Count
	}
	return out
}

// keysOf is every key of measured and minimum, by function, service and operation.
func keysOf(jobs map[awscalls.Key]rate, mins map[awscalls.Key]float64) []awscalls.Key {
	set := map[awscalls.Key]bool{}
	for k := range jobs {
		set[k] = true
	}
	for k := range mins {
		set[k] = true
	}
	return slices.SortedFunc(maps.Keys(set), func(a, b awscalls.Key) int {
		return cmp.Or(cmp.Compare(a.Function, b.Function), cmp.Compare(a.Service, b.Service), cmp.Compare(a.Operation, b.Operation))
	})
}

func callTable(w io.Writer, jobs map[awscalls.Key]rate, mins map[awscalls.Key]float64) {
	fmt.Fprintln(w, "AWS calls per job, by the function whose invocation made them (outside: Lambda's event source mapping, the queue pollers):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Function | Service | Operation | Calls per job | Minimum | Read units per job | Write units per job |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|")
	for _, k := range keysOf(jobs, mins) {
		j := jobs[k]
		if j.calls < 0.0005 && mins[k] == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.3f | %.3f | %.2f | %.2f |\n", k.Function, k.Service, k.Operation, j.calls, mins[k], j.read, j.write)
	}
	fmt.Fprintln(w)
}

func totalTable(w io.Writer, jobs map[awscalls.Key]rate, mins map[awscalls.Key]float64) {
	byService, minByService := map[string]float64{}, map[string]float64{}
	var all, allMin float64
	for k, j := range jobs {
		byService[k.Service] += j.calls
		all += j.calls
	}
	for k, n := range mins {
		minByService[k.Service] += n
		allMin += n
	}
	fmt.Fprintln(w, "| Calls per job | Measured | Minimum | Measured ÷ minimum |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	for _, s := range slices.Sorted(maps.Keys(byService)) {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %s |\n", s, byService[s], minByService[s], ratio(byService[s], minByService[s]))
	}
	fmt.Fprintf(w, "| all AWS calls | %.2f | %.2f | %s |\n\n", all, allMin, ratio(all, allMin))
}

func ratio(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func lambdaTable(w io.Writer, m measured, memory map[string]int, inv, gbs map[string]float64) {
	fmt.Fprintln(w, "Lambda, at template.yaml's memory sizes and the durations measured here (the beat's: beyond an idle beat's, and no request of its own):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Function | Memory | Invocations | Mean duration | Requests per job | GB-s per job |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	for _, f := range functionNames {
		in := m.invocations[f]
		var total time.Duration
		for _, d := range in.Durations {
			total += d
		}
		mean := time.Duration(0)
		if in.Count > 0 {
			mean = total / time.Duration(in.Count)
		}
		fmt.Fprintf(w, "| %s | %d MB | %d | %s | %.3f | %.5f |\n", f, memory[f], in.Count, mean.Round(100*time.Microsecond), inv[f], gbs[f])
	}
	fmt.Fprintln(w)
}

// costOf is the bill of costJobs jobs at the rates per job measured.
func costOf(jobs map[awscalls.Key]rate, inv, gbs map[string]float64) bill {
	var b bill
	for k, j := range jobs {
		switch k.Service {
		case "DynamoDB":
			b.dynamoRead += j.read * costJobs * dynamoPerRRU
			b.dynamoWrite += j.write * costJobs * dynamoPerWRU
		case "SQS":
			b.sqs += j.calls * costJobs * sqsPerRequest
		case "KMS":
			b.kms += j.calls * costJobs * kmsPerRequest
		}
	}
	lambdaBill(&b, inv, gbs)
	return b
}

// costAtMinimum is the bill of costJobs jobs making only the minimum's calls, each consuming the
// capacity the same call consumed on average in the run; the functions' invocations and time as
// measured.
func costAtMinimum(jobs map[awscalls.Key]rate, mins map[awscalls.Key]float64, inv, gbs map[string]float64) bill {
	var b bill
	for k, n := range mins {
		j := jobs[k]
		switch {
		case k.Service == "DynamoDB" && j.calls > 0:
			b.dynamoRead += n * j.read / j.calls * costJobs * dynamoPerRRU
			b.dynamoWrite += n * j.write / j.calls * costJobs * dynamoPerWRU
		case k.Service == "SQS":
			b.sqs += n * costJobs * sqsPerRequest
		}
	}
	lambdaBill(&b, inv, gbs)
	return b
}

func lambdaBill(b *bill, inv, gbs map[string]float64) {
	for _, f := range functionNames {
		b.lambdaRequests += inv[f] * costJobs * lambdaPerRequest
		b.lambdaGBs += gbs[f] * costJobs * lambdaPerGBSecond
		if f == "api" {
			b.apiRequests += inv[f] * costJobs * apiPerRequest
		}
	}
}

func costTable(w io.Writer, got, least bill) {
	fmt.Fprintf(w, "Cost of %d jobs at us-east-1 list prices of %s (no free tier), against the same jobs making only the minimum's calls:\n\n", costJobs, pricesAsOf)
	fmt.Fprintln(w, "| Item | Price | Measured | At the minimum |")
	fmt.Fprintln(w, "|---|---|--:|--:|")
	rows := []struct {
		name, price string
		got, least  float64
	}{
		{"Lambda requests", "$0.20 / million", got.lambdaRequests, least.lambdaRequests},
		{"Lambda duration (arm64)", "$0.0000133334 / GB-s", got.lambdaGBs, least.lambdaGBs},
		{"API Gateway HTTP API requests", "$1.00 / million", got.apiRequests, least.apiRequests},
		{"DynamoDB read request units", "$0.125 / million", got.dynamoRead, least.dynamoRead},
		{"DynamoDB write request units", "$0.625 / million", got.dynamoWrite, least.dynamoWrite},
		{"SQS requests", "$0.40 / million", got.sqs, least.sqs},
		{"KMS requests", "$0.03 / 10,000", got.kms, least.kms},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | $%.4f | $%.4f |\n", r.name, r.price, r.got, r.least)
	}
	fmt.Fprintf(w, "| total | | $%.4f | $%.4f |\n\n", got.total(), least.total())
	fmt.Fprintln(w, "| Cost | Measured | At the minimum | Measured ÷ minimum |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	fmt.Fprintf(w, "| cost of %d jobs | $%.4f | $%.4f | %s |\n\n", costJobs, got.total(), least.total(), ratio(got.total(), least.total()))
}

// idleTable is the beat's fixed part: what one beat with no job calls, paid every minute.
func idleTable(w io.Writer, m measured) {
	beats := m.idleInvocations["reconcile"].Count
	if beats == 0 {
		return
	}
	var calls, read, write float64
	for k, t := range m.idle {
		if k.Function != "reconcile" {
			continue
		}
		calls += float64(t.Calls)
		read += t.ReadUnits
		write += t.WriteUnits
	}
	n := float64(beats)
	// A month of beats at the schedule's one a minute.
	const beatsAMonth = 30 * 24 * 60
	month := (read/n*dynamoPerRRU + write/n*dynamoPerWRU + lambdaPerRequest) * beatsAMonth
	fmt.Fprintf(w, "The beat's fixed part, no job's: an idle beat makes %.1f AWS calls (%.2f read and %.2f write units); "+
		"at one a minute that is $%.2f a month in DynamoDB units and Lambda requests, before its duration.\n\n", calls/n, read/n, write/n, month)
}

func kubeTable(w io.Writer, m measured) {
	fmt.Fprintln(w, "Kubernetes API requests per job, for information (every request of the run, the beat's fixed LISTs included):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Request | Per job |")
	fmt.Fprintln(w, "|---|--:|")
	for _, k := range slices.Sorted(maps.Keys(m.kube)) {
		fmt.Fprintf(w, "| %s | %.3f |\n", k, float64(m.kube[k])/float64(m.jobs))
	}
	fmt.Fprintln(w)
}
