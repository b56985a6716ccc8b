package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/apps"
)

// TestAppLogsByRelease: ?release= reads that release's lines, a bad value is a 400 naming it, a
// release the app does not have or whose lines are gone is a 404 that says which; and an org
// naming a release of another org's app of the same name reads nothing of it.
func TestAppLogsByRelease(t *testing.T) {
	st := newAppStackHosted(t, true)
	ctx, now := context.Background(), time.Now()
	const secretLine = "beta's own stack trace"
	if status, out := st.upload(t, "web", sources(t, map[string]string{"index.js": "a"})); status != 201 {
		t.Fatal(status, out)
	}
	for i := range 3 {
		status, out := st.send(t, "POST", "/api/v1/apps/web/releases", st.beta, "application/gzip", sources(t, map[string]string{"index.js": fmt.Sprint(i)}))
		if status != 201 {
			t.Fatal(status, out)
		}
	}
	betaHost := apps.HostName("beta", "web", 3, "x", "")
	if err := st.store.MarkFailed(ctx, "beta", "web", 3, betaHost, "exited: code 1", secretLine, now); err != nil {
		t.Fatal(err)
	}

	status, out := st.send(t, "GET", "/api/v1/apps/web/logs?release=3", st.beta, "", nil)
	if status != 200 || number(out["release"]) != 3 || out["host"] != betaHost || out["from"] != "record" || !strings.Contains(fmt.Sprint(out["lines"]), secretLine) {
		t.Fatalf("beta's logs of its failed release 3 = %d %v, want its kept failure", status, out)
	}
	for _, tt := range []struct {
		query      string
		wantStatus int
		want       string
	}{
		{"release=3", 404, "has no release 3"},
		{"release=2", 404, "has no release 2"},
		{"release=1", 404, "release 1 of app \"web\" has no host left"},
		{"release=0", 400, "release"},
		{"release=-1", 400, "release"},
		{"release=r3", 400, "release"},
		{"release=99999999999999999999", 400, "release"},
		{"", 200, ""},
	} {
		t.Run(tt.query, func(t *testing.T) {
			status, out := st.send(t, "GET", "/api/v1/apps/web/logs?"+tt.query, st.deployer, "", nil)
			if status != tt.wantStatus || !strings.Contains(fmt.Sprint(out["detail"], out["fields"]), tt.want) {
				t.Errorf("acme's GET logs?%s = %d %v, want %d naming %q", tt.query, status, out, tt.wantStatus, tt.want)
			}
			if strings.Contains(fmt.Sprint(out), secretLine) || strings.Contains(fmt.Sprint(out), betaHost) {
				t.Errorf("acme's GET logs?%s shows beta's lines: %v", tt.query, out)
			}
		})
	}
	if status, out := st.send(t, "GET", "/api/v1/apps/web/logs?release=3", st.admin, "", nil); status != 404 {
		t.Errorf("acme's admin reading release 3 of web = %d %v, want 404: beta's release is not acme's", status, out)
	}
	// GET /api/v1/apps/{name} shows the app's revives, an empty list before any.
	if status, out := st.send(t, "GET", "/api/v1/apps/web", st.deployer, "", nil); status != 200 || fmt.Sprint(out["revives"]) != "[]" {
		t.Errorf("GET /api/v1/apps/web = %d %v, want revives []", status, out)
	}
	rv := apps.Revive{Host: "web-r1-0123abcd", Release: 1, At: now, Lines: []string{"panic: nil map"}}
	if err := st.store.RecordRevive(ctx, "acme", "web", rv); err != nil {
		t.Fatal(err)
	}
	status, out = st.send(t, "GET", "/api/v1/apps/web/logs?release=1", st.deployer, "", nil)
	if status != 200 || out["from"] != "revive" || out["host"] != rv.Host || fmt.Sprint(out["lines"]) != "[panic: nil map]" {
		t.Errorf("acme's logs of release 1 after a revive = %d %v, want the revive's lines", status, out)
	}
	if status, out := st.send(t, "GET", "/api/v1/apps/web", st.deployer, "", nil); status != 200 || !strings.Contains(fmt.Sprint(out["revives"]), "panic: nil map") {
		t.Errorf("GET /api/v1/apps/web after a revive = %d %v, want it with its lines", status, out)
	}
	if status, out := st.send(t, "GET", "/api/v1/apps", st.deployer, "", nil); status != 200 || strings.Contains(fmt.Sprint(out), "panic") {
		t.Errorf("GET /api/v1/apps = %d %v, want no revives in a list", status, out)
	}

	// Hostile: a member of acme, who may not deploy, reads nothing a host printed (it may hold
	// any of acme's secrets: a start command of `env` prints them all), and ships no code that
	// would receive them.
	if status, out := st.send(t, "GET", "/api/v1/apps/web/logs?release=1", st.member, "", nil); status != 403 {
		t.Errorf("a member reading web's logs = %d %v, want 403", status, out)
	}
	status, out = st.send(t, "GET", "/api/v1/apps/web", st.member, "", nil)
	if status != 200 || strings.Contains(fmt.Sprint(out), "panic") || !strings.Contains(fmt.Sprint(out["revives"]), rv.Host) {
		t.Errorf("a member's GET /api/v1/apps/web = %d %v, want the revive without its lines", status, out)
	}
	for _, rq := range []struct{ method, path, contentType string }{
		{"POST", "/api/v1/apps/web/releases", "application/gzip"},
		{"POST", "/api/v1/apps/web/uploads", "application/json"},
		{"POST", "/api/v1/apps/web/rollback", "application/json"},
		{"POST", "/api/v1/apps/web/stop", ""},
		{"POST", "/api/v1/apps/web/start", ""},
		{"DELETE", "/api/v1/apps/web", ""},
	} {
		if status, out := st.send(t, rq.method, rq.path, st.member, rq.contentType, nil); status != 403 || !strings.Contains(fmt.Sprint(out["detail"]), "deployer") {
			t.Errorf("a member's %s %s = %d %v, want 403 naming the deployer role", rq.method, rq.path, status, out)
		}
	}
}
