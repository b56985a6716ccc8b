package reconcile_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/isolating"
	"github.com/tidegate/tidegate/shared/isolation"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/wake"
)

// A beat whose isolation fails (here its tenants cannot be read: the table is not there) still
// follows and sweeps the regions, logs why, and does not fail: a failed beat would be delivered
// again, following every job twice.
func TestBeatGoesOnWhenIsolationFails(t *testing.T) {
	tables, db := testenv.Tables(t)
	queueURL, q := testenv.Queue(t, "dispatch")
	store := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	now := time.Now()
	j := jobs.New("job-queued", "ml", "team-a", "us-west-2", 50, nil, nil, now)
	if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", now), nil, now); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	h := &reconcile.Handler{
		Regions: []string{"us-west-2"}, Queues: store, Ringer: wake.New(q, queueURL),
		Jobs: store, Leases: dynamo.NewLeaseStore(db, tables.Control), Log: log,
		Isolation: &isolating.Keeper{
			Clusters: []isolation.Cluster{{Regions: []isolation.Region{{Name: "us-west-2", Jobs: 1}}}},
			Tenants:  dynamo.NewTenantStore(db, tables.Control+"-missing"),
			Log:      log,
		},
	}
	if err := h.HandleBeat(ctx, events.EventBridgeEvent{ID: "beat-1"}); err != nil {
		t.Fatalf("HandleBeat with isolation failing = %v; want nil", err)
	}
	if !strings.Contains(logged.String(), "isolation not kept everywhere this beat") || !strings.Contains(logged.String(), "reading tenants") {
		t.Errorf("the beat logged %q; want the isolation failure and its cause", logged.String())
	}
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 {
		t.Errorf("after the beat the dispatch queue holds %d messages; want the sweep's ring for us-west-2", len(out.Messages))
	}
}
