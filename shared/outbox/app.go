package outbox

import (
	"time"

	"github.com/tidegate/tidegate/shared/ids"
)

// ForApp makes the event of type t (AppLive or AppFailed) about org's app: its release, the host
// that went live or failed, and for a failure why, at now. An app belongs to an org, not to one
// tenant, so the event names the org in its data and leaves Tenant empty; delivery matches it to
// every tenant of that org.
func ForApp(t Type, org, app string, release int, host, reason string, now time.Time) Event {
	data := map[string]any{"org": org, "app": app, "release": release, "host": host}
	if reason != "" {
		data["reason"] = reason
	}
	return Event{ID: ids.New("evt_", now), Type: t, At: now.UTC(), Data: data}
}
