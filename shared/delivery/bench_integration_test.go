package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// benchEvents is how many events one iteration fans out and delivers.
const benchEvents = 20

// BenchmarkFanOutVsRawPost times the whole path of benchEvents outbox events to a loopback
// receiver (take the drain lease, read the outbox and which deliveries are stored, sign and POST
// each, store each with its attempt and the events' marks) against the floor of POSTing the same bodies with a
// bare http.Client. The outbox is filled outside the timings, and the two alternate, so load on the
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

		rawTook += postAll(b, raw, rcv.srv.URL, bodies)
		sent += benchEvents

		start := time.Now()
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
	testenv.Pump(tb, w.sqs, w.queueURL, w.h.HandleSQS)
}

// throughputEvents is how many outbox events one iteration of the throughput benchmark delivers
// to each webhook: two drain pages.
const throughputEvents = 200

// throughputWorkers is how many SQS batches are handled at once, as concurrent invocations of
// the webhook function would take them.
const throughputWorkers = 4

// BenchmarkFanOutVsRawPostThroughput measures deliveries per second: throughputEvents events,
// each written with its ring as the API, dispatch and the beat write theirs, are delivered to one
// webhook, then to eight (one loopback receiver behind them all), by throughputWorkers workers
// taking batches of five off the webhook queue at once. The floor is durable, as a delivery must
// be: one conditional DynamoDB write and one POST a delivery, to the same table's server and the
// same receiver, at the same concurrency (durablePostAll); delivered/durable in deliveries a
// second is the goal's ratio (≥ 1.0). A bare http.Client POSTing the same bodies one after
// another is reported beside it (delivered/raw). Filling the outbox is not timed; the three
// alternate. Every iteration checks the receiver got each delivery once.
func BenchmarkFanOutVsRawPostThroughput(b *testing.B) {
	for _, hooks := range []int{1, 8} {
		b.Run(fmt.Sprintf("webhooks=%d", hooks), func(b *testing.B) { benchThroughput(b, hooks) })
	}
}

func benchThroughput(b *testing.B, hooks int) {
	w := newWorld(b)
	rcv := newReceiver(b, 204)
	for i := range hooks {
		w.hook(b, fmt.Sprintf("wh_%d", i), "ml", "", rcv.srv.URL, outbox.JobQueued)
	}
	raw := egress.NewClient(egress.Options{AllowPrivate: true})
	ctx := context.Background()
	var deliveredTook, durableTook, rawTook time.Duration
	sent, perIteration := 0, throughputEvents*hooks
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		var bodies [][]byte
		for j := range throughputEvents {
			at := time.Now()
			ev := jobs.Event(outbox.JobQueued, jobs.New(fmt.Sprintf("job-%d-%d", i, j), "ml", "team-a", "us-east-1", 50, nil, nil, at), "", at)
			w.writeEvent(b, ev)
			if err := w.queue.RingDrain(ctx); err != nil {
				b.Fatal(err)
			}
			body, err := json.Marshal(ev)
			if err != nil {
				b.Fatal(err)
			}
			for range hooks {
				bodies = append(bodies, body)
			}
		}
		b.StartTimer()

		rawTook += postAll(b, raw, rcv.srv.URL, bodies)
		sent += perIteration
		durableTook += w.durablePostAll(b, raw, rcv.srv.URL, fmt.Sprintf("floor-%d-%d", hooks, i), bodies, throughputWorkers)
		sent += perIteration

		sent += perIteration
		deliveredTook += w.consumeAtOnce(b, throughputWorkers, func() bool { return rcv.count() >= sent })

		b.StopTimer()
		w.consumeAtOnce(b, 1, func() bool { return w.queueEmpty(b) }) // the rings left over
		if got := rcv.count(); got != sent {
			b.Fatalf("the receiver got %d requests, want %d: a crash-free run sends each delivery once", got, sent)
		}
		b.StartTimer()
	}
	perSecond := func(d time.Duration) float64 { return float64(b.N*perIteration) / d.Seconds() }
	b.ReportMetric(perSecond(deliveredTook), "delivered/s")
	b.ReportMetric(perSecond(durableTook), "durable/s")
	b.ReportMetric(perSecond(rawTook), "raw/s")
	b.ReportMetric(perSecond(deliveredTook)/perSecond(durableTook), "delivered/durable")
	b.ReportMetric(perSecond(deliveredTook)/perSecond(rawTook), "delivered/raw")
}

// durablePostAll is the durable floor: each body is one delivery, recorded by one conditional
// PutItem (it must not exist yet, as a claim must not) in the events table and then POSTed, by
// workers goroutines at once, the delivery path's own concurrency. It answers how long all took.
func (w *world) durablePostAll(b *testing.B, raw *http.Client, url, prefix string, bodies [][]byte, workers int) time.Duration {
	ctx := context.Background()
	next := make(chan int)
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Value
	for range workers {
		wg.Go(func() {
			for i := range next {
				_, err := w.db.PutItem(ctx, &dynamodb.PutItemInput{
					TableName: &w.tables.Events,
					Item: map[string]ddbtypes.AttributeValue{
						"pk": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("%s#%d", prefix, i)},
						"sk": &ddbtypes.AttributeValueMemberS{Value: "delivery"},
					},
					ConditionExpression: aws.String("attribute_not_exists(pk)"),
				})
				if err != nil {
					failed.Store(err)
					continue
				}
				resp, err := raw.Post(url, "application/json", bytes.NewReader(bodies[i]))
				if err != nil {
					failed.Store(err)
					continue
				}
				egress.Drain(resp.Body)
			}
		})
	}
	for i := range bodies {
		next <- i
	}
	close(next)
	wg.Wait()
	took := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("the durable floor: %v", err)
	}
	return took
}

// consumeAtOnce has workers take batches of five off the webhook queue and hand them to the
// handler side by side, deleting what it did not report failed, until done says so; it answers
// how long that took, to the moment done was first seen (not counting workers' long polls).
func (w *world) consumeAtOnce(tb testing.TB, workers int, done func() bool) time.Duration {
	start := time.Now()
	polling, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	var took time.Duration
	go func() {
		for polling.Err() == nil && !done() {
			time.Sleep(200 * time.Microsecond)
		}
		took = time.Since(start)
		stop()
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for polling.Err() == nil {
				out, err := w.sqs.ReceiveMessage(polling, &sqs.ReceiveMessageInput{QueueUrl: &w.queueURL, MaxNumberOfMessages: 5, WaitTimeSeconds: 1})
				if err != nil || len(out.Messages) == 0 {
					continue
				}
				w.handle(out.Messages)
			}
		})
	}
	wg.Wait()
	if !done() {
		tb.Fatalf("the webhook queue did not get there within two minutes")
	}
	return took
}

// handle hands one batch to the handler and deletes what it did not report failed, as the event
// source mapping does.
func (w *world) handle(msgs []sqstypes.Message) {
	ctx := context.Background()
	var ev events.SQSEvent
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body)})
	}
	resp, _ := w.h.HandleSQS(ctx, ev)
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	for _, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(entries) > 0 {
		_, _ = w.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &w.queueURL, Entries: entries})
	}
}

// queueEmpty reports whether the webhook queue holds no message, visible or in flight.
func (w *world) queueEmpty(tb testing.TB) bool {
	out, err := w.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: &w.queueURL, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)] == "0" &&
		out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)] == "0"
}

// postAll is the floor: bodies POSTed one after another to url, each answer read to its end.
func postAll(b *testing.B, raw *http.Client, url string, bodies [][]byte) time.Duration {
	start := time.Now()
	for _, body := range bodies {
		resp, err := raw.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		egress.Drain(resp.Body)
	}
	return time.Since(start)
}
