package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
)

// lifecycle is the four events of one job's run, a millisecond apart, in the order they happen.
func lifecycle(jobID string, at time.Time) []outbox.Event {
	j := jobs.New(jobID, "ml", "team-a", "us-east-1", 50, nil, nil, at)
	var evs []outbox.Event
	for i, t := range []outbox.Type{outbox.JobQueued, outbox.JobDispatched, outbox.JobStarted, outbox.JobCompleted} {
		evs = append(evs, jobs.Event(t, j, "", at.Add(time.Duration(i)*time.Millisecond)))
	}
	return evs
}

// typeOf reads a delivered body's event type and job id.
func typeOf(t *testing.T, body []byte) string {
	t.Helper()
	var b struct {
		Type string `json:"type"`
		Data struct {
			JobID string `json:"job_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Errorf("body %s: %v", body, err)
	}
	return b.Data.JobID + " " + b.Type
}

// pumpAtOnce is the event source mapping at its real concurrency: workers take batches of five
// off the webhook queue and handle them side by side, as concurrent Lambda invocations do, until
// done says so (a minute at most).
func (w *world) pumpAtOnce(t *testing.T, workers int, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil && !done() {
				out, err := w.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &w.queueURL, MaxNumberOfMessages: 5, WaitTimeSeconds: 1})
				if err != nil || len(out.Messages) == 0 {
					continue
				}
				var ev events.SQSEvent
				for _, m := range out.Messages {
					ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body)})
				}
				resp, _ := w.h.HandleSQS(ctx, ev)
				failed := map[string]bool{}
				for _, f := range resp.BatchItemFailures {
					failed[f.ItemIdentifier] = true
				}
				for _, m := range out.Messages {
					if !failed[aws.ToString(m.MessageId)] {
						_, _ = w.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &w.queueURL, ReceiptHandle: m.ReceiptHandle})
					}
				}
			}
		})
	}
	wg.Wait()
	if !done() {
		t.Fatalf("the webhook queue did not get there within a minute")
	}
}

// TestEachWebhookGetsEventsInTheOrderTheyHappened writes three jobs' runs, interleaved, rings a
// drain for every event as the writers do, and lets three workers take the queue at once. The
// receiver is slow to answer each job's first event, which would let a later event overtake it
// were deliveries to one endpoint attempted side by side.
func TestEachWebhookGetsEventsInTheOrderTheyHappened(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		ev := typeOf(t, body)
		if strings.HasSuffix(ev, string(outbox.JobQueued)) {
			time.Sleep(50 * time.Millisecond)
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	w.hook(t, "wh_all", "ml", "", srv.URL, outbox.JobQueued, outbox.JobDispatched, outbox.JobStarted, outbox.JobCompleted)
	other := newReceiver(t, 200)
	w.hook(t, "wh_done", "ml", "", other.srv.URL, outbox.JobCompleted)

	start := time.Now()
	var want []string
	var evs []outbox.Event
	for i := range 3 {
		evs = append(evs, lifecycle(fmt.Sprintf("job-%d", i), start.Add(time.Duration(i)*time.Millisecond/3))...)
	}
	slices.SortFunc(evs, func(a, b outbox.Event) int { return a.At.Compare(b.At) })
	for _, ev := range evs {
		w.writeEvent(t, ev)
		want = append(want, ev.Data["job_id"].(string)+" "+string(ev.Type))
		if err := w.queue.RingDrain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	w.pumpAtOnce(t, 3, func() bool { return count() >= len(want) && other.count() >= 3 })

	mu.Lock()
	defer mu.Unlock()
	if diff := cmpOrder(want, got); diff != "" {
		t.Errorf("events as the receiver got them, against the order they happened:\n%s", diff)
	}
}

func cmpOrder(want, got []string) string {
	if slices.Equal(want, got) {
		return ""
	}
	return fmt.Sprintf("want %q\n got %q", want, got)
}

// TestEventsWrittenDuringADrainAreSentByIt: while a drain sends, a new event is written and its
// drain rung; that drain finds the lease taken and leaves at once, and the first drain, looking
// at the outbox again before it ends, sends the new event after the old one.
func TestEventsWrittenDuringADrainAreSentByIt(t *testing.T) {
	w := newWorld(t)
	evs := lifecycle("job-1", time.Now())
	var mu sync.Mutex
	var got []string
	nestedSent := -1
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		got = append(got, typeOf(t, body))
		first := len(got) == 1
		mu.Unlock()
		if first {
			w.writeEvent(t, evs[1])
			if err := w.h.Drain(req.Context()); err != nil {
				t.Errorf("a drain rung while another holds the lease: %v", err)
			}
			mu.Lock()
			nestedSent = len(got) - 1
			mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	w.hook(t, "wh_a", "ml", "", srv.URL, outbox.JobQueued, outbox.JobDispatched)
	w.writeEvent(t, evs[0])
	if err := w.h.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if nestedSent != 0 {
		t.Errorf("the drain that found the lease taken sent %d deliveries; want none", nestedSent)
	}
	if want := []string{"job-1 job.queued", "job-1 job.dispatched"}; !slices.Equal(got, want) {
		t.Errorf("after one drain the receiver got %q, want %q", got, want)
	}
}

// TestAFailedAttemptHoldsTheRestOfItsLine: the endpoint answers the first of three new events
// 503; the other two are not sent to it meanwhile but wait for the retry, and all three arrive
// once it answers again. A 410 instead ends the rest with the webhook.
func TestAFailedAttemptHoldsTheRestOfItsLine(t *testing.T) {
	for _, tt := range []struct {
		name       string
		codes      []int
		wantStatus deliveryplan.Status
	}{
		{"503 then 200", []int{503, 200}, deliveryplan.StatusSucceeded},
		{"410", []int{410}, deliveryplan.StatusFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			rcv := newReceiver(t, tt.codes...)
			w.hook(t, "wh_a", "ml", "", rcv.srv.URL, outbox.JobQueued, outbox.JobDispatched, outbox.JobStarted)
			for _, ev := range lifecycle("job-1", time.Now())[:3] {
				w.writeEvent(t, ev)
			}
			if err := w.h.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := rcv.count(); n != 1 {
				t.Fatalf("after a %d the endpoint got %d requests, want 1", tt.codes[0], n)
			}
			ds, _, err := w.store.Deliveries(context.Background(), "wh_a", 10, "")
			if err != nil || len(ds) != 3 {
				t.Fatalf("deliveries = %+v, %v; want 3", ds, err)
			}
			first, rest := ds[2], ds[:2] // newest first
			for _, d := range rest {
				if d.AttemptCount != 0 || d.Status != first.Status || !equalTimes(d.NextAttemptAt, first.NextAttemptAt) {
					t.Errorf("delivery behind the failed one = %s, %d attempts, next %v; want %s, none, next with the failed one's retry %v",
						d.Status, d.AttemptCount, d.NextAttemptAt, first.Status, first.NextAttemptAt)
				}
			}
			if tt.wantStatus == deliveryplan.StatusFailed {
				return
			}
			w.pump(t, func() bool { return succeeded(t, w, "wh_a") == 3 })
			if n := rcv.count(); n != 4 {
				t.Errorf("the endpoint got %d requests, want 4: one failure, then each event once", n)
			}
		})
	}
}

func equalTimes(a, b *time.Time) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && a.Equal(*b))
}

func succeeded(t *testing.T, w *world, webhookID string) int {
	t.Helper()
	ds, _, err := w.store.Deliveries(context.Background(), webhookID, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range ds {
		if d.Status == deliveryplan.StatusSucceeded {
			n++
		}
	}
	return n
}

// TestADrainOutOfTimeQueuesTheRest: once a drain's window for first attempts has passed, the
// deliveries it has not sent go back to the queue, unclaimed and due, instead of holding the
// worker past its timeout.
func TestADrainOutOfTimeQueuesTheRest(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	clock := time.Now()
	w.h.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		mu.Lock()
		hits++
		clock = clock.Add(31 * time.Second) // the first answer takes the drain past its window
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	w.hook(t, "wh_a", "ml", "", srv.URL, outbox.JobQueued, outbox.JobDispatched, outbox.JobStarted)
	for _, ev := range lifecycle("job-1", time.Now())[:3] {
		w.writeEvent(t, ev)
	}
	if err := w.h.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if hits != 1 {
		t.Fatalf("the drain sent %d attempts, want 1 before its window closed", hits)
	}
	var queued []string
	for _, m := range w.queued(t) {
		queued = append(queued, m.DeliveryID)
	}
	slices.Sort(queued)
	ds, _, _ := w.store.Deliveries(context.Background(), "wh_a", 10, "")
	want := []string{ds[1].ID, ds[0].ID}
	if !slices.Equal(queued, want) || len(ds) != 3 {
		t.Errorf("queued %v, want the two unsent deliveries %v", queued, want)
	}
	for _, d := range ds[:2] {
		if d.AttemptCount != 0 || !d.Due(clock, 0) {
			t.Errorf("unsent delivery %s: %d attempts, next %v; want none yet, due now", d.ID, d.AttemptCount, d.NextAttemptAt)
		}
		// Released, not left claimed: the queued message's worker sends it.
		if err := w.h.Attempt(context.Background(), dynamo.DeliveryRef{WebhookID: "wh_a", DeliveryID: d.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if hits != 3 {
		t.Errorf("after the queued attempts the endpoint got %d requests, want 3", hits)
	}
}

// TestADeliveryMadeByAnotherFanOutIsLeftToIt: one of a page's deliveries is stored already (a
// drain stored it and died before taking its event out of the outbox). The drain sends the rest,
// in order, leaves that one to its own retries, and takes every event out.
func TestADeliveryMadeByAnotherFanOutIsLeftToIt(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		got = append(got, typeOf(t, body))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	hook := w.hook(t, "wh_a", "ml", "", srv.URL, outbox.JobQueued, outbox.JobDispatched, outbox.JobStarted)
	evs := lifecycle("job-1", time.Now())[:3]
	for _, ev := range evs {
		w.writeEvent(t, ev)
	}
	other := deliveryplan.NewDelivery(hook, evs[1], []byte(`{}`), time.Now())
	if _, err := w.store.CreateDelivery(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	if err := w.h.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"job-1 job.queued", "job-1 job.started"}; !slices.Equal(got, want) {
		t.Errorf("the drain sent %q, want %q", got, want)
	}
	if has, _ := w.outbox.HasUndelivered(context.Background()); has {
		t.Errorf("events are still undelivered after the drain")
	}
	if d, err := w.store.Delivery(context.Background(), "wh_a", other.ID); err != nil || d.AttemptCount != 0 || d.Status != deliveryplan.StatusPending {
		t.Errorf("the other fan-out's delivery = %+v, %v; want it left pending for its own worker", d, err)
	}
}
