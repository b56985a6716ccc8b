package testenv

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// SQSHandler is a queue function's batch handler, as Lambda's event source mapping calls it.
type SQSHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Pump receives one batch from queueURL (up to ten messages, waiting up to a second), hands it to
// handle and deletes every message handle did not report as a batch item failure, as the event
// source mapping does. It answers how many messages it handed over; a handler error fails the test.
func Pump(tb testing.TB, c *sqs.Client, queueURL string, handle SQSHandler) int {
	tb.Helper()
	ctx := context.Background()
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		tb.Fatal(err)
	}
	if len(out.Messages) == 0 {
		return 0
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body)})
	}
	resp, err := handle(ctx, ev)
	if err != nil {
		tb.Fatal(err)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			_, _ = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &queueURL, ReceiptHandle: m.ReceiptHandle})
		}
	}
	return len(out.Messages)
}
