package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/hosting"
)

// HostingView answers what the beat would do for an org's apps and a host's last lines;
// hosting.Hoster is the real one.
type HostingView interface {
	Plan(ctx context.Context, org string) ([]hosting.AppPlan, error)
	Logs(ctx context.Context, a apps.App, lines int) (host string, out []string, from string, err error)
}

const detailNoHosting = "this API was started without access to the hosting cluster, so it cannot read hosts"

// Bounds of ?lines= on an app's logs: the default is what a failure keeps.
const (
	defaultLogLines = 50
	maxLogLines     = 1000
)

// appsPlan answers GET /api/v1/apps/plan: what the next beat would do for the caller's org's
// apps, and why, without doing it.
func (a *api) appsPlan(w http.ResponseWriter, r *http.Request) error {
	if a.hosting == nil {
		return Errorf(CodeUnavailable, detailNoHosting)
	}
	plan, err := a.hosting.Plan(r.Context(), orgOf(r.Context()))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"items": plan})
}

// appLogs answers GET /api/v1/apps/{name}/logs?lines=: the host's last lines, live from the
// cluster while a host runs, else those kept when its release failed.
func (a *api) appLogs(w http.ResponseWriter, r *http.Request) error {
	lines := defaultLogLines
	if v := r.URL.Query().Get("lines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLogLines {
			return Invalid("lines must be a whole number from 1 to "+strconv.Itoa(maxLogLines), FieldProblem{"lines", "pass a number from 1 to " + strconv.Itoa(maxLogLines)})
		}
		lines = n
	}
	app, err := a.app(r)
	if err != nil {
		return err
	}
	if a.hosting == nil {
		return Errorf(CodeUnavailable, detailNoHosting)
	}
	host, out, from, err := a.hosting.Logs(r.Context(), app, lines)
	if err != nil {
		return a.clusterError(r.Context(), "reading the host's log", err)
	}
	if out == nil {
		out = []string{}
	}
	if len(out) > lines {
		out = out[len(out)-lines:]
	}
	return writeJSON(w, http.StatusOK, map[string]any{"app": app.Name, "host": host, "from": from, "lines": out})
}
