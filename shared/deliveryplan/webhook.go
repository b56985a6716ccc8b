// Package deliveryplan provides the decisions of webhook delivery: which webhooks an event goes
// to, which secrets sign it, when a failed attempt is tried again, when a delivery gives up and
// when an endpoint is disabled. Records and outcomes in, records and verdicts out: nothing here
// sends, stores or waits.
package deliveryplan

import (
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/signing"
)

// Webhook is a tenant's registered endpoint and what it subscribed to.
type Webhook struct {
	ID     string `json:"id" dynamodbav:"id"`
	Tenant string `json:"-" dynamodbav:"tenant"`
	// Org is the tenant's org: a hosted app's events (app.live, app.failed) go to every webhook of
	// its org that wants them.
	Org    string        `json:"-" dynamodbav:"org,omitempty"`
	URL    string        `json:"url" dynamodbav:"url"`
	Events []outbox.Type `json:"events" dynamodbav:"events"`
	// Namespace, when set, narrows the webhook to that namespace's events.
	Namespace string    `json:"namespace,omitempty" dynamodbav:"namespace,omitempty"`
	CreatedAt time.Time `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt time.Time `json:"updated_at" dynamodbav:"updated_at"`
	// Disabled webhooks get no new deliveries; DisabledReason says why (a 410, or five days failing).
	Disabled       bool       `json:"disabled" dynamodbav:"disabled"`
	DisabledReason string     `json:"disabled_reason,omitempty" dynamodbav:"disabled_reason,omitempty"`
	DisabledAt     *time.Time `json:"disabled_at,omitempty" dynamodbav:"disabled_at,omitempty"`
	// FailingSince is the first failed attempt of the endpoint's current run of failures.
	FailingSince *time.Time `json:"failing_since,omitempty" dynamodbav:"failing_since,omitempty"`
	// Secrets sign deliveries, the current one first; stores keep them apart (sealed) and never
	// answer them to a client after the one time they are shown.
	Secrets []Secret `json:"-" dynamodbav:"-"`
}

// Secret is one signing secret; a previous secret keeps signing until ExpiresAt.
type Secret struct {
	Key       signing.Secret
	ExpiresAt *time.Time
}

// RotationOverlap is how long the previous secret keeps signing after a rotation, so receivers
// can switch over without dropping deliveries.
const RotationOverlap = 24 * time.Hour

// SigningSecrets are the secrets that sign at now: the current one, then any previous one that has
// not expired.
func (w Webhook) SigningSecrets(now time.Time) []signing.Secret {
	var out []signing.Secret
	for _, s := range w.Secrets {
		if s.ExpiresAt == nil || now.Before(*s.ExpiresAt) {
			out = append(out, s.Key)
		}
	}
	return out
}

// Rotate answers w's secrets after a rotation to fresh at now: fresh first, then the current one
// until now+RotationOverlap. A secret already on its way out is dropped: one overlap at a time.
func (w Webhook) Rotate(fresh signing.Secret, now time.Time) []Secret {
	out := []Secret{{Key: fresh}}
	for _, s := range w.Secrets {
		if s.ExpiresAt == nil {
			until := now.Add(RotationOverlap).UTC()
			out = append(out, Secret{Key: s.Key, ExpiresAt: &until})
		}
	}
	return out
}

// Wants reports whether ev goes to w: the same tenant (for an org's event, the same org), a
// subscribed type, the namespace if w names one, w enabled, and ev no older than w (a new webhook
// does not receive the backlog).
func (w Webhook) Wants(ev outbox.Event) bool {
	switch {
	case w.Disabled || !slices.Contains(w.Events, ev.Type):
		return false
	case ev.Tenant != "" && ev.Tenant != w.Tenant:
		return false
	case ev.Tenant == "" && (w.Org == "" || OrgOf(ev) != w.Org):
		return false
	case w.Namespace != "" && ev.Namespace != w.Namespace:
		return false
	}
	return !ev.At.Before(w.CreatedAt)
}

// OrgOf is the org an event of no one tenant belongs to (a hosted app's), from its data.
func OrgOf(ev outbox.Event) string {
	org, _ := ev.Data["org"].(string)
	return org
}

// Subscribers are the webhooks among ws that ev goes to.
func Subscribers(ws []Webhook, ev outbox.Event) []Webhook {
	var out []Webhook
	for _, w := range ws {
		if w.Wants(ev) {
			out = append(out, w)
		}
	}
	return out
}
