package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/signing"
)

func decodeMessage(t *testing.T, body string) delivery.Message {
	t.Helper()
	var m delivery.Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("queue message %q: %v", body, err)
	}
	return m
}

// verify checks a request as a Standard Webhooks receiver would, against secrets.
func verify(t *testing.T, r received, secrets ...signing.Secret) {
	t.Helper()
	if err := signing.Verify(secrets, r.id, r.timestamp, r.signature, r.body, time.Now()); err != nil {
		t.Errorf("signing.Verify refused delivery %s (signature %q): %v", r.id, r.signature, err)
	}
}

func onlyDelivery(t *testing.T, w *world, webhookID string) deliveryplan.Delivery {
	t.Helper()
	ds, _, err := w.store.Deliveries(context.Background(), webhookID, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("webhook %s has %d deliveries, want 1: %+v", webhookID, len(ds), ds)
	}
	return ds[0]
}

func TestJobQueuedReachesTheReceiverSigned(t *testing.T) {
	w := newWorld(t)
	rcv := newReceiver(t, 204)
	hook := w.hook(t, "wh_a", "ml", "", rcv.srv.URL+"/hooks", outbox.JobQueued)
	ev := w.submit(t, "job-1", "ml", "team-a")
	if err := w.queue.RingDrain(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.pump(t, func() bool { return rcv.count() >= 1 })

	got := rcv.requests()[0]
	verify(t, got, hook.Secrets[0].Key)
	var body struct {
		Type      string         `json:"type"`
		Timestamp time.Time      `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatalf("body %s: %v", got.body, err)
	}
	if body.Type != "job.queued" || body.Data["job_id"] != "job-1" || !body.Timestamp.Equal(ev.At) {
		t.Errorf("body = %s, want job.queued for job-1 at %v", got.body, ev.At)
	}
	d := onlyDelivery(t, w, "wh_a")
	if got.id != d.ID || d.Status != deliveryplan.StatusSucceeded || d.AttemptCount != 1 || d.Attempts[0].StatusCode != 204 {
		t.Errorf("delivery = %+v, want webhook-id %s succeeded on its first attempt with 204", d, got.id)
	}
	if has, _ := w.outbox.HasUndelivered(context.Background()); has {
		t.Errorf("the event is still undelivered after its fan-out")
	}
}

// TestFailureThenSuccess: a 500 goes back on the queue with the schedule's 5 s delay, and the
// retry carries the same webhook-id with its own timestamp.
func TestFailureThenSuccess(t *testing.T) {
	w := newWorld(t)
	var log bytes.Buffer
	w.h.Metrics = metrics.NewRecorder(&log, time.Now)
	rcv := newReceiver(t, 500, 200)
	hook := w.hook(t, "wh_a", "ml", "", rcv.srv.URL, outbox.JobQueued)
	w.submit(t, "job-1", "ml", "team-a")
	if err := w.h.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.pump(t, func() bool { return rcv.count() >= 2 })

	got := rcv.requests()
	if got[0].id != got[1].id {
		t.Errorf("webhook-id changed between attempts: %s then %s", got[0].id, got[1].id)
	}
	if got[0].timestamp == got[1].timestamp {
		t.Errorf("both attempts carry webhook-timestamp %s; want each attempt's own", got[0].timestamp)
	}
	for _, r := range got {
		verify(t, r, hook.Secrets[0].Key)
	}
	d := onlyDelivery(t, w, "wh_a")
	if d.Status != deliveryplan.StatusSucceeded || d.AttemptCount != 2 || d.Attempts[0].StatusCode != 500 || d.Attempts[1].StatusCode != 200 {
		t.Errorf("delivery log = %+v, want 500 then 200", d)
	}
	if gap := d.Attempts[1].At.Sub(d.Attempts[0].At); gap < 5*time.Second {
		t.Errorf("the retry came %v after the failure; the schedule says 5 s", gap)
	}
	wh, err := w.store.Webhook(context.Background(), "ml", "wh_a")
	if err != nil || wh.FailingSince != nil {
		t.Errorf("after a success the webhook is failing since %v (%v); want its failures ended", wh.FailingSince, err)
	}
	points, err := metrics.Read(log.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]float64{}
	for _, p := range points {
		counted[p.Metric.Name+" "+p.Dimensions[metrics.DimOutcome]] += p.Values[0]
	}
	if want := map[string]float64{"WebhookAttempts failed": 1, "WebhookAttempts delivered": 1}; !maps.Equal(counted, want) {
		t.Errorf("metrics counted %v, want %v", counted, want)
	}
}

func TestGoneDisablesTheWebhook(t *testing.T) {
	w := newWorld(t)
	rcv := newReceiver(t, 410)
	w.hook(t, "wh_a", "ml", "", rcv.srv.URL, outbox.JobQueued)
	w.submit(t, "job-1", "ml", "team-a")
	if err := w.h.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.pump(t, func() bool { return rcv.count() >= 1 })
	wh, err := w.store.Webhook(context.Background(), "ml", "wh_a")
	if err != nil {
		t.Fatal(err)
	}
	if !wh.Disabled || !strings.Contains(wh.DisabledReason, "410") {
		t.Errorf("after a 410 the webhook is disabled=%v (%q); want disabled naming the 410", wh.Disabled, wh.DisabledReason)
	}
	if d := onlyDelivery(t, w, "wh_a"); d.Status != deliveryplan.StatusFailed || d.NextAttemptAt != nil {
		t.Errorf("delivery = %+v, want failed with no next attempt", d)
	}
	// A disabled webhook gets no new deliveries.
	w.submit(t, "job-2", "ml", "team-a")
	if err := w.h.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	onlyDelivery(t, w, "wh_a")
}

// oneJob is a world whose tenant ml has webhook wh_a for job.queued, to a receiver that answers
// 200, and one job submitted: its event waits in the outbox.
func oneJob(t *testing.T) (*world, *receiver, deliveryplan.Webhook, outbox.Event) {
	t.Helper()
	w := newWorld(t)
	rcv := newReceiver(t, 200)
	hook := w.hook(t, "wh_a", "ml", "", rcv.srv.URL, outbox.JobQueued)
	return w, rcv, hook, w.submit(t, "job-1", "ml", "team-a")
}

// unstorable is a store whose deliveries cannot be stored: a drain that sends and dies before
// storing what it sent.
type unstorable struct{ delivery.Store }

var errStoreDown = errors.New("the store is down")

func (unstorable) RecordSent(context.Context, []deliveryplan.Delivery, []string, time.Time) error {
	return errStoreDown
}

func (unstorable) CreateDelivery(context.Context, deliveryplan.Delivery) (bool, error) {
	return false, errStoreDown
}

// TestCrashBetweenSendAndStore: a drain sends an event's delivery and cannot store it (as if it
// died). The event keeps its place in the outbox, so the next drain sends it again, with the same
// webhook-id for the receiver to drop, stores it and takes the event out; no drain sends it after.
func TestCrashBetweenSendAndStore(t *testing.T) {
	w, rcv, hook, _ := oneJob(t)
	ctx := context.Background()
	dying := *w.h
	dying.Store = unstorable{w.store}
	if err := dying.Drain(ctx); !errors.Is(err, errStoreDown) {
		t.Fatalf("a drain that cannot store answered %v, want the store's error", err)
	}
	if has, err := w.outbox.HasUndelivered(ctx); err != nil || !has {
		t.Fatalf("after a drain that stored nothing HasUndelivered = %v, %v; want true", has, err)
	}
	for range 2 {
		if err := w.h.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := rcv.requests()
	if len(got) != 2 || got[0].id != got[1].id {
		t.Fatalf("the receiver got %d requests (%v), want the same webhook-id twice", len(got), got)
	}
	verify(t, got[1], hook.Secrets[0].Key)
	if d := onlyDelivery(t, w, "wh_a"); d.Status != deliveryplan.StatusSucceeded || d.AttemptCount != 1 || d.ID != got[0].id {
		t.Errorf("delivery = %+v, want %s succeeded on attempt 1", d, got[0].id)
	}
	if has, err := w.outbox.HasUndelivered(ctx); err != nil || has {
		t.Errorf("after the second drain HasUndelivered = %v, %v; want false", has, err)
	}
}

// TestCrashBetweenStoreAndMark: a drain stored an event's delivery and died before taking the
// event out of the outbox. The next drain finds the delivery stored, sends nothing, and takes the
// event out.
func TestCrashBetweenStoreAndMark(t *testing.T) {
	w, rcv, hook, ev := oneJob(t)
	ctx := context.Background()
	now := time.Now()
	sent := deliveryplan.Judge(deliveryplan.NewDelivery(hook, ev, []byte(`{}`), now), hook, deliveryplan.Outcome{StatusCode: 200}, now, 0.5).Delivery
	if err := w.store.RecordSent(ctx, []deliveryplan.Delivery{sent}, nil, now); err != nil {
		t.Fatal(err)
	}
	if err := w.h.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rcv.count(); n != 0 {
		t.Errorf("the next drain sent a stored delivery %d times", n)
	}
	if has, err := w.outbox.HasUndelivered(ctx); err != nil || has {
		t.Errorf("after the drain HasUndelivered = %v, %v; want false", has, err)
	}
}

// TestCrashBetweenClaimAndSend: a retry's worker claims the delivery and dies before sending.
// Nothing is sent while its claim holds; once it runs out the sweep queues the delivery, the next
// worker sends it once, and it is never sent again.
func TestCrashBetweenClaimAndSend(t *testing.T) {
	w, rcv, hook, ev := oneJob(t)
	ctx := context.Background()
	now := time.Now()
	d := deliveryplan.NewDelivery(hook, ev, []byte(`{}`), now)
	ref := dynamo.DeliveryRef{WebhookID: d.WebhookID, DeliveryID: d.ID}
	if err := w.store.RecordSent(ctx, []deliveryplan.Delivery{d}, []string{ev.ID}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.Claim(ctx, d, "dead-worker", now, now, now.Add(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	// Another drain finds nothing to fan out, and the claim keeps every other worker off.
	if err := w.h.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := w.h.Attempt(ctx, ref); err != nil {
			t.Fatal(err)
		}
		if n := rcv.count(); n != 0 {
			t.Fatalf("sent %d times under another worker's claim", n)
		}
	}
	sweep := &delivery.Sweeper{Outbox: w.outbox, Due: w.store, Queue: w.queue, Now: func() time.Time { return now.Add(30 * time.Second) }}
	if err := sweep.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if msgs := w.queued(t); len(msgs) != 0 {
		t.Errorf("the sweep queued %+v while the claim held", msgs)
	}
	later := now.Add(2*time.Minute + time.Second)
	sweep.Now = func() time.Time { return later }
	if err := sweep.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := w.queued(t)
	if len(msgs) != 1 || msgs[0].DeliveryID != ref.DeliveryID {
		t.Fatalf("after the claim ran out the sweep queued %+v, want the delivery", msgs)
	}
	w.h.Now = func() time.Time { return later }
	for range 2 {
		if err := w.h.Attempt(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	if got := rcv.requests(); len(got) != 1 {
		t.Fatalf("the receiver got %d requests, want exactly 1", len(got))
	} else {
		verify(t, got[0], hook.Secrets[0].Key)
	}
	if d := onlyDelivery(t, w, "wh_a"); d.Status != deliveryplan.StatusSucceeded || d.AttemptCount != 1 {
		t.Errorf("delivery = %+v, want succeeded on attempt 1", d)
	}
	if err := sweep.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if msgs := w.queued(t); len(msgs) != 0 {
		t.Errorf("after success the sweep queued %+v", msgs)
	}
}

// TestLongWaitIsKeptForTheSweep: a wait longer than SQS holds a message (the third failure's
// 30 min) stays on the delivery, in the due index, until the sweep's time comes.
func TestLongWaitIsKeptForTheSweep(t *testing.T) {
	w := newWorld(t)
	rcv := newReceiver(t, 503)
	w.hook(t, "wh_a", "ml", "", rcv.srv.URL, outbox.JobQueued)
	w.submit(t, "job-1", "ml", "team-a")
	ctx := context.Background()
	if err := w.h.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	d := onlyDelivery(t, w, "wh_a")
	ref := dynamo.DeliveryRef{WebhookID: "wh_a", DeliveryID: d.ID}
	at := time.Now()
	for _, wait := range []time.Duration{0, 5 * time.Second, 5 * time.Minute} {
		at = at.Add(wait)
		w.h.Now = func() time.Time { return at }
		if err := w.h.Attempt(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	d = onlyDelivery(t, w, "wh_a")
	if d.AttemptCount != 3 || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(at.Add(30*time.Minute).UTC()) {
		t.Fatalf("after three 503s: %d attempts, next at %v; want 3, next in 30 min", d.AttemptCount, d.NextAttemptAt)
	}
	if due, _ := w.store.Due(ctx, at.Add(29*time.Minute), 10); len(due) != 0 {
		t.Errorf("due before its time: %v", due)
	}
	w.h.Now = func() time.Time { return at.Add(20 * time.Minute) }
	if err := w.h.Attempt(ctx, ref); err != nil || rcv.count() != 3 {
		t.Errorf("an early message sent attempt 4 (%d requests, %v); want it left for its time", rcv.count(), err)
	}
	if due, _ := w.store.Due(ctx, at.Add(31*time.Minute), 10); len(due) != 1 || due[0] != ref {
		t.Errorf("due at its time: %v, want the delivery", due)
	}
	wh, err := w.store.Webhook(ctx, "ml", "wh_a")
	if err != nil || wh.FailingSince == nil {
		t.Errorf("the failing webhook has failing_since %v (%v); want the first failure's time", wh.FailingSince, err)
	}
}

func TestNamespaceFilterAndTenantIsolation(t *testing.T) {
	w := newWorld(t)
	onlyA, allML, web := newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200)
	w.hook(t, "wh_a", "ml", "team-a", onlyA.srv.URL, outbox.JobQueued)
	w.hook(t, "wh_ml", "ml", "", allML.srv.URL, outbox.JobQueued)
	w.hook(t, "wh_web", "web", "", web.srv.URL, outbox.JobQueued)
	w.hook(t, "wh_other_type", "ml", "", allML.srv.URL, outbox.JobFailed)
	w.submit(t, "job-ml-a", "ml", "team-a")
	w.submit(t, "job-ml-b", "ml", "team-b")
	w.submit(t, "job-web-a", "web", "team-a")
	if err := w.queue.RingDrain(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.pump(t, func() bool { return onlyA.count() >= 1 && allML.count() >= 2 && web.count() >= 1 })
	jobsOf := func(r *receiver) []string {
		var out []string
		for _, req := range r.requests() {
			var b struct {
				Data struct {
					JobID string `json:"job_id"`
				} `json:"data"`
			}
			_ = json.Unmarshal(req.body, &b)
			out = append(out, b.Data.JobID)
		}
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		name string
		r    *receiver
		want []string
	}{
		{"ml, team-a only", onlyA, []string{"job-ml-a"}},
		{"ml, any namespace", allML, []string{"job-ml-a", "job-ml-b"}},
		{"web", web, []string{"job-web-a"}},
	} {
		if got := jobsOf(tt.r); !slices.Equal(got, tt.want) {
			t.Errorf("%s received %v, want %v", tt.name, got, tt.want)
		}
	}
	if ds, _, _ := w.store.Deliveries(context.Background(), "wh_other_type", 10, ""); len(ds) != 0 {
		t.Errorf("a job.failed webhook got deliveries of job.queued: %+v", ds)
	}
}

func TestHandleSQSRefusesMessagesNamingNothing(t *testing.T) {
	w := newWorld(t)
	resp, err := w.h.HandleSQS(context.Background(), sqsEvent(`{"drain":true}`, `not json`, `{}`, `{"webhook_id":"wh_a"}`, `{"event_id":"evt_1"}`))
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	slices.Sort(failed)
	if want := []string{"m2", "m3", "m4"}; !slices.Equal(failed, want) {
		t.Errorf("batch item failures = %v, want %v", failed, want)
	}
}

// TestBeatRingsForWaitingEvents: an event whose ring was lost is rung for by the next beat.
func TestBeatRingsForWaitingEvents(t *testing.T) {
	w := newWorld(t)
	ev := w.submit(t, "job-1", "ml", "team-a")
	var log bytes.Buffer
	rec := metrics.NewRecorder(&log, time.Now)
	// The beat runs 90 s after the event, 2 s after its schedule's time.
	now := func() time.Time { return ev.At.Add(90 * time.Second) }
	beat := &reconcile.Handler{
		Leases: dynamo.NewLeaseStore(w.db, w.tables.Control), Log: slog.New(slog.DiscardHandler), Now: now, Metrics: rec,
		Webhooks: &delivery.Sweeper{Outbox: w.outbox, Due: w.store, Queue: w.queue, Now: now, Metrics: rec},
	}
	if err := beat.HandleBeat(context.Background(), events.EventBridgeEvent{ID: "beat-1", Time: now().Add(-2 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if msgs := w.queued(t); len(msgs) != 1 || !msgs[0].Drain {
		t.Errorf("after a beat the webhook queue holds %+v, want one drain", msgs)
	}
	points, err := metrics.Read(log.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, p := range points {
		got[p.Metric.Name] = p.Values[0]
	}
	want := map[string]float64{"OldestUndeliveredAge": 90, "BeatDuration": 0, "BeatLateness": 2000}
	if !maps.Equal(got, want) {
		t.Errorf("the beat recorded %v, want %v", got, want)
	}
}

// TestOrgEventsReachTheOrgsTenants: a hosted app's event names its org, not a tenant; it goes to
// the webhooks of every tenant of that org that want it, and to no other org's.
func TestOrgEventsReachTheOrgsTenants(t *testing.T) {
	w := newWorld(t)
	ml, web, other := newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200)
	for _, h := range []struct {
		id, tenant, org string
		r               *receiver
	}{{"wh_ml", "ml", "acme", ml}, {"wh_web", "web", "acme", web}, {"wh_other", "shop", "globex", other}} {
		w.register(t, deliveryplan.Webhook{ID: h.id, Tenant: h.tenant, Org: h.org, URL: h.r.srv.URL, Events: []outbox.Type{outbox.AppLive}})
	}
	w.writeEvent(t, outbox.ForApp(outbox.AppLive, "acme", "chat", 3, "chat-3", "", time.Now()))
	if err := w.queue.RingDrain(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.pump(t, func() bool { return ml.count() >= 1 && web.count() >= 1 })
	if other.count() != 0 {
		t.Errorf("another org's webhook received the app event")
	}
	if err := w.store.DeleteWebhook(context.Background(), "web", "wh_web"); err != nil {
		t.Fatal(err)
	}
	if tenants, err := w.store.OrgTenants(context.Background(), "acme"); err != nil || !slices.Equal(tenants, []string{"ml"}) {
		t.Errorf("after deleting web's webhook OrgTenants(acme) = %v, %v; want [ml]", tenants, err)
	}
}
