package devstack

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// sqsHandler is what the dispatch and webhook functions are to an event source mapping.
type sqsHandler interface {
	HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)
}

// Long polling as Lambda's event source mapping does it: wait up to 20 s (SQS's maximum) for up
// to 10 messages (the mapping's default batch size for standard queues).
const (
	pollWait  = 20
	pollBatch = 10
	// dispatchInvocations are the dispatch function's invocations at once. In AWS they are many
	// (the event source mapping scales its pollers), and a ring during a drain knocks on its lease;
	// here they are one at a time, so that the rings that wait meanwhile are one batch, as they
	// mostly are in AWS when drains are short, and bench/calls counts what a burst costs there.
	dispatchInvocations = 1
	// pollBackoff spaces out retries when the queue itself errors, so a stopped stand-in is not hammered.
	pollBackoff = time.Second
)

// pollQueue feeds queueURL's messages to h until ctx ends, up to invocations batches at once, as
// Lambda's event source mapping runs several invocations of a function at once, deleting what h
// did not report as failed; failed messages come back after their visibility timeout, as in AWS.
// It returns once the batches under way are done.
func pollQueue(ctx context.Context, log *slog.Logger, q *sqs.Client, queueURL, queueARN string, h sqsHandler, invocations int) {
	slots := make(chan struct{}, max(invocations, 1))
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    &queueURL,
			MaxNumberOfMessages:         pollBatch,
			WaitTimeSeconds:             pollWait,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			<-slots
			if ctx.Err() == nil {
				log.Error("polling queue", "queue", queueURL, "err", err)
				sleep(ctx, pollBackoff)
			}
			continue
		}
		if len(out.Messages) == 0 {
			<-slots
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			resp, err := h.HandleSQS(ctx, toEvent(out.Messages, queueARN))
			if err != nil {
				// A whole-batch error leaves every message to come back, as Lambda does.
				log.Error("sqs handler failed", "queue", queueURL, "err", err)
				return
			}
			deleteDone(ctx, log, q, queueURL, out.Messages, resp)
		})
	}
}

func toEvent(msgs []types.Message, queueARN string) events.SQSEvent {
	var ev events.SQSEvent
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId:      aws.ToString(m.MessageId),
			ReceiptHandle:  aws.ToString(m.ReceiptHandle),
			Body:           aws.ToString(m.Body),
			Md5OfBody:      aws.ToString(m.MD5OfBody),
			Attributes:     m.Attributes,
			EventSource:    "aws:sqs",
			EventSourceARN: queueARN,
			AWSRegion:      "us-east-1",
		})
	}
	return ev
}

func deleteDone(ctx context.Context, log *slog.Logger, q *sqs.Client, queueURL string, msgs []types.Message, resp events.SQSEventResponse) {
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var entries []types.DeleteMessageBatchRequestEntry
	for _, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(entries) == 0 {
		return
	}
	out, err := q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &queueURL, Entries: entries})
	if err != nil {
		log.Error("deleting handled messages", "queue", queueURL, "err", err)
		return
	}
	for _, f := range out.Failed {
		log.Error("deleting a handled message", "queue", queueURL, "id", aws.ToString(f.Id), "err", aws.ToString(f.Message))
	}
}

// beat calls the reconcile handler at once and then every interval, as the schedule does in AWS,
// until ctx ends. The first beat does not wait an interval: with a minute's beat, the jobs of the
// stack's first minute would otherwise run unwatched.
func beat(ctx context.Context, log *slog.Logger, every time.Duration, h func(context.Context, events.EventBridgeEvent) error) {
	t := time.NewTicker(every)
	defer t.Stop()
	now := time.Now()
	for n := 1; ; n++ {
		ev := events.EventBridgeEvent{
			Version: "0", ID: "dev-beat-" + now.UTC().Format("20060102T150405.000"), DetailType: "Scheduled Event",
			Source: "aws.events", Time: now.UTC(), Region: "us-east-1",
		}
		if err := h(ctx, ev); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("reconcile beat failed", "beat", n, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case now = <-t.C:
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
