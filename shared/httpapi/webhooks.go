package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/signing"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// WebhookStore keeps webhooks and their deliveries; dynamo.WebhookStore is the real one.
type WebhookStore interface {
	CreateWebhook(ctx context.Context, w deliveryplan.Webhook, limit int) error
	Webhook(ctx context.Context, tenant, id string) (deliveryplan.Webhook, error)
	Webhooks(ctx context.Context, tenant string, limit int, cursor string) ([]deliveryplan.Webhook, string, error)
	DeleteWebhook(ctx context.Context, tenant, id string) error
	SetSecrets(ctx context.Context, w deliveryplan.Webhook, now time.Time) error
	CreateDelivery(ctx context.Context, d deliveryplan.Delivery) (bool, error)
	Delivery(ctx context.Context, webhookID, id string) (deliveryplan.Delivery, error)
	Deliveries(ctx context.Context, webhookID string, limit int, cursor string) ([]deliveryplan.Delivery, string, error)
	Replace(ctx context.Context, d deliveryplan.Delivery, prevAttempts int, now time.Time) error
}

// WebhookQueue wakes the webhook function; delivery.Queue is the real one.
type WebhookQueue interface {
	RingDrain(ctx context.Context) error
	Send(ctx context.Context, delay time.Duration, refs ...dynamo.DeliveryRef) error
}

var _ WebhookStore = (*dynamo.WebhookStore)(nil)

// maxWebhooks bounds a tenant's webhooks, and so what one event fans out to: more endpoints than
// a team wires up, few enough that a fan-out is a handful of writes.
const maxWebhooks = 50

// maxURLBytes bounds a webhook URL: browsers' and CDNs' common limit.
const maxURLBytes = 2048

// Details a webhook's owner reads, kept together.
const (
	detailWebhooksOff      = "webhooks are not configured on this server"
	detailNoWebhook        = "no webhook %q"
	detailNoDelivery       = "webhook %s has no delivery %q"
	detailWebhookLimit     = "the tenant has %d webhooks, the most it may have; delete one first"
	detailWebhookDisabled  = "webhook %s is disabled (%s); register the endpoint again once it answers"
	detailAttemptUnderway  = "an attempt of delivery %s is under way; try again in a minute"
	detailWebhookAdminOnly = "role %s may not register, delete or rotate webhooks; ask a tenant admin"
	webhookTestMessage     = "a test event from Tidegate"
)

type webhookRequest struct {
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Namespace string   `json:"namespace"`
	Secret    string   `json:"secret"`
}

// webhookWithSecret is the one answer that shows a secret: creation and rotation.
type webhookWithSecret struct {
	deliveryplan.Webhook
	Secret string `json:"secret"`
}

// deliveryAnswer is a delivery made or re-armed by a request.
type deliveryAnswer struct {
	Delivery deliveryplan.Delivery `json:"delivery"`
}

// webhookAdmin refuses callers who are not their tenant's admin: webhooks carry secrets and point
// Tidegate's traffic somewhere.
func webhookAdmin(r *http.Request) error {
	if role := principalOf(r.Context()).Tenant.Role; role != tenancy.RoleAdmin {
		return Errorf(CodeForbidden, detailWebhookAdminOnly, role)
	}
	return nil
}

func (a *api) webhooksOn() error {
	if a.webhooks == nil {
		return Errorf(CodeUnavailable, detailWebhooksOff)
	}
	return nil
}

func (a *api) createWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := a.webhooksOn(); err != nil {
		return err
	}
	if err := webhookAdmin(r); err != nil {
		return err
	}
	var req webhookRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	tenant := principalOf(r.Context()).Tenant
	types, bad := checkWebhook(req, tenant, a.webhooksAllowPrivate)
	key, secretProblem := webhookSecret(req.Secret)
	if secretProblem != "" {
		bad = append(bad, FieldProblem{"secret", secretProblem})
	}
	if len(bad) > 0 {
		return Invalid("fix the listed fields", bad...)
	}
	now := a.now().UTC()
	hook := deliveryplan.Webhook{
		ID: ids.New("wh_", now), Tenant: tenant.Name, Org: tenant.Org, URL: req.URL, Events: types, Namespace: req.Namespace,
		CreatedAt: now, UpdatedAt: now, Secrets: []deliveryplan.Secret{{Key: key}},
	}
	switch err := a.webhooks.CreateWebhook(r.Context(), hook, maxWebhooks); {
	case errors.Is(err, dynamo.ErrLimit):
		return Errorf(CodeConflict, detailWebhookLimit, maxWebhooks)
	case err != nil:
		return err
	}
	return writeJSON(w, http.StatusCreated, webhookWithSecret{Webhook: hook, Secret: key.String()})
}

// checkWebhook checks a registration's fields and answers its event types.
func checkWebhook(req webhookRequest, tenant tenancy.Tenant, allowPrivate bool) ([]outbox.Type, []FieldProblem) {
	var bad []FieldProblem
	if problem := checkWebhookURL(req.URL, allowPrivate); problem != "" {
		bad = append(bad, FieldProblem{"url", problem})
	}
	var types []outbox.Type
	for i, e := range req.Events {
		t := outbox.Type(e)
		switch {
		case !slices.Contains(outbox.Types, t):
			bad = append(bad, FieldProblem{fmt.Sprintf("events[%d]", i), "must be one of " + eventTypeList()})
		case !slices.Contains(types, t):
			types = append(types, t)
		}
	}
	if len(req.Events) == 0 {
		bad = append(bad, FieldProblem{"events", "required: at least one of " + eventTypeList()})
	}
	if req.Namespace != "" && !tenant.Allows(req.Namespace) {
		bad = append(bad, FieldProblem{"namespace", "must be one of the tenant's namespaces: " + strings.Join(tenant.Namespaces, ", ")})
	}
	return types, bad
}

func eventTypeList() string {
	names := make([]string, len(outbox.Types))
	for i, t := range outbox.Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// checkWebhookURL answers what is wrong with a webhook URL, or "". Only https reaches the
// internet; http, loopback and private addresses need the dev allowance. A name is judged again on
// every delivery, at dial time, by the address it resolves to.
func checkWebhookURL(raw string, allowPrivate bool) string {
	if raw == "" {
		return "required: the https URL deliveries are POSTed to"
	}
	if len(raw) > maxURLBytes {
		return fmt.Sprintf("at most %d bytes", maxURLBytes)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return "must be an absolute URL such as https://hooks.example.com/tidegate"
	case u.Scheme != "https" && !(u.Scheme == "http" && allowPrivate):
		return "must be https"
	case u.User != nil:
		return "must not carry a user or password; authenticate deliveries by their signature"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not have a #fragment: it is never sent"
	}
	host := strings.ToLower(u.Hostname())
	if allowPrivate {
		return ""
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "must not be localhost: deliveries reach public addresses only"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if reason := egress.Refusal(ip); reason != "" {
			return fmt.Sprintf("%s is a %s address; deliveries reach public addresses only", ip, reason)
		}
	}
	return ""
}

// webhookSecret reads a given secret or makes one; the problem is what to fix in a given one.
func webhookSecret(given string) (signing.Secret, string) {
	if given == "" {
		key, err := signing.NewSecret()
		if err != nil {
			return nil, "could not be made; try again"
		}
		return key, ""
	}
	if !strings.HasPrefix(given, "whsec_") {
		return nil, "must be whsec_ followed by the base64 of 24 to 64 random bytes; or leave it out for one to be made"
	}
	key, err := signing.ParseSecret(given)
	if err != nil {
		return nil, err.Error()
	}
	return key, ""
}

// webhook reads the path's webhook of the caller's tenant: another tenant's is not found.
func (a *api) webhook(r *http.Request) (deliveryplan.Webhook, error) {
	if err := a.webhooksOn(); err != nil {
		return deliveryplan.Webhook{}, err
	}
	id := r.PathValue("id")
	w, err := a.webhooks.Webhook(r.Context(), principalOf(r.Context()).Tenant.Name, id)
	if errors.Is(err, records.ErrNotFound) {
		return w, Errorf(CodeNotFound, detailNoWebhook, id)
	}
	return w, err
}

func (a *api) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	if err := a.webhooksOn(); err != nil {
		return err
	}
	limit, cursor, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	ws, next, err := a.webhooks.Webhooks(r.Context(), principalOf(r.Context()).Tenant.Name, limit, cursor)
	if err != nil {
		return err
	}
	if ws == nil {
		ws = []deliveryplan.Webhook{}
	}
	return writeJSON(w, http.StatusOK, listPage[deliveryplan.Webhook]{Items: ws, NextCursor: nextCursor(next)})
}

func (a *api) getWebhook(w http.ResponseWriter, r *http.Request) error {
	hook, err := a.webhook(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, hook)
}

func (a *api) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := a.webhooksOn(); err != nil {
		return err
	}
	if err := webhookAdmin(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := a.webhooks.DeleteWebhook(r.Context(), principalOf(r.Context()).Tenant.Name, id); errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, detailNoWebhook, id)
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// rotateWebhookSecret makes a new secret, shown once; the current one keeps signing beside it for
// deliveryplan.RotationOverlap.
func (a *api) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	hook, err := a.webhook(r)
	if err != nil {
		return err
	}
	if err := webhookAdmin(r); err != nil {
		return err
	}
	fresh, err := signing.NewSecret()
	if err != nil {
		return err
	}
	now := a.now().UTC()
	hook.Secrets, hook.UpdatedAt = hook.Rotate(fresh, now), now
	if err := a.webhooks.SetSecrets(r.Context(), hook, now); errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, detailNoWebhook, hook.ID)
	} else if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, webhookWithSecret{Webhook: hook, Secret: fresh.String()})
}

// testWebhook makes a webhook.test delivery to this webhook alone and queues it at once; it takes
// the path every delivery takes, signature, retries and log included.
func (a *api) testWebhook(w http.ResponseWriter, r *http.Request) error {
	hook, err := a.webhook(r)
	if err != nil {
		return err
	}
	if hook.Disabled {
		return Errorf(CodeConflict, detailWebhookDisabled, hook.ID, hook.DisabledReason)
	}
	now := a.now().UTC()
	ev := outbox.Event{
		ID: ids.New("evt_", now), Type: outbox.WebhookTest, At: now, Tenant: hook.Tenant, Namespace: hook.Namespace,
		Data: map[string]any{"webhook_id": hook.ID, "message": webhookTestMessage},
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	d := deliveryplan.NewDelivery(hook, ev, payload, now)
	if _, err := a.webhooks.CreateDelivery(r.Context(), d); err != nil {
		return err
	}
	a.queueDelivery(r.Context(), d)
	return writeJSON(w, http.StatusAccepted, deliveryAnswer{Delivery: d})
}

func (a *api) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	hook, err := a.webhook(r)
	if err != nil {
		return err
	}
	limit, cursor, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	ds, next, err := a.webhooks.Deliveries(r.Context(), hook.ID, limit, cursor)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, listPage[deliveryplan.Delivery]{Items: ds, NextCursor: nextCursor(next)})
}

// redeliver makes a delivery pending and due now for a new run of attempts, whatever became of
// it; the receiver sees the same webhook-id, so one that already has it can drop it.
func (a *api) redeliver(w http.ResponseWriter, r *http.Request) error {
	hook, err := a.webhook(r)
	if err != nil {
		return err
	}
	if hook.Disabled {
		return Errorf(CodeConflict, detailWebhookDisabled, hook.ID, hook.DisabledReason)
	}
	id := r.PathValue("delivery_id")
	d, err := a.webhooks.Delivery(r.Context(), hook.ID, id)
	if errors.Is(err, records.ErrNotFound) {
		return Errorf(CodeNotFound, detailNoDelivery, hook.ID, id)
	} else if err != nil {
		return err
	}
	now := a.now()
	again := d.Redeliver(now)
	if err := a.webhooks.Replace(r.Context(), again, d.AttemptCount, now); errors.Is(err, records.ErrStale) {
		return Errorf(CodeConflict, detailAttemptUnderway, id)
	} else if err != nil {
		return err
	}
	a.queueDelivery(r.Context(), again)
	return writeJSON(w, http.StatusAccepted, deliveryAnswer{Delivery: again})
}

// queueDelivery asks for d's attempt now. A lost message costs a beat: d is due, and the sweep
// queues due deliveries.
func (a *api) queueDelivery(ctx context.Context, d deliveryplan.Delivery) {
	if a.webhookQueue == nil {
		return
	}
	if err := a.webhookQueue.Send(ctx, 0, dynamo.DeliveryRef{WebhookID: d.WebhookID, DeliveryID: d.ID}); err != nil {
		a.logger(ctx).WarnContext(ctx, "delivery not queued; the sweep will", "delivery_id", d.ID, "err", err)
	}
}

// ringWebhooks wakes the webhook function after an event was written. A lost ring costs a beat:
// the sweep rings while any event waits.
func (a *api) ringWebhooks(ctx context.Context) {
	if a.webhookQueue == nil {
		return
	}
	if err := a.webhookQueue.RingDrain(ctx); err != nil {
		a.logger(ctx).WarnContext(ctx, "webhooks not rung; the sweep will", "err", err)
	}
}
