package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// App is a hosted app: the release wanted, the one live, and how it stands.
type App struct {
	Name        string `json:"name"`
	Release     int    `json:"release"`
	LiveRelease int    `json:"live_release"`
	// State is deploying, live, failed or stopped.
	State     string `json:"state"`
	FailedWhy string `json:"failed_why,omitempty"`
	Host      string `json:"host,omitempty"`
	LiveHost  string `json:"live_host,omitempty"`
	// Revives are, on an answer about one app, the last times a host of it was run again after
	// its process exited, oldest first, with its last lines then.
	Revives []Revive `json:"revives,omitempty"`

	raw json.RawMessage
}

// Revive is one time the beat ran an app's host again after its process exited.
type Revive struct {
	Host    string    `json:"host"`
	Release int       `json:"release"`
	Verdict string    `json:"verdict,omitempty"`
	At      time.Time `json:"at"`
	Lines   []string  `json:"lines"`
}

type plainApp App

// UnmarshalJSON keeps the API's JSON along with the fields.
func (a *App) UnmarshalJSON(b []byte) error { return keep(b, (*plainApp)(a), &a.raw) }

// MarshalJSON gives back the API's JSON for an app that came from it.
func (a App) MarshalJSON() ([]byte, error) { return give(a.raw, plainApp(a)) }

// Release is one upload of an app's sources.
type Release struct {
	App        string    `json:"app"`
	Release    int       `json:"release"`
	SHA256     string    `json:"sha256"`
	Bytes      int64     `json:"bytes"`
	Note       string    `json:"note,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	RollbackOf int       `json:"rollback_of,omitempty"`

	raw json.RawMessage
}

type plainRelease Release

// UnmarshalJSON keeps the API's JSON along with the fields.
func (r *Release) UnmarshalJSON(b []byte) error { return keep(b, (*plainRelease)(r), &r.raw) }

// MarshalJSON gives back the API's JSON.
func (r Release) MarshalJSON() ([]byte, error) { return give(r.raw, plainRelease(r)) }

// AppLogs are the last lines of an app's host.
type AppLogs struct {
	Release int    `json:"release,omitempty"`
	Host    string `json:"host,omitempty"`
	// From is cluster (read now), record (kept when the release failed) or revive (kept when the
	// host was last run again).
	From  string   `json:"from,omitempty"`
	Lines []string `json:"lines"`

	raw json.RawMessage
}

type plainAppLogs AppLogs

// UnmarshalJSON keeps the API's JSON along with the fields.
func (l *AppLogs) UnmarshalJSON(b []byte) error { return keep(b, (*plainAppLogs)(l), &l.raw) }

// MarshalJSON gives back the API's JSON.
func (l AppLogs) MarshalJSON() ([]byte, error) { return give(l.raw, plainAppLogs(l)) }

// AppPlan is what the next beat would do for one app, and why.
type AppPlan struct {
	App      string `json:"app"`
	State    string `json:"state,omitempty"`
	Host     string `json:"host,omitempty"`
	LiveHost string `json:"live_host,omitempty"`
	Steps    []struct {
		Step string `json:"step"`
		Host string `json:"host"`
		Why  string `json:"why"`
	} `json:"steps"`
	Note string `json:"note,omitempty"`
}

// AppsPlan reads what the next beat would do for the org's apps, without doing it.
func (c *Client) AppsPlan(ctx context.Context) ([]AppPlan, error) {
	var out struct {
		Items []AppPlan `json:"items"`
	}
	return out.Items, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/apps/plan"}, &out)
}

func appPath(name string) string { return "/api/v1/apps/" + pathEscape(name) }

// Upload sends an app's sources (a gzip tar) as a new release; the first one creates the app.
// progress, when not nil, is told how much has gone.
func (c *Client) Upload(ctx context.Context, app string, tarball []byte, note string, progress func(sent, total int64)) (Release, error) {
	q := url.Values{}
	if note != "" {
		q.Set("note", note)
	}
	rq := request{method: http.MethodPost, path: appPath(app) + "/releases", query: q, body: tarball, contentType: "application/gzip", progress: progress}
	var out Release
	return out, c.do(ctx, rq, &out)
}

// Apps lists one page of the org's apps.
func (c *Client) Apps(ctx context.Context, o ListOptions) (Page[App], error) {
	var out Page[App]
	return out, c.do(ctx, request{method: http.MethodGet, path: "/api/v1/apps", query: o.query(nil)}, &out)
}

// App reads one app.
func (c *Client) App(ctx context.Context, name string) (App, error) {
	var out App
	return out, c.do(ctx, request{method: http.MethodGet, path: appPath(name)}, &out)
}

// Releases lists one page of an app's releases, newest first.
func (c *Client) Releases(ctx context.Context, app string, o ListOptions) (Page[Release], error) {
	var out Page[Release]
	return out, c.do(ctx, request{method: http.MethodGet, path: appPath(app) + "/releases", query: o.query(nil)}, &out)
}

// Rollback makes a new release with an earlier release's sources.
func (c *Client) Rollback(ctx context.Context, app string, release int) (Release, error) {
	rq, err := jsonRequest(http.MethodPost, appPath(app)+"/rollback", map[string]int{"release": release})
	if err != nil {
		return Release{}, err
	}
	var out Release
	return out, c.do(ctx, rq, &out)
}

// StopApp stops an app's hosts; StartApp starts its newest release again.
func (c *Client) StopApp(ctx context.Context, app string) (App, error) {
	return c.appAction(ctx, app, "stop")
}

// StartApp starts an app's newest release again after a stop or a failure.
func (c *Client) StartApp(ctx context.Context, app string) (App, error) {
	return c.appAction(ctx, app, "start")
}

func (c *Client) appAction(ctx context.Context, app, action string) (App, error) {
	var out App
	return out, c.do(ctx, request{method: http.MethodPost, path: appPath(app) + "/" + action}, &out)
}

// DeleteApp removes an app, its hosts and its releases.
func (c *Client) DeleteApp(ctx context.Context, app string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: appPath(app)}, nil)
}

// AppLogs reads the last lines of an app's host: the live one's, or release's when it is not 0;
// the API's default number of them when lines is 0.
func (c *Client) AppLogs(ctx context.Context, app string, release, lines int) (AppLogs, error) {
	q := url.Values{}
	if lines > 0 {
		q.Set("lines", strconv.Itoa(lines))
	}
	if release > 0 {
		q.Set("release", strconv.Itoa(release))
	}
	var out AppLogs
	return out, c.do(ctx, request{method: http.MethodGet, path: appPath(app) + "/logs", query: q}, &out)
}
