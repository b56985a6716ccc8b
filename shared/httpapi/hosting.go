package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/hosting"
	"github.com/tidegate/tidegate/shared/records"
)

// HostingView answers what the beat would do for an org's apps and a host's last lines;
// hosting.Hoster is the real one.
type HostingView interface {
	Plan(ctx context.Context, org string) ([]hosting.AppPlan, error)
	Logs(ctx context.Context, a apps.App, rel *apps.Release, lines int) (hosting.HostLines, error)
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

// What an app's logs answer when there are none to give.
const (
	detailLogsRelease = "release must be a release number, 1 or more; GET /api/v1/apps/%s/releases lists them"
	detailNoLinesLeft = "release %d of app %q has no host left to read lines from: its host was stopped, and it neither failed nor was revived, so none of its lines were kept"
)

// appLogs answers GET /api/v1/apps/{name}/logs?lines=&release=: the live host's last lines (the
// wanted host's while nothing is live, or those kept when the wanted release failed), or with
// release those of that release's host, live from the cluster while its pod is there, else kept
// when it failed or was last revived.
func (a *api) appLogs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	lines := defaultLogLines
	if v := q.Get("lines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLogLines {
			return Invalid("lines must be a whole number from 1 to "+strconv.Itoa(maxLogLines), FieldProblem{"lines", "pass a number from 1 to " + strconv.Itoa(maxLogLines)})
		}
		lines = n
	}
	release := 0
	if v := q.Get("release"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Invalid(fmt.Sprintf(detailLogsRelease, r.PathValue("name")), FieldProblem{"release", "a release number, 1 or more"})
		}
		release = n
	}
	app, err := a.app(r)
	if err != nil {
		return err
	}
	if a.hosting == nil {
		return Errorf(CodeUnavailable, detailNoHosting)
	}
	var rel *apps.Release
	if release != 0 {
		got, err := a.apps.Release(r.Context(), app.Org, app.Name, release)
		if errors.Is(err, records.ErrNotFound) {
			return Errorf(CodeNotFound, detailNoRelease, app.Name, release, app.Name)
		}
		if err != nil {
			return err
		}
		rel = &got
	}
	hl, err := a.hosting.Logs(r.Context(), app, rel, lines)
	if errors.Is(err, hosting.ErrNoLinesLeft) {
		return Errorf(CodeNotFound, detailNoLinesLeft, release, app.Name)
	}
	if err != nil {
		return a.clusterError(r.Context(), "reading the host's log", err)
	}
	out := hl.Lines
	if out == nil {
		out = []string{}
	}
	if len(out) > lines {
		out = out[len(out)-lines:]
	}
	var relNumber *int
	if hl.Release != 0 {
		relNumber = &hl.Release
	}
	return writeJSON(w, http.StatusOK, map[string]any{"app": app.Name, "release": relNumber, "host": hl.Host, "from": hl.From, "lines": out})
}
