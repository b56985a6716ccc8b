package main

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/devstack"
)

// TestDeployDryRunListsTheUpload: what examples/app uploads, without asking any API.
func TestDeployDryRunListsTheUpload(t *testing.T) {
	h := &harness{t: t}
	out := h.ok("apps", "deploy", "../../examples/app", "--dry-run", "-o", "json")
	var got struct {
		App   string   `json:"app"`
		Files []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{".tidegateignore", "package-lock.json", "package.json", "server.js"}
	if got.App != "hello-app" || !cmp.Equal(want, got.Files) {
		t.Errorf("deploy --dry-run of examples/app = %+v, want app hello-app with %v", got, want)
	}
}

// TestDeployFollowsTheRelease: the README's second command. `apps deploy examples/app` uploads,
// follows the release until the host registers and it is live; then the app's other commands. The
// stack runs the app for real where this machine can (bwrap), so it is the app's own process that
// registers, and its lines are the logs.
func TestDeployFollowsTheRelease(t *testing.T) {
	h := newHarness(t, func(o *devstack.Options) { o.RunHosts = true })
	_, runs := exec.LookPath("bwrap")
	app := uniqueName("hello")
	out := h.ok("apps", "deploy", "../../examples/app", "--name", app, "--note", "first", "--timeout", "90s")
	if !strings.HasPrefix(out, "release 1 of "+app+" uploaded") || !strings.Contains(out, app+" is live: release 1") {
		t.Fatalf("apps deploy printed\n%s\nwant release 1 uploaded and then live", out)
	}
	if list := h.ok("apps", "list"); !regexp.MustCompile(`(?m)^` + app + `\s+live\s+1\s+1\s`).MatchString(list) {
		t.Errorf("apps list =\n%s\nwant %s live at release 1", list, app)
	}
	if status := h.ok("apps", "status", app); !regexp.MustCompile(`(?m)^State:\s+live$`).MatchString(status) {
		t.Errorf("apps status =\n%s", status)
	}
	if plan := h.ok("apps", "plan"); !regexp.MustCompile(`(?m)^` + app + `\s+live\s+-\s+\S+\s+live on `).MatchString(plan) {
		t.Errorf("apps plan =\n%s\nwant %s with nothing to do, live on its host", plan, app)
	}
	if logs := h.ok("apps", "logs", app, "-o", "json"); !strings.Contains(logs, `"lines"`) {
		t.Errorf("apps logs -o json = %s, want the host's lines", logs)
	}
	if runs == nil {
		h.eventually("the app's own lines in its logs", func() bool {
			logs := h.ok("apps", "logs", app)
			return strings.Contains(logs, "listening on") && strings.Contains(logs, "registered "+app+"-r1-")
		})
	}
	h.ok("apps", "deploy", "../../examples/app", "--name", app, "--no-wait")
	if rel := h.ok("apps", "releases", app); !regexp.MustCompile(`(?m)^2\s+[0-9a-f]{12}\s`).MatchString(rel) || !strings.Contains(rel, "first") {
		t.Errorf("apps releases =\n%s\nwant releases 2 and 1 (noted first)", rel)
	}
	if out := h.ok("apps", "rollback", app, "1", "--timeout", "90s"); !strings.HasPrefix(out, "release 3 of "+app+" made from release 1") || !strings.Contains(out, "is live: release 3") {
		t.Errorf("apps rollback printed\n%s", out)
	}
	if out := h.ok("apps", "stop", app); out != app+": stopped\n" {
		t.Errorf("apps stop = %q", out)
	}
	h.ok("apps", "start", app)
	if out := h.ok("apps", "rm", app); out != "app "+app+" removed\n" {
		t.Errorf("apps rm = %q", out)
	}
	if e := h.fails("apps", "status", app); !strings.Contains(e, "(request id ") {
		t.Errorf("apps status after rm printed %q, want the API's not found", e)
	}
	if e := h.fails("apps", "rollback", app, "one"); e != `tidegate: RELEASE "one" is not a release number; see them with `+"`tidegate apps releases "+app+"`\n" {
		t.Errorf("a bad release number printed %q", e)
	}
}
