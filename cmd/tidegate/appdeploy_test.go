package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// TestFollowReleaseFailure: a release that fails ends the deploy with its reason and the host's
// last lines, and an error. A real failure takes the host plan's two minutes to register, so the
// API here is a small stand-in answering as the hosting routes do.
func TestFollowReleaseFailure(t *testing.T) {
	var asked atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/apps/web":
			if asked.Add(1) == 1 {
				_, _ = io.WriteString(w, `{"name":"web","release":2,"live_release":1,"state":"deploying","failed_why":null,"host":"web-r2-0a1b2c3d","live_host":"web-r1-99999999"}`)
				return
			}
			_, _ = io.WriteString(w, `{"name":"web","release":2,"live_release":1,"state":"failed","failed_why":"never_registered: the host did not register within 120s","host":"web-r2-0a1b2c3d","live_host":"web-r1-99999999"}`)
		case "/api/v1/apps/web/logs":
			if r.URL.Query().Get("lines") != "20" {
				t.Errorf("logs asked for %q lines, want 20", r.URL.Query().Get("lines"))
			}
			_, _ = io.WriteString(w, `{"host":"web-r2-0a1b2c3d","lines":["listening on 8080","Error: ECONNREFUSED"]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	c, err := apiclient.New(apiclient.Options{URL: api.URL, Auth: apiclient.APIKey("k")})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p := &printer{out: &out, err: io.Discard, now: time.Now}
	err = followRelease(context.Background(), p, c, "web", 2, time.Minute)
	if err == nil || err.Error() != "release 2 of web failed; `tidegate apps logs web` shows its host's last lines" {
		t.Errorf("followRelease of a failed release = %v, want one line saying it failed (its reason is printed above)", err)
	}
	want := "release 2 of web failed: never_registered: the host did not register within 120s\nlast log lines:\n  listening on 8080\n  Error: ECONNREFUSED\n"
	if out.String() != want {
		t.Errorf("followRelease printed\n%s\nwant\n%s", out.String(), want)
	}
	if asked.Load() != 2 {
		t.Errorf("the app was read %d times, want 2 (deploying, then failed)", asked.Load())
	}
}
