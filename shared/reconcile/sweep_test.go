package reconcile_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/wake"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestSweepRingsRegionsWithQueuedJobs: a job whose submission never rang dispatch is rung for by
// the next beat, and a region with nothing queued is left alone.
func TestSweepRingsRegionsWithQueuedJobs(t *testing.T) {
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	store := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	now := time.Now()
	j := jobs.New("job-stranded", "ml", "team-a", "us-west-2", 50, nil, nil, now)
	if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	h := &reconcile.Handler{
		Regions: []string{"us-east-1", "us-west-2"}, Queues: store, Ringer: wake.New(q, queueURL),
		Jobs: store, Leases: dynamo.NewLeaseStore(db, tables.Control), Log: slog.New(slog.DiscardHandler),
	}
	if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: "beat-1"}); err != nil {
		t.Fatalf("HandleBeat: %v", err)
	}
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range out.Messages {
		bodies = append(bodies, aws.ToString(m.Body))
	}
	if len(bodies) != 1 || bodies[0] != `{"region":"us-west-2"}` {
		t.Errorf("after a beat the dispatch queue holds %q, want one ring for us-west-2", bodies)
	}
}
