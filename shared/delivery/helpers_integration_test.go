package delivery_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dynamotypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/signing"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// world is one test's tables, webhook queue, stores and worker.
type world struct {
	tables   dynamo.Tables
	db       *dynamodb.Client
	store    *dynamo.WebhookStore
	outbox   *dynamo.OutboxStore
	jobs     *dynamo.JobStore
	queueURL string
	sqs      *sqs.Client
	queue    *delivery.Queue
	h        *delivery.Handler
}

func newWorld(t testing.TB) *world {
	t.Helper()
	tables, db := testenv.Tables(t)
	url, q := testenv.Queue(t, "webhook")
	w := &world{
		tables: tables, db: db, store: dynamo.NewWebhookStore(db, tables, nil), outbox: dynamo.NewOutboxStore(db, tables),
		jobs: dynamo.NewJobStore(db, tables), queueURL: url, sqs: q, queue: delivery.NewQueue(q, url),
	}
	w.h = &delivery.Handler{
		Outbox: w.outbox, Store: w.store, Queue: w.queue, Client: egress.NewClient(egress.Options{AllowPrivate: true}),
		Log: slog.New(slog.DiscardHandler), Jitter: func() float64 { return 0.5 },
	}
	return w
}

// hook registers a webhook of tenant for types (namespace optional) to url, and answers it with
// its secret.
func (w *world) hook(t testing.TB, id, tenant, namespace, url string, types ...outbox.Type) deliveryplan.Webhook {
	t.Helper()
	return w.register(t, deliveryplan.Webhook{ID: id, Tenant: tenant, URL: url, Events: types, Namespace: namespace})
}

// register stores wh with a fresh secret, made a minute ago, and answers it with the secret.
func (w *world) register(t testing.TB, wh deliveryplan.Webhook) deliveryplan.Webhook {
	t.Helper()
	key, err := signing.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	wh.CreatedAt = time.Now().Add(-time.Minute)
	wh.UpdatedAt, wh.Secrets = wh.CreatedAt, []deliveryplan.Secret{{Key: key}}
	if err := w.store.CreateWebhook(context.Background(), wh, 50); err != nil {
		t.Fatal(err)
	}
	return wh
}

// submit stores a queued job of tenant in namespace with its job.queued event, as the API does.
func (w *world) submit(t testing.TB, id, tenant, namespace string) outbox.Event {
	t.Helper()
	now := time.Now()
	j := jobs.New(id, tenant, namespace, "us-east-1", 50, nil, nil, now)
	ev := jobs.Event(outbox.JobQueued, j, "", now)
	if _, _, err := w.jobs.Create(context.Background(), j, ev, nil, now); err != nil {
		t.Fatal(err)
	}
	return ev
}

// pump feeds the webhook queue to the handler, as the event source mapping does, until done says
// so; it fails the test if that takes more than a minute.
func (w *world) pump(t *testing.T, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook queue did not get there within a minute")
		}
		testenv.Pump(t, w.sqs, w.queueURL, w.h.HandleSQS)
	}
}

// queued answers the delivery refs waiting in the queue now, taking them off it.
func (w *world) queued(t *testing.T) []delivery.Message {
	t.Helper()
	ctx := context.Background()
	var out []delivery.Message
	for {
		got, err := w.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &w.queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) == 0 {
			return out
		}
		for _, m := range got.Messages {
			out = append(out, decodeMessage(t, aws.ToString(m.Body)))
			_, _ = w.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &w.queueURL, ReceiptHandle: m.ReceiptHandle})
		}
	}
}

// received is one request a receiver got.
type received struct {
	id, timestamp, signature string
	body                     []byte
}

// receiver is an endpoint on 127.0.0.1 that answers codes in turn (the last one from then on).
type receiver struct {
	mu    sync.Mutex
	got   []received
	codes []int
	srv   *httptest.Server
}

func newReceiver(t testing.TB, codes ...int) *receiver {
	r := &receiver{codes: codes}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Get(signing.HeaderID), req.Header.Get(signing.HeaderTimestamp), req.Header.Get(signing.HeaderSignature), body})
		code := r.codes[min(len(r.got), len(r.codes))-1]
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *receiver) count() int { return len(r.requests()) }

func sqsEvent(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: "m" + string(rune('1'+i)), Body: b})
	}
	return ev
}

// writeEvent puts ev in the outbox as an event-writing transaction does, for events no store here
// writes (a hosted app's).
func (w *world) writeEvent(t testing.TB, ev outbox.Event) {
	t.Helper()
	item, err := attributevalue.MarshalMap(ev)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"pk": "event#" + ev.ID, "sk": "event", "gsi1pk": "undelivered", "gsi1sk": ev.At.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + ev.ID} {
		item[k] = &dynamotypes.AttributeValueMemberS{Value: v}
	}
	if _, err := w.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &w.tables.Events, Item: item}); err != nil {
		t.Fatal(err)
	}
}
