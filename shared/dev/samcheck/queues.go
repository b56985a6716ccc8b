package samcheck

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/awslabs/goformation/v7/cloudformation/sqs"
)

// SQS's defaults when a queue does not say.
const (
	defaultVisibility = 30     // seconds
	defaultRetention  = 345600 // seconds: 4 days
	// maxBatch is the most records a standard queue's event source takes without a batching window.
	maxBatch = 10
)

// sqsEvent is one SQS event source on a function. goformation v7.14.9 drops the properties of an
// SQS event that sets FunctionResponseTypes, so these are read from the untyped template.
type sqsEvent struct {
	function, name string
	props          map[string]any
	queue          string // the queue's logical id; "" unless Queue is !GetAtt <a queue here>.Arn
}

func sqsEvents(t *Template) []sqsEvent {
	var out []sqsEvent
	for _, fn := range slices.Sorted(maps.Keys(t.CFN.GetAllServerlessFunctionResources())) {
		evs, _ := dig(t.resource(fn), "Properties", "Events").(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(evs)) {
			if dig(evs[name], "Type") != "SQS" {
				continue
			}
			e := sqsEvent{function: fn, name: name}
			e.props, _ = dig(evs[name], "Properties").(map[string]any)
			q, _ := e.props["Queue"].(string)
			if r, ok := wholeRef(q); ok && r.attr == "Arn" && t.resourceType(r.id) == typeQueue {
				e.queue = r.id
			}
			out = append(out, e)
		}
	}
	return out
}

// checkQueues checks that each work queue feeds exactly its function, through an event that
// reports batch item failures, and that every queue feeding a function has a visibility timeout
// that outlasts it and a dead-letter queue; and that every queue is encrypted.
func checkQueues(t *Template) []Problem {
	var ps []Problem
	queues := t.CFN.GetAllSQSQueueResources()
	fed := map[string][]sqsEvent{}
	for _, e := range sqsEvents(t) {
		ps = append(ps, checkSQSEvent(e)...)
		if e.queue != "" {
			fed[e.queue] = append(fed[e.queue], e)
		}
	}
	ps = append(ps, checkConsumers(queues, fed)...)
	for _, queue := range slices.Sorted(maps.Keys(fed)) {
		ps = append(ps, checkVisibility(t, queue, queues[queue], fed[queue])...)
		ps = append(ps, checkRedrive(queue, queues)...)
	}
	for _, queue := range slices.Sorted(maps.Keys(queues)) {
		q := queues[queue]
		if (q.SqsManagedSseEnabled == nil || !*q.SqsManagedSseEnabled) && q.KmsMasterKeyId == nil {
			ps = append(ps, problem(RuleEncryption, queue, "is not encrypted at rest; set SqsManagedSseEnabled: true (or a KmsMasterKeyId)"))
		}
	}
	return ps
}

// checkConsumers checks that each work queue exists and feeds exactly the function meant to drain
// it, given the events that feed each queue.
func checkConsumers(queues map[string]*sqs.Queue, fed map[string][]sqsEvent) []Problem {
	var ps []Problem
	for _, queue := range slices.Sorted(maps.Keys(consumers)) {
		fn := consumers[queue]
		if _, ok := queues[queue]; !ok {
			ps = append(ps, problem(RuleSQSEvent, queue, "missing: %s needs this %s to wake it", fn, typeQueue))
			continue
		}
		if !slices.ContainsFunc(fed[queue], func(e sqsEvent) bool { return e.function == fn }) {
			ps = append(ps, problem(RuleSQSEvent, fn, "has no SQS event on %s; add one with Queue: !GetAtt %s.Arn", queue, queue))
		}
	}
	for _, queue := range slices.Sorted(maps.Keys(fed)) {
		want, known := consumers[queue]
		for _, e := range fed[queue] {
			switch {
			case !known:
				ps = append(ps, problem(RuleSQSEvent, e.function, "event %s drains %s, which is no work queue samcheck knows; add it to consumers in wiring.go", e.name, queue))
			case e.function != want:
				ps = append(ps, problem(RuleSQSEvent, queue, "feeds %s (event %s), but only %s should drain it", e.function, e.name, want))
			}
		}
	}
	return ps
}

func checkSQSEvent(e sqsEvent) []Problem {
	var ps []Problem
	if e.queue == "" {
		ps = append(ps, problem(RuleSQSEvent, e.function, "event %s's Queue is %s; point it at a queue in this template with !GetAtt <Queue>.Arn", e.name, describeRef(str(e.props["Queue"]))))
	}
	if !slices.Contains(stringList(e.props["FunctionResponseTypes"]), "ReportBatchItemFailures") {
		ps = append(ps, problem(RuleSQSEvent, e.function, "event %s lacks FunctionResponseTypes: [ReportBatchItemFailures]; without it one failed record makes SQS redeliver the whole batch, and the handlers report failures per record", e.name))
	}
	if n, ok := number(e.props["BatchSize"]); ok {
		if _, window := e.props["MaximumBatchingWindowInSeconds"]; n < 1 || (n > maxBatch && !window) {
			ps = append(ps, problem(RuleSQSEvent, e.function, "event %s's BatchSize is %v; a standard queue's event takes 1 to %d records unless a batching window is set", e.name, n, maxBatch))
		}
	}
	if enabled, ok := e.props["Enabled"].(bool); ok && !enabled {
		ps = append(ps, problem(RuleSQSEvent, e.function, "event %s is disabled; its queue would fill and nothing would drain it", e.name))
	}
	return ps
}

func checkVisibility(t *Template, queue string, q *sqs.Queue, evs []sqsEvent) []Problem {
	vis := defaultVisibility
	if q.VisibilityTimeout != nil {
		vis = *q.VisibilityTimeout
	}
	var ps []Problem
	fns := t.CFN.GetAllServerlessFunctionResources()
	for _, e := range evs {
		to := timeout(t, fns[e.function])
		if vis < visibilityFactor*to {
			ps = append(ps, problem(RuleVisibility, queue, "VisibilityTimeout is %d s but %s's Timeout is %d s; make it at least %d s (%d ×, AWS's guidance for SQS event sources, so a batch retried after throttling does not reappear while the first attempt may still run)",
				vis, e.function, to, visibilityFactor*to, visibilityFactor))
		}
	}
	return ps
}

func checkRedrive(queue string, queues map[string]*sqs.Queue) []Problem {
	policy := redrivePolicy(queues[queue].RedrivePolicy)
	if policy == nil {
		return []Problem{problem(RuleRedrive, queue, "feeds a function but has no RedrivePolicy; give it a dead-letter queue (deadLetterTargetArn: !GetAtt <DLQ>.Arn, maxReceiveCount: %d or more) so a poison message stops being retried", minReceives)}
	}
	var ps []Problem
	target, ok := wholeRef(str(policy["deadLetterTargetArn"]))
	dlq, exists := queues[target.id]
	if !ok || target.attr != "Arn" || !exists || target.id == queue {
		ps = append(ps, problem(RuleRedrive, queue, "RedrivePolicy's deadLetterTargetArn is %s; point it at another queue in this template with !GetAtt <DLQ>.Arn", describeRef(str(policy["deadLetterTargetArn"]))))
	}
	if n, ok := number(policy["maxReceiveCount"]); !ok || n < minReceives {
		ps = append(ps, problem(RuleRedrive, queue, "RedrivePolicy's maxReceiveCount is %v; make it at least %d so a briefly unreachable cluster or endpoint does not dead-letter work", policy["maxReceiveCount"], minReceives))
	}
	if exists && target.id != queue && retention(dlq) < retention(queues[queue]) {
		ps = append(ps, problem(RuleRedrive, target.id, "keeps messages %d s, less than %s's %d s; a dead-lettered message keeps its first enqueue time, so it would expire early",
			retention(dlq), queue, retention(queues[queue])))
	}
	return ps
}

// redrivePolicy reads a RedrivePolicy, which CloudFormation takes as an object or a JSON string.
func redrivePolicy(v any) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		return v
	case string:
		var m map[string]any
		if json.Unmarshal([]byte(v), &m) == nil {
			return m
		}
	}
	return nil
}

func retention(q *sqs.Queue) int {
	if q.MessageRetentionPeriod != nil {
		return *q.MessageRetentionPeriod
	}
	return defaultRetention
}

// str is v when it is a string, else "".
func str(v any) string {
	s, _ := v.(string)
	return s
}
