package deliveryplan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/outbox"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func pending() Delivery {
	return NewDelivery(Webhook{ID: "wh_1", Tenant: "ml"}, outbox.Event{ID: "evt_1", Type: outbox.JobQueued}, []byte(`{}`), t0)
}

func TestJudge(t *testing.T) {
	at := t0.Add(time.Second)
	tests := []struct {
		name        string
		outcome     Outcome
		wantStatus  Status
		wantNext    time.Duration // from at; 0 means none
		wantFailing bool
		wantHealthy bool
		wantDisable bool
	}{
		{"200", Outcome{StatusCode: 200}, StatusSucceeded, 0, false, true, false},
		{"204", Outcome{StatusCode: 204}, StatusSucceeded, 0, false, true, false},
		{"connection refused", Outcome{Err: "connection refused"}, StatusPending, 5 * time.Second, true, false, false},
		{"timeout", Outcome{Err: "context deadline exceeded"}, StatusPending, 5 * time.Second, true, false, false},
		{"500", Outcome{StatusCode: 500}, StatusPending, 5 * time.Second, true, false, false},
		{"503", Outcome{StatusCode: 503}, StatusPending, 5 * time.Second, true, false, false},
		{"301", Outcome{StatusCode: 301}, StatusPending, 5 * time.Second, true, false, false},
		{"307", Outcome{StatusCode: 307}, StatusPending, 5 * time.Second, true, false, false},
		{"408", Outcome{StatusCode: 408}, StatusPending, 5 * time.Second, true, false, false},
		{"409", Outcome{StatusCode: 409}, StatusPending, 5 * time.Second, true, false, false},
		{"429", Outcome{StatusCode: 429}, StatusPending, 5 * time.Second, true, false, false},
		{"429 Retry-After 2 min", Outcome{StatusCode: 429, RetryAfter: 2 * time.Minute}, StatusPending, 2 * time.Minute, true, false, false},
		{"429 Retry-After shorter than the schedule", Outcome{StatusCode: 429, RetryAfter: time.Second}, StatusPending, 5 * time.Second, true, false, false},
		{"400", Outcome{StatusCode: 400}, StatusFailed, 0, false, false, false},
		{"401", Outcome{StatusCode: 401}, StatusFailed, 0, false, false, false},
		{"404", Outcome{StatusCode: 404}, StatusFailed, 0, false, false, false},
		{"410", Outcome{StatusCode: 410}, StatusFailed, 0, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(pending(), Webhook{ID: "wh_1"}, tt.outcome, at, 0.5)
			d := v.Delivery
			if d.Status != tt.wantStatus {
				t.Errorf("status = %s, want %s (final reason %q)", d.Status, tt.wantStatus, d.FinalReason)
			}
			var next time.Duration
			if d.NextAttemptAt != nil {
				next = d.NextAttemptAt.Sub(at)
			}
			if next != tt.wantNext {
				t.Errorf("next attempt in %v, want %v", next, tt.wantNext)
			}
			if v.Failing != tt.wantFailing || v.Healthy != tt.wantHealthy || (v.Disable != "") != tt.wantDisable {
				t.Errorf("failing=%v healthy=%v disable=%q; want %v %v %v", v.Failing, v.Healthy, v.Disable, tt.wantFailing, tt.wantHealthy, tt.wantDisable)
			}
			want := []Attempt{{Attempt: 1, At: at, StatusCode: tt.outcome.StatusCode, Error: tt.outcome.Err}}
			if diff := cmp.Diff(want, d.Attempts); diff != "" {
				t.Errorf("attempt log (-want +got):\n%s", diff)
			}
			if d.Status == StatusFailed && d.FinalReason == "" {
				t.Errorf("a failed delivery gives no reason")
			}
		})
	}
}

// TestJudgeFollowsTheSchedule fails one delivery again and again and reads the waits.
func TestJudgeFollowsTheSchedule(t *testing.T) {
	d := pending()
	w := Webhook{ID: "wh_1"}
	at := t0
	var waits []time.Duration
	for range 7 {
		v := Judge(d, w, Outcome{StatusCode: 500}, at, 0.5)
		d = v.Delivery
		fs := v.FailingSince
		w.FailingSince = &fs
		waits = append(waits, d.NextAttemptAt.Sub(at))
		at = *d.NextAttemptAt
	}
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if d.AttemptCount != 7 || len(d.Attempts) != 7 {
		t.Errorf("attempt count %d, log %d; want 7 and 7", d.AttemptCount, len(d.Attempts))
	}
}

func TestJudgeDisablesAnEndpointFailingFiveDays(t *testing.T) {
	since := t0.Add(-GiveUpAfter)
	w := Webhook{ID: "wh_1", FailingSince: &since}
	v := Judge(pending(), w, Outcome{Err: "connection refused"}, t0, 0.5)
	if v.Disable == "" || !strings.Contains(v.Disable, since.Format(time.RFC3339)) {
		t.Errorf("Disable = %q, want a reason naming %s", v.Disable, since.Format(time.RFC3339))
	}
	if v.Delivery.Status != StatusFailed {
		t.Errorf("delivery status = %s, want failed once the webhook is disabled", v.Delivery.Status)
	}
	// A day short of five: still retried, and the run of failures keeps its start.
	since = t0.Add(-4 * 24 * time.Hour)
	w.FailingSince = &since
	v = Judge(pending(), w, Outcome{StatusCode: 502}, t0, 0.5)
	if v.Disable != "" || v.Delivery.Status != StatusPending || !v.FailingSince.Equal(since) {
		t.Errorf("after 4 days: disable %q, status %s, failing since %v; want retried, failing since %v", v.Disable, v.Delivery.Status, v.FailingSince, since)
	}
}

func TestJudgeGivesUpADeliveryAfterFiveDays(t *testing.T) {
	d := pending()
	at := d.Since.Add(GiveUpAfter)
	v := Judge(d, Webhook{ID: "wh_1"}, Outcome{StatusCode: 500}, at, 0.5)
	if v.Delivery.Status != StatusFailed || v.Disable != "" {
		t.Errorf("status %s, disable %q; want the delivery failed and the webhook left alone (its failures began now)", v.Delivery.Status, v.Disable)
	}
	r := v.Delivery.Redeliver(at)
	if r.Status != StatusPending || !r.Due(at, 0) || r.FinalReason != "" || len(r.Attempts) != 1 {
		t.Errorf("Redeliver = %+v; want pending, due now, its log kept", r)
	}
}

func TestJudgeBoundsTheErrorText(t *testing.T) {
	v := Judge(pending(), Webhook{}, Outcome{Err: strings.Repeat("x", 5000)}, t0, 0.5)
	if n := len(v.Delivery.Attempts[0].Error); n != maxErrorText {
		t.Errorf("error text is %d bytes, want %d", n, maxErrorText)
	}
}
