package deliveryplan

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/outbox"
)

func TestOrder(t *testing.T) {
	evs := []outbox.Event{
		{ID: "evt_c", At: t0.Add(2 * time.Millisecond)},
		{ID: "evt_b", At: t0},
		{ID: "evt_d", At: t0.Add(time.Millisecond)},
		{ID: "evt_a", At: t0},
		// The outbox's index key drops trailing zeros, so .1Z sorted after .12Z there.
		{ID: "evt_f", At: t0.Add(120 * time.Millisecond)},
		{ID: "evt_e", At: t0.Add(100 * time.Millisecond)},
	}
	Order(evs)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.ID)
	}
	if diff := cmp.Diff([]string{"evt_a", "evt_b", "evt_d", "evt_c", "evt_e", "evt_f"}, got); diff != "" {
		t.Errorf("Order (-want +got):\n%s", diff)
	}
}

func TestLines(t *testing.T) {
	d := func(webhook string, n int) Delivery {
		return Delivery{ID: fmt.Sprintf("%s-%d", webhook, n), WebhookID: webhook}
	}
	got := Lines([]Delivery{d("b", 1), d("a", 1), d("b", 2), d("c", 1), d("a", 2), d("b", 3)})
	want := [][]Delivery{{d("b", 1), d("b", 2), d("b", 3)}, {d("a", 1), d("a", 2)}, {d("c", 1)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Lines (-want +got):\n%s", diff)
	}
	if got := Lines(nil); len(got) != 0 {
		t.Errorf("Lines(nil) = %v, want none", got)
	}
}

func TestBehind(t *testing.T) {
	at := t0.Add(time.Second)
	later := NewDelivery(Webhook{ID: "wh_1", Tenant: "ml"}, outbox.Event{ID: "evt_2", Type: outbox.JobStarted}, []byte(`{}`), t0)
	retry := at.Add(5 * time.Second)
	askedLater := at.Add(2 * time.Hour)
	since := at.Add(-GiveUpAfter)
	tests := []struct {
		name     string
		outcome  Outcome
		webhook  Webhook
		wantSend bool
		wantNext *time.Time
		wantEnd  bool
	}{
		{"200: the line goes on", Outcome{StatusCode: 200}, Webhook{ID: "wh_1"}, true, later.NextAttemptAt, false},
		{"400: that event's own end, the line goes on", Outcome{StatusCode: 400}, Webhook{ID: "wh_1"}, true, later.NextAttemptAt, false},
		{"503: waits for the retry", Outcome{StatusCode: 503}, Webhook{ID: "wh_1"}, false, &retry, false},
		{"no answer: waits for the retry", Outcome{Err: "connection refused"}, Webhook{ID: "wh_1"}, false, &retry, false},
		{"429 with Retry-After: waits as asked", Outcome{StatusCode: 429, RetryAfter: 2 * time.Hour}, Webhook{ID: "wh_1"}, false, &askedLater, false},
		{"410: ends with the webhook", Outcome{StatusCode: 410}, Webhook{ID: "wh_1"}, false, nil, true},
		{"five days failing: ends with the webhook", Outcome{StatusCode: 500}, Webhook{ID: "wh_1", FailingSince: &since}, false, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(pending(), tt.webhook, tt.outcome, at, 0.5)
			got, send := v.Behind(later, at)
			if send != tt.wantSend {
				t.Fatalf("send = %v, want %v", send, tt.wantSend)
			}
			if got.AttemptCount != 0 || len(got.Attempts) != 0 {
				t.Errorf("a delivery behind the attempt gained attempts: %+v", got.Attempts)
			}
			if !equalTime(got.NextAttemptAt, tt.wantNext) {
				t.Errorf("next attempt = %v, want %v", got.NextAttemptAt, tt.wantNext)
			}
			if ended := got.Status == StatusFailed; ended != tt.wantEnd || (ended && got.FinalReason == "") {
				t.Errorf("status %s (%q), want ended=%v with a reason", got.Status, got.FinalReason, tt.wantEnd)
			}
		})
	}
}

func equalTime(a, b *time.Time) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && a.Equal(*b))
}
