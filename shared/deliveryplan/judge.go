package deliveryplan

import (
	"fmt"
	"time"
)

// Outcome is what one attempt observed.
type Outcome struct {
	StatusCode int           // the answer's status; 0 when none came
	Err        string        // the connection, TLS or timeout error when no answer came
	RetryAfter time.Duration // the answer's Retry-After as a wait, 0 if none
	Latency    time.Duration
}

// Verdict is an attempt judged: the delivery with the attempt logged and its next step set, and
// what the attempt says about the endpoint.
type Verdict struct {
	Delivery Delivery
	// Healthy: the endpoint took the delivery, which ends its run of failures.
	Healthy bool
	// Failing: the attempt failed in a way that counts against the endpoint (no answer, 3xx, 5xx,
	// 408, 409, 429). FailingSince is then the start of the endpoint's run of failures.
	Failing      bool
	FailingSince time.Time
	// Disable, when set, is why the webhook is to be disabled.
	Disable string
}

// GiveUpAfter is how long one delivery, and one endpoint, may keep failing: five days, after
// which the delivery is final and the endpoint disabled.
const GiveUpAfter = 5 * 24 * time.Hour

// maxErrorText bounds the error kept in the delivery log.
const maxErrorText = 300

// Reasons a client reads in the delivery log and on a disabled webhook, kept together.
const (
	reasonGone        = "the endpoint answered 410 Gone at %s"
	reasonFinal4xx    = "the endpoint answered %d; a 4xx other than 408, 409 and 429 is not retried"
	reasonFailingDays = "every attempt since %s failed; after 5 days the webhook is disabled"
	reasonGaveUp      = "no attempt succeeded in 5 days"
	reasonDisabled    = "the webhook was disabled: %s"
)

// Judge logs the attempt that observed o at `at` on d, and decides what follows: success, a retry
// on the schedule (jitter in [0, 1)), or the end of the delivery; and whether w is to be disabled.
func Judge(d Delivery, w Webhook, o Outcome, at time.Time, jitter float64) Verdict {
	at = at.UTC()
	errText := o.Err
	if len(errText) > maxErrorText {
		errText = errText[:maxErrorText]
	}
	d.AttemptCount++
	d.Attempts = append(d.Attempts, Attempt{
		Attempt: d.AttemptCount, At: at, StatusCode: o.StatusCode, Error: errText, LatencyMS: o.Latency.Milliseconds(),
	})
	d.UpdatedAt = at
	code := o.StatusCode
	switch {
	case code >= 200 && code < 300:
		d.Status, d.NextAttemptAt = StatusSucceeded, nil
		return Verdict{Delivery: d, Healthy: true}
	case code == 410:
		reason := fmt.Sprintf(reasonGone, at.Format(time.RFC3339))
		return Verdict{Delivery: d.final(fmt.Sprintf(reasonDisabled, reason)), Disable: reason}
	case code >= 400 && code < 500 && code != 408 && code != 409 && code != 429:
		return Verdict{Delivery: d.final(fmt.Sprintf(reasonFinal4xx, code))}
	}
	v := Verdict{Failing: true, FailingSince: at}
	if w.FailingSince != nil && w.FailingSince.Before(at) {
		v.FailingSince = w.FailingSince.UTC()
	}
	switch {
	case at.Sub(v.FailingSince) >= GiveUpAfter:
		v.Disable = fmt.Sprintf(reasonFailingDays, v.FailingSince.Format(time.RFC3339))
		v.Delivery = d.final(fmt.Sprintf(reasonDisabled, v.Disable))
	case at.Sub(d.Since) >= GiveUpAfter:
		v.Delivery = d.final(reasonGaveUp)
	default:
		next := at.Add(max(Delay(d.AttemptCount, jitter), o.RetryAfter))
		d.NextAttemptAt = &next
		v.Delivery = d
	}
	return v
}

// Abandon ends d without an attempt, for reason (its webhook was deleted or disabled).
func (d Delivery) Abandon(reason string, at time.Time) Delivery {
	d.UpdatedAt = at.UTC()
	return d.final(reason)
}

func (d Delivery) final(reason string) Delivery {
	d.Status, d.FinalReason, d.NextAttemptAt = StatusFailed, reason, nil
	return d
}
