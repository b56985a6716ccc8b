package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/outbox"
)

// benchEvents is how many events one iteration fans out and delivers: two SQS batches' worth.
const benchEvents = 20

// BenchmarkFanOutVsRawPost times the whole path of benchEvents outbox events to a loopback
// receiver (drain the outbox into deliveries, queue them, take them off the webhook queue, claim,
// sign, POST and log each attempt) against the floor of POSTing the same bodies with a bare
// http.Client. The outbox is filled outside the timings, and the two alternate, so load on the
// machine hits both alike. The reported ratio is delivered/raw.
func BenchmarkFanOutVsRawPost(b *testing.B) {
	w := newWorld(b)
	rcv := newReceiver(b, 204)
	w.hook(b, "wh_bench", "ml", "", rcv.srv.URL, outbox.JobQueued)
	raw := egress.NewClient(egress.Options{AllowPrivate: true})
	ctx := context.Background()

	var deliveredTook, rawTook time.Duration
	sent := 0
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		var bodies [][]byte
		for j := range benchEvents {
			ev := w.submit(b, fmt.Sprintf("job-%d-%d", i, j), "ml", "team-a")
			body, err := json.Marshal(ev)
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, body)
		}
		b.StartTimer()

		start := time.Now()
		for _, body := range bodies {
			resp, err := raw.Post(rcv.srv.URL, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			egress.Drain(resp.Body)
		}
		rawTook += time.Since(start)
		sent += benchEvents

		start = time.Now()
		if err := w.h.Drain(ctx); err != nil {
			b.Fatal(err)
		}
		sent += benchEvents
		for rcv.count() < sent {
			w.consume(b)
		}
		deliveredTook += time.Since(start)
	}
	perEvent := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N*benchEvents) }
	b.ReportMetric(perEvent(deliveredTook), "µs/delivered")
	b.ReportMetric(perEvent(rawTook), "µs/raw")
	b.ReportMetric(float64(deliveredTook)/float64(rawTook), "delivered/raw")
}

// consume hands one batch of the webhook queue to the handler and deletes it, as the event source
// mapping does.
func (w *world) consume(tb testing.TB) {
	ctx := context.Background()
	out, err := w.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &w.queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		tb.Fatal(err)
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body)})
	}
	if len(ev.Records) == 0 {
		return
	}
	if _, err := w.h.HandleSQS(ctx, ev); err != nil {
		tb.Fatal(err)
	}
	for _, m := range out.Messages {
		_, _ = w.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &w.queueURL, ReceiptHandle: m.ReceiptHandle})
	}
}
