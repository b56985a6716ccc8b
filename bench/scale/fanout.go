package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/signing"
)

// fanOut registers w webhooks of one tenant, every one wanting job.queued, all to one receiver on
// 127.0.0.1 that answers 204, submits one job as the API does (its record and its job.queued event
// in one transaction: not measured), and measures the webhook function's drain that fans the event
// out to the w webhooks and makes each delivery's first attempt.
func (e *env) fanOut(ctx context.Context, w int) ([]row, error) {
	name := fmt.Sprintf("w%d", w)
	t, drop, err := e.tables(ctx, name)
	if err != nil {
		return nil, err
	}
	defer drop()
	q, err := e.queue.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(e.prefix + "-" + name)})
	if err != nil {
		return nil, err
	}
	defer e.queue.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl})
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		got.Add(1)
		rw.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()

	store := dynamo.NewWebhookStore(e.db, t, nil)
	const tenant = "tenant-00"
	for i := range w {
		key, err := signing.NewSecret()
		if err != nil {
			return nil, err
		}
		at := time.Now().Add(-time.Minute)
		wh := deliveryplan.Webhook{ID: fmt.Sprintf("wh_%03d", i), Tenant: tenant, URL: rcv.URL, Events: []outbox.Type{outbox.JobQueued},
			CreatedAt: at, UpdatedAt: at, Secrets: []deliveryplan.Secret{{Key: key}}}
		if err := store.CreateWebhook(ctx, wh, w); err != nil {
			return nil, fmt.Errorf("registering webhook %d of %d: %w", i+1, w, err)
		}
	}
	now := time.Now()
	j := jobs.New("job-fanout", tenant, "team-a", east, 50, nil, nil, now)
	if _, _, err := dynamo.NewJobStore(e.db, t).Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		return nil, fmt.Errorf("submitting the job: %w", err)
	}
	h := &delivery.Handler{
		Outbox: dynamo.NewOutboxStore(e.db, t), Store: store, Queue: delivery.NewQueue(e.queue, *q.QueueUrl),
		Client: egress.NewClient(egress.Options{AllowPrivate: true}), Log: e.log,
	}
	r, err := e.measure("fan-out of one event, first attempts sent", "webhooks", w, func() error { return h.Drain(ctx) })
	if err == nil && got.Load() != int64(w) {
		err = fmt.Errorf("the receiver got %d requests from one event to %d webhooks, want %d", got.Load(), w, w)
	}
	return []row{r}, err
}
