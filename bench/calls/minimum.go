package main

import "github.com/tidegate/tidegate/shared/dev/awscalls"

// need is a call the design cannot do without, and how many of it one run needs: Per says what
// it is counted per (a job, or an invocation of a function), Each how many per one of those.
type need struct {
	Key  awscalls.Key
	Per  string // "job", or the function whose invocations it is paid per
	Each float64
	Why  string
}

// eventsPerJob are a job's events: queued, dispatched, started, completed, each delivered once
// to the run's one webhook.
const eventsPerJob = 4

// The design's batches (shared/delivery): a drain stores each attempted delivery, and takes its
// event out of the outbox once the event's deliveries are stored (2 items an event with one
// webhook), 100 items a transaction: DynamoDB's limit.
const itemsPerTransaction = 100

func key(function, service, op string) awscalls.Key {
	return awscalls.Key{Function: function, Service: service, Operation: op}
}

// needs is the least the design needs, call by call (ARCHITECTURE.md, "Jobs: in and out"): what
// each job must write and send, and what each invocation of a function that serves many jobs
// must read and hold (a drain's lease and queue reads, the webhook drain's outbox reads), which is
// paid once per invocation however many jobs it serves. A ring that serves every job of an
// invocation (dispatch's and the beat's rings of the webhook queue, the beat's of dispatch) is
// counted as none: in AWS, with a beat a minute and busy drains, it is a small share of a job.
// The beat's own fixed part is no job's: the run's beats are counted beside an idle beat's and
// only the difference is the jobs'.
var needs = []need{
	{key("api", "DynamoDB", "TransactWriteItems"), "job", 1, "the job, its job.queued event and the idempotency key, in one transaction"},
	{key("api", "SQS", "SendMessage"), "job", 2, "ring dispatch for the job's region, and the webhook queue for its event"},
	{key("dispatch", "DynamoDB", "UpdateItem"), "job", 1, "the claim: queued → dispatching"},
	{key("dispatch", "DynamoDB", "TransactWriteItems"), "job", 1, "dispatching → pending with its job.dispatched event"},
	{key("dispatch", "DynamoDB", "PutItem"), "dispatch", 1, "take the region's lease"},
	{key("dispatch", "DynamoDB", "DeleteItem"), "dispatch", 1, "let the lease go"},
	{key("dispatch", "DynamoDB", "Query"), "dispatch", 5, "the region's queue, and the capacity in use from its four active shards"},
	{key("reconcile", "DynamoDB", "TransactWriteItems"), "job", 2, "pending → running and running → succeeded, each with its event"},
	{key("webhook", "DynamoDB", "Query"), "webhook", 4, "is anything undelivered, a page of it, the tenant's webhooks, and is anything left"},
	{key("webhook", "DynamoDB", "PutItem"), "webhook", 1, "take the drain's lease"},
	{key("webhook", "DynamoDB", "DeleteItem"), "webhook", 1, "let it go"},
	{key("webhook", "DynamoDB", "BatchGetItem"), "webhook", 1, "which of a page's deliveries are stored already"},
	{key("webhook", "DynamoDB", "TransactWriteItems"), "job", eventsPerJob * 2.0 / itemsPerTransaction, "store each attempted delivery and take its event out of the outbox (100 items a transaction)"},
	{key(awscalls.Outside, "SQS", "ReceiveMessage"), "dispatch+webhook", 1, "Lambda's event source mapping: the receive that brought the batch"},
	{key(awscalls.Outside, "SQS", "DeleteMessageBatch"), "dispatch+webhook", 1, "and the delete of what the function handled"},
}

// minimum is each needed call's count per job in a run of jobs whose functions were invoked
// invocations times.
func minimum(jobs int, invocations map[string]int) map[awscalls.Key]float64 {
	out := map[awscalls.Key]float64{}
	for _, n := range needs {
		var times float64
		switch n.Per {
		case "job":
			times = float64(jobs)
		case "dispatch+webhook":
			times = float64(invocations["dispatch"] + invocations["webhook"])
		default:
			times = float64(invocations[n.Per])
		}
		out[n.Key] += n.Each * times / float64(jobs)
	}
	return out
}
