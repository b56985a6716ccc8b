package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/signing"
)

const (
	// claimLease outlasts the webhook function's 60 s timeout: a claim never runs out while the
	// worker that took it may still be sending, and a dead worker's claim is taken again after it.
	claimLease = 90 * time.Second
	// dueSlack lets a delayed message that arrives a moment before its delivery's time still
	// attempt it, rather than wait a beat for the sweep.
	dueSlack = 2 * time.Second
	// userAgent names the sender to receivers' logs.
	userAgent = "Tidegate-Webhooks/1"
)

// Reasons a delivery ends without an attempt, as its log shows them.
const (
	reasonWebhookGone     = "the webhook was deleted"
	reasonWebhookDisabled = "the webhook is disabled: %s"
)

// Attempt makes the next attempt of one delivery, if it is due: claim it (one conditional write,
// so no two workers send the same attempt and a delivered one is never sent again), send it
// signed, log the attempt with what follows, and queue the retry when it is near enough for SQS.
// A crash after the claim leaves a claim that runs out; the sweep then queues the delivery again.
func (h *Handler) Attempt(ctx context.Context, ref dynamo.DeliveryRef) error {
	now := h.now()
	d, err := h.Store.Delivery(ctx, ref.WebhookID, ref.DeliveryID)
	if errors.Is(err, records.ErrNotFound) {
		return nil
	}
	if err != nil || !d.Due(now, dueSlack) {
		return err
	}
	w, err := h.Store.Webhook(ctx, d.Tenant, d.WebhookID)
	switch {
	case errors.Is(err, records.ErrNotFound):
		return h.abandon(ctx, d, reasonWebhookGone, now)
	case err != nil:
		return err
	case w.Disabled:
		return h.abandon(ctx, d, fmt.Sprintf(reasonWebhookDisabled, w.DisabledReason), now)
	}
	token := ids.New("claim_", now)
	d, err = h.Store.Claim(ctx, d, token, now, now.Add(dueSlack), now.Add(claimLease))
	if errors.Is(err, records.ErrStale) {
		return nil // another worker has this attempt, or made it
	}
	if err != nil {
		return err
	}
	v := h.judged(ctx, d, w, h.send(ctx, w, d, now), now)
	return h.finish(ctx, w, v, token, now)
}

// finish logs a judged attempt made under the claim token, then carries it over.
func (h *Handler) finish(ctx context.Context, w deliveryplan.Webhook, v deliveryplan.Verdict, token string, now time.Time) error {
	if err := h.Store.Record(ctx, v.Delivery, token); err != nil {
		if errors.Is(err, records.ErrStale) {
			h.Log.WarnContext(ctx, "attempt outlived its claim; not logged", "delivery_id", v.Delivery.ID)
			return nil
		}
		return err
	}
	return h.carryOver(ctx, w, v, now)
}

// carryOver carries a stored attempt's verdict over to the webhook and queues the retry when it
// is near enough for SQS.
func (h *Handler) carryOver(ctx context.Context, w deliveryplan.Webhook, v deliveryplan.Verdict, now time.Time) error {
	if err := h.endpointHealth(ctx, w, v, now); err != nil {
		return err
	}
	return h.scheduleRetry(ctx, v.Delivery)
}

// scheduleRetry queues a pending delivery's next attempt when SQS can hold it that long; a longer
// wait is kept in the due index for the sweep, as is this one if the send fails.
func (h *Handler) scheduleRetry(ctx context.Context, d deliveryplan.Delivery) error {
	if d.Status != deliveryplan.StatusPending || d.NextAttemptAt == nil {
		return nil
	}
	wait := d.NextAttemptAt.Sub(h.now())
	if wait > MaxQueueDelay {
		return nil
	}
	ref := dynamo.DeliveryRef{WebhookID: d.WebhookID, DeliveryID: d.ID}
	if err := h.Queue.Send(ctx, wait, ref); err != nil {
		h.Log.WarnContext(ctx, "retry not queued; the sweep will", "delivery_id", d.ID, "err", err)
	}
	return nil
}

// endpointHealth carries the verdict over to the webhook: a success ends its run of failures, a
// failure starts one, and a 410 or five days of failures disable it.
func (h *Handler) endpointHealth(ctx context.Context, w deliveryplan.Webhook, v deliveryplan.Verdict, now time.Time) error {
	var errs []error
	if v.Healthy && w.FailingSince != nil {
		errs = append(errs, h.Store.MarkHealthy(ctx, w.ID))
	}
	if v.Failing && w.FailingSince == nil {
		errs = append(errs, h.Store.MarkFailing(ctx, w.ID, v.FailingSince))
	}
	if v.Disable != "" {
		h.Log.WarnContext(ctx, "webhook disabled", "webhook_id", w.ID, "reason", v.Disable)
		errs = append(errs, h.Store.Disable(ctx, w.ID, v.Disable, now))
	}
	return errors.Join(errs...)
}

func (h *Handler) abandon(ctx context.Context, d deliveryplan.Delivery, reason string, now time.Time) error {
	err := h.Store.Replace(ctx, d.Abandon(reason, now), d.AttemptCount, now)
	if errors.Is(err, records.ErrStale) {
		return nil
	}
	return err
}

// send posts d's payload to w, signed for the attempt at `at`, and answers what came back.
func (h *Handler) send(ctx context.Context, w deliveryplan.Webhook, d deliveryplan.Delivery, at time.Time) deliveryplan.Outcome {
	secrets := w.SigningSecrets(at)
	if len(secrets) == 0 {
		return deliveryplan.Outcome{Err: "the webhook has no signing secret"}
	}
	ctx, cancel := context.WithTimeout(ctx, egress.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(d.Payload))
	if err != nil {
		return deliveryplan.Outcome{Err: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(signing.HeaderID, d.ID)
	req.Header.Set(signing.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(signing.HeaderSignature, signing.NewSigner(secrets...).Signature(d.ID, at, d.Payload))
	start := time.Now()
	resp, err := h.Client.Do(req)
	if err != nil {
		return deliveryplan.Outcome{Err: describe(err), Latency: time.Since(start)}
	}
	egress.Drain(resp.Body)
	o := deliveryplan.Outcome{StatusCode: resp.StatusCode, Latency: time.Since(start)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		o.RetryAfter = deliveryplan.ParseRetryAfter(resp.Header.Get("Retry-After"), at)
	}
	return o
}

// describe is a send error without the method and URL the client wraps it in: the log is the
// webhook's own, so its URL is known.
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", egress.RequestTimeout)
	}
	return err.Error()
}
