package dynamo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/signing"
)

func newHook(t *testing.T, id, tenant string, now time.Time) deliveryplan.Webhook {
	t.Helper()
	key, err := signing.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return deliveryplan.Webhook{
		ID: id, Tenant: tenant, URL: "https://hooks.example.com/" + id, Events: []outbox.Type{outbox.JobQueued},
		CreatedAt: now, UpdatedAt: now, Secrets: []deliveryplan.Secret{{Key: key}},
	}
}

func TestWebhookStore(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewWebhookStore(db, tables, testenv.Keyring(t, db, tables.Control))
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	a := newHook(t, "wh_a", "ml", now)
	if err := s.CreateWebhook(ctx, a, 2); err != nil {
		t.Fatalf("CreateWebhook: %v", err)
	}
	if err := s.CreateWebhook(ctx, a, 2); !errors.Is(err, dynamo.ErrExists) {
		t.Errorf("creating wh_a again = %v, want ErrExists", err)
	}
	got, err := s.Webhook(ctx, "ml", "wh_a")
	if err != nil {
		t.Fatalf("Webhook(ml, wh_a): %v", err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("Webhook(ml, wh_a) (-want +got):\n%s", diff)
	}
	if _, err := s.Webhook(ctx, "web", "wh_a"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("another tenant's Webhook(web, wh_a) = %v, want ErrNotFound", err)
	}
	if err := s.DeleteWebhook(ctx, "web", "wh_a"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("another tenant's DeleteWebhook = %v, want ErrNotFound", err)
	}

	raw, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tables.Control), Key: key("webhook#wh_a", "webhook")})
	if err != nil {
		t.Fatal(err)
	}
	if text := fmt.Sprint(raw.Item); bytes.Contains([]byte(text), []byte(a.Secrets[0].Key.String()[6:])) {
		t.Errorf("the stored item holds the secret in the clear: %s", text)
	}
	if _, err := dynamo.NewWebhookStore(db, tables, nil).Webhook(ctx, "ml", "wh_a"); err == nil {
		t.Errorf("a store without the key opened a sealed secret")
	}

	if err := s.CreateWebhook(ctx, newHook(t, "wh_b", "ml", now), 2); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWebhook(ctx, newHook(t, "wh_c", "ml", now), 2); !errors.Is(err, dynamo.ErrLimit) {
		t.Errorf("a third webhook with a limit of 2 = %v, want ErrLimit", err)
	}
	page, next, err := s.Webhooks(ctx, "ml", 1, "")
	if err != nil || len(page) != 1 || page[0].ID != "wh_a" || next == "" {
		t.Fatalf("Webhooks(limit 1) = %v, %q, %v; want wh_a and a cursor", page, next, err)
	}
	page, next, err = s.Webhooks(ctx, "ml", 1, next)
	if err != nil || len(page) != 1 || page[0].ID != "wh_b" || next != "" {
		t.Errorf("Webhooks(after wh_a) = %v, %q, %v; want wh_b and no cursor", page, next, err)
	}

	fresh, _ := signing.NewSecret()
	got.Secrets = got.Rotate(fresh, now)
	if err := s.SetSecrets(ctx, got, now); err != nil {
		t.Fatalf("SetSecrets: %v", err)
	}
	if err := s.MarkFailing(ctx, "wh_a", now); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkFailing(ctx, "wh_a", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Disable(ctx, "wh_a", "gone", now); err != nil {
		t.Fatal(err)
	}
	after, err := s.Webhook(ctx, "ml", "wh_a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]signing.Secret{fresh, a.Secrets[0].Key}, after.SigningSecrets(now)); diff != "" {
		t.Errorf("secrets after a rotation (-want +got):\n%s", diff)
	}
	if after.FailingSince == nil || !after.FailingSince.Equal(now) || !after.Disabled || after.DisabledReason != "gone" {
		t.Errorf("after MarkFailing twice and Disable: failing since %v, disabled %v %q; want %v, true, gone", after.FailingSince, after.Disabled, after.DisabledReason, now)
	}
	if err := s.MarkHealthy(ctx, "wh_a"); err != nil {
		t.Fatal(err)
	}
	if after, _ = s.Webhook(ctx, "ml", "wh_a"); after.FailingSince != nil {
		t.Errorf("after MarkHealthy failing since %v, want none", after.FailingSince)
	}
	if err := s.DeleteWebhook(ctx, "ml", "wh_a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Webhook(ctx, "ml", "wh_a"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("after delete Webhook = %v, want ErrNotFound", err)
	}
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
}

func TestDeliveryClaims(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewWebhookStore(db, tables, nil)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	w := newHook(t, "wh_a", "ml", now)
	ev := outbox.Event{ID: "evt_1", Type: outbox.JobQueued, Tenant: "ml", At: now}
	d := deliveryplan.NewDelivery(w, ev, []byte(`{"type":"job.queued"}`), now)
	for i, want := range []bool{true, false} {
		if made, err := s.CreateDelivery(ctx, d); err != nil || made != want {
			t.Errorf("CreateDelivery #%d = %v, %v; want %v", i+1, made, err, want)
		}
	}
	due, err := s.Due(ctx, now.Add(time.Second), 10)
	if err != nil || len(due) != 1 || due[0] != (dynamo.DeliveryRef{WebhookID: "wh_a", DeliveryID: d.ID}) {
		t.Errorf("Due = %v, %v; want the new delivery", due, err)
	}

	claimed, err := s.Claim(ctx, d, "tok-1", now, now, now.Add(time.Minute))
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if diff := cmp.Diff(d, claimed); diff != "" {
		t.Errorf("Claim answered (-want +got):\n%s", diff)
	}
	if _, err := s.Claim(ctx, d, "tok-2", now.Add(time.Second), now.Add(time.Second), now.Add(time.Minute)); !errors.Is(err, records.ErrStale) {
		t.Errorf("a second claim while the first holds = %v, want ErrStale", err)
	}
	if due, _ := s.Due(ctx, now.Add(time.Second), 10); len(due) != 0 {
		t.Errorf("Due while claimed = %v, want none until the claim runs out", due)
	}
	// The first worker died: its claim runs out, the sweep sees the delivery, another worker claims it.
	if due, _ := s.Due(ctx, now.Add(2*time.Minute), 10); len(due) != 1 {
		t.Errorf("Due after the claim ran out = %v, want the delivery", due)
	}
	if _, err := s.Claim(ctx, d, "tok-3", now.Add(2*time.Minute), now.Add(2*time.Minute), now.Add(3*time.Minute)); err != nil {
		t.Fatalf("claiming after the first claim ran out: %v", err)
	}
	if err := s.Record(ctx, d, "tok-1"); !errors.Is(err, records.ErrStale) {
		t.Errorf("Record with the lost claim's token = %v, want ErrStale", err)
	}
	v := deliveryplan.Judge(d, w, deliveryplan.Outcome{StatusCode: 200}, now.Add(2*time.Minute), 0.5)
	if err := s.Record(ctx, v.Delivery, "tok-3"); err != nil {
		t.Fatalf("Record: %v", err)
	}
	if _, err := s.Claim(ctx, v.Delivery, "tok-4", now.Add(time.Hour), now.Add(time.Hour), now.Add(2*time.Hour)); !errors.Is(err, records.ErrStale) {
		t.Errorf("claiming a delivered delivery = %v, want ErrStale: it is never sent again", err)
	}
	if due, _ := s.Due(ctx, now.Add(time.Hour), 10); len(due) != 0 {
		t.Errorf("Due after success = %v, want none", due)
	}
	got, err := s.Delivery(ctx, "wh_a", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v.Delivery, got); diff != "" {
		t.Errorf("Delivery after Record (-want +got):\n%s", diff)
	}

	again := got.Redeliver(now.Add(3 * time.Hour))
	if err := s.Replace(ctx, again, got.AttemptCount+1, now.Add(3*time.Hour)); !errors.Is(err, records.ErrStale) {
		t.Errorf("Replace expecting the wrong attempt count = %v, want ErrStale", err)
	}
	if err := s.Replace(ctx, again, got.AttemptCount, now.Add(3*time.Hour)); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if due, _ := s.Due(ctx, now.Add(3*time.Hour+time.Second), 10); len(due) != 1 {
		t.Errorf("Due after a redelivery = %v, want it", due)
	}
	if _, err := s.Claim(ctx, again, "tok-5", now.Add(time.Minute), now.Add(time.Minute), now.Add(2*time.Minute)); !errors.Is(err, records.ErrStale) {
		t.Errorf("claiming before its time = %v, want ErrStale", err)
	}
}

func TestDeliveriesNewestFirst(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewWebhookStore(db, tables, nil)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	w := newHook(t, "wh_a", "ml", now)
	var ids []string
	for i := range 3 {
		ev := outbox.Event{ID: fmt.Sprintf("evt_%d", i), Type: outbox.JobQueued, Tenant: "ml", At: now}
		d := deliveryplan.NewDelivery(w, ev, []byte(`{}`), now)
		if _, err := s.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		ids = append([]string{d.ID}, ids...)
	}
	var got []string
	cursor := ""
	for range 3 {
		page, next, err := s.Deliveries(ctx, "wh_a", 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page {
			got = append(got, d.ID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("deliveries in pages of 2 (-want +got):\n%s", diff)
	}
	if page, _, _ := s.Deliveries(ctx, "wh_b", 10, ""); len(page) != 0 {
		t.Errorf("another webhook's deliveries = %v, want none", page)
	}
}

func TestOutboxUndelivered(t *testing.T) {
	tables, db := testenv.Tables(t)
	jobStore := dynamo.NewJobStore(db, tables)
	o := dynamo.NewOutboxStore(db, tables)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	if has, err := o.HasUndelivered(ctx); err != nil || has {
		t.Errorf("HasUndelivered on an empty outbox = %v, %v", has, err)
	}
	var want []string
	for i := range 3 {
		j := jobs.New(fmt.Sprintf("job-%d", i), "ml", "team-a", "us-east-1", 50, nil, nil, now.Add(time.Duration(i)*time.Second))
		ev := jobs.Event(outbox.JobQueued, j, "", j.CreatedAt)
		if _, _, err := jobStore.Create(ctx, j, ev, nil, j.CreatedAt); err != nil {
			t.Fatal(err)
		}
		want = append(want, ev.ID)
	}
	var got []string
	cursor := ""
	for {
		evs, next, err := o.Undelivered(ctx, 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			got = append(got, ev.ID)
			if ev.Tenant != "ml" || ev.Namespace != "team-a" || ev.Type != outbox.JobQueued {
				t.Errorf("event %s read back as %+v", ev.ID, ev)
			}
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("undelivered, oldest first (-want +got):\n%s", diff)
	}
	for _, id := range want {
		if err := o.MarkFannedOut(ctx, id, now); err != nil {
			t.Fatal(err)
		}
	}
	if has, err := o.HasUndelivered(ctx); err != nil || has {
		t.Errorf("HasUndelivered after marking all = %v, %v; want false", has, err)
	}
}

// TestRecordSent: one transaction writes a drain's attempted deliveries, as their attempts left
// them, and takes the events out of the undelivered index; a second record of the same events, or
// of a delivery stored already, writes nothing. Stored tells which deliveries are stored.
func TestRecordSent(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewWebhookStore(db, tables, nil)
	o := dynamo.NewOutboxStore(db, tables)
	jobStore := dynamo.NewJobStore(db, tables)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	a, b := newHook(t, "wh_a", "ml", now), newHook(t, "wh_b", "ml", now)
	var sent []deliveryplan.Delivery
	var events []string
	for i := range 2 {
		j := jobs.New(fmt.Sprintf("job-%d", i), "ml", "team-a", "us-east-1", 50, nil, nil, now)
		ev := jobs.Event(outbox.JobQueued, j, "", now.Add(time.Duration(i)*time.Millisecond))
		if _, _, err := jobStore.Create(ctx, j, ev, nil, now); err != nil {
			t.Fatal(err)
		}
		events = append(events, ev.ID)
		sent = append(sent,
			deliveryplan.Judge(deliveryplan.NewDelivery(a, ev, []byte(`{}`), now), a, deliveryplan.Outcome{StatusCode: 204}, now, 0.5).Delivery,
			deliveryplan.Judge(deliveryplan.NewDelivery(b, ev, []byte(`{}`), now), b, deliveryplan.Outcome{StatusCode: 500}, now, 0.5).Delivery)
	}
	if stored, err := s.Stored(ctx, sent); err != nil || len(stored) != 0 {
		t.Fatalf("Stored before RecordSent = %v, %v; want none", stored, err)
	}
	if err := s.RecordSent(ctx, sent, events, now); err != nil {
		t.Fatalf("RecordSent: %v", err)
	}
	if has, err := o.HasUndelivered(ctx); err != nil || has {
		t.Errorf("after RecordSent HasUndelivered = %v, %v; want false", has, err)
	}
	for _, want := range sent {
		got, err := s.Delivery(ctx, want.WebhookID, want.ID)
		if err != nil || got.Status != want.Status || got.AttemptCount != 1 {
			t.Errorf("after RecordSent %s reads %+v, %v; want %s with 1 attempt", want.ID, got, err, want.Status)
		}
	}
	// The failed attempts wait for their retries in the due index, unclaimed.
	retry := *sent[1].NextAttemptAt
	if due, _ := s.Due(ctx, retry.Add(time.Second), 10); len(due) != 2 || due[0].WebhookID != "wh_b" || due[1].WebhookID != "wh_b" {
		t.Errorf("Due after the retries' time = %v, want wh_b's 2 deliveries", due)
	}
	if _, err := s.Claim(ctx, sent[1], "tok-1", retry, retry, retry.Add(90*time.Second)); err != nil {
		t.Errorf("claiming a recorded pending delivery: %v", err)
	}

	fresh := deliveryplan.NewDelivery(a, outbox.Event{ID: "evt_x", Type: outbox.JobQueued, Tenant: "ml", At: now}, []byte(`{}`), now)
	stored, err := s.Stored(ctx, append([]deliveryplan.Delivery{fresh}, sent...))
	if err != nil || len(stored) != len(sent) || stored[fresh.ID] {
		t.Errorf("Stored = %v, %v; want the %d recorded and not %s", stored, err, len(sent), fresh.ID)
	}
	if err := s.RecordSent(ctx, []deliveryplan.Delivery{fresh, sent[0]}, nil, now); !errors.Is(err, records.ErrStale) {
		t.Errorf("recording a stored delivery again = %v, want ErrStale", err)
	}
	if err := s.RecordSent(ctx, []deliveryplan.Delivery{fresh}, events[:1], now); !errors.Is(err, records.ErrStale) {
		t.Errorf("taking an event out of the index again = %v, want ErrStale", err)
	}
	if _, err := s.Delivery(ctx, "wh_a", fresh.ID); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("a refused RecordSent stored %s: %v", fresh.ID, err)
	}
	if err := s.RecordSent(ctx, []deliveryplan.Delivery{fresh}, nil, now); err != nil {
		t.Errorf("RecordSent of a new delivery alone: %v", err)
	}
	if made, err := s.CreateDelivery(ctx, fresh); err != nil || made {
		t.Errorf("CreateDelivery of a recorded delivery = %v, %v; want false", made, err)
	}
}

func TestDrainLease(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewWebhookStore(db, tables, nil)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	steps := []struct {
		owner string
		at    time.Time
		want  bool
	}{
		{"drain-1", now, true},
		{"drain-2", now.Add(time.Second), false},
		{"drain-2", now.Add(91 * time.Second), true}, // drain-1 died; its lease ran out
		{"drain-1", now.Add(92 * time.Second), false},
	}
	for _, st := range steps {
		if got, err := s.TakeDrain(ctx, st.owner, st.at, st.at.Add(90*time.Second)); err != nil || got != st.want {
			t.Errorf("TakeDrain(%s) at +%v = %v, %v; want %v", st.owner, st.at.Sub(now), got, err, st.want)
		}
	}
	if err := s.ReleaseDrain(ctx, "drain-1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TakeDrain(ctx, "drain-3", now.Add(93*time.Second), now.Add(time.Hour)); got {
		t.Errorf("a release by a drain that no longer held the lease freed it")
	}
	if err := s.ReleaseDrain(ctx, "drain-2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TakeDrain(ctx, "drain-3", now.Add(93*time.Second), now.Add(time.Hour)); !got {
		t.Errorf("after its holder released it the lease could not be taken")
	}
}
