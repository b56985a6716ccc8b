package deliveryplan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/signing"
)

func TestWants(t *testing.T) {
	w := Webhook{ID: "wh_1", Tenant: "ml", Events: []outbox.Type{outbox.JobQueued, outbox.JobFailed}, CreatedAt: t0}
	inA := w
	inA.Namespace = "team-a"
	off := w
	off.Disabled = true
	ev := outbox.Event{ID: "evt_1", Type: outbox.JobQueued, Tenant: "ml", Namespace: "team-a", At: t0.Add(time.Second)}
	other := func(edit func(*outbox.Event)) outbox.Event { e := ev; edit(&e); return e }
	tests := []struct {
		name string
		w    Webhook
		ev   outbox.Event
		want bool
	}{
		{"subscribed type", w, ev, true},
		{"other type", w, other(func(e *outbox.Event) { e.Type = outbox.JobStarted }), false},
		{"other tenant", w, other(func(e *outbox.Event) { e.Tenant = "web" }), false},
		{"namespace matches", inA, ev, true},
		{"namespace differs", inA, other(func(e *outbox.Event) { e.Namespace = "team-b" }), false},
		{"event without namespace, webhook narrowed", inA, other(func(e *outbox.Event) { e.Namespace = "" }), false},
		{"disabled", off, ev, false},
		{"org event, same org", withOrg(w, "acme"), appEvent("acme"), true},
		{"org event, other org", withOrg(w, "acme"), appEvent("globex"), false},
		{"org event, webhook of no org", w, appEvent(""), false},
		{"org event, webhook narrowed to a namespace", withOrg(inA, "acme"), appEvent("acme"), false},
		{"event older than the webhook", w, other(func(e *outbox.Event) { e.At = t0.Add(-time.Second) }), false},
	}
	for _, tt := range tests {
		if got := tt.w.Wants(tt.ev); got != tt.want {
			t.Errorf("%s: Wants = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := Subscribers([]Webhook{w, inA, off}, other(func(e *outbox.Event) { e.Namespace = "team-b" })); len(got) != 1 || got[0].Namespace != "" {
		t.Errorf("Subscribers for team-b = %+v, want only the un-narrowed webhook", got)
	}
}

func withOrg(w Webhook, org string) Webhook {
	w.Org = org
	w.Events = append(w.Events, outbox.AppLive)
	return w
}

func appEvent(org string) outbox.Event {
	return outbox.Event{ID: "evt_app", Type: outbox.AppLive, At: t0.Add(time.Second), Data: map[string]any{"org": org, "app": "chat"}}
}

func TestRotate(t *testing.T) {
	a, b, c := signing.Secret("aaaa"), signing.Secret("bbbb"), signing.Secret("cccc")
	w := Webhook{Secrets: []Secret{{Key: a}}}
	w.Secrets = w.Rotate(b, t0)
	if diff := cmp.Diff([]signing.Secret{b, a}, w.SigningSecrets(t0.Add(time.Hour))); diff != "" {
		t.Errorf("an hour after a rotation, signing secrets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]signing.Secret{b}, w.SigningSecrets(t0.Add(RotationOverlap))); diff != "" {
		t.Errorf("24 h after a rotation, signing secrets (-want +got):\n%s", diff)
	}
	w.Secrets = w.Rotate(c, t0.Add(time.Hour))
	if diff := cmp.Diff([]signing.Secret{c, b}, w.SigningSecrets(t0.Add(2*time.Hour))); diff != "" {
		t.Errorf("after a second rotation, signing secrets (-want +got):\n%s", diff)
	}
}

func TestDeliveryID(t *testing.T) {
	a, b := DeliveryID("evt_01abc", "wh_1"), DeliveryID("evt_01abc", "wh_2")
	if a == b {
		t.Errorf("one event's deliveries to two webhooks share the id %s", a)
	}
	if a != DeliveryID("evt_01abc", "wh_1") {
		t.Errorf("DeliveryID is not stable")
	}
	if !strings.HasPrefix(a, "msg_01abc_") {
		t.Errorf("DeliveryID = %s, want msg_ then the event's id body", a)
	}
	if DeliveryID("evt_01abc", "wh_1") >= DeliveryID("evt_01abd", "wh_1") {
		t.Errorf("a webhook's deliveries do not sort by event id")
	}
}
