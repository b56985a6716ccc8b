package hosting

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/apps"
)

// TestRunsOn: a host runs on its release's runtime's pinned image with its start command; a
// release without tidegate.json, or naming no runtime, on the default image; a runtime the
// deployment stopped offering is an error naming it, never a silent fallback.
func TestRunsOn(t *testing.T) {
	const py = "docker.io/library/python:3.12-slim@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	h := &Hoster{Image: "", Runtimes: apps.Runtimes{"python3.12": py}}
	tests := []struct {
		launch  *apps.Launch
		image   string
		command []string
	}{
		{nil, "", nil},
		{&apps.Launch{Start: []string{"node", "server.js"}}, "", []string{"node", "server.js"}},
		{&apps.Launch{Runtime: "python3.12", Start: []string{"python3", "-m", "bot"}}, py, []string{"python3", "-m", "bot"}},
	}
	for _, tt := range tests {
		image, command, err := h.runsOn(apps.App{Org: "acme", Name: "bot", Release: 3, Launch: tt.launch})
		if err != nil || image != tt.image || !reflect.DeepEqual(command, tt.command) {
			t.Errorf("runsOn(%+v) = %q, %q, %v; want %q, %q", tt.launch, image, command, err, tt.image, tt.command)
		}
	}
	_, _, err := h.runsOn(apps.App{Org: "acme", Name: "bot", Release: 3, Launch: &apps.Launch{Runtime: "node22"}})
	if err == nil || !strings.Contains(err.Error(), `"node22"`) {
		t.Errorf("runsOn(a runtime no longer offered) = %v; want an error naming it", err)
	}
}
