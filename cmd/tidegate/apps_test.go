package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// TestShowRevives: `apps status` lists the kept revives newest first, each with its last lines.
func TestShowRevives(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	var lines []string
	for i := range 8 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	a := apiclient.App{Name: "web", Revives: []apiclient.Revive{
		{Host: "web-r1-aaaaaaaa", Release: 1, At: now.Add(-10 * time.Minute), Lines: []string{"old crash"}},
		{Host: "web-r2-bbbbbbbb", Release: 2, Verdict: "unhealthy", At: now.Add(-time.Minute), Lines: lines},
	}}
	var b bytes.Buffer
	showRevives(&printer{out: &b, now: func() time.Time { return now }}, a)
	want := `Revived (its process exited, or stayed unready, and it ran again):
  60s ago  web-r2-bbbbbbbb (release 2, unhealthy)
    line 3
    line 4
    line 5
    line 6
    line 7
  10m ago  web-r1-aaaaaaaa (release 1)
    old crash
All kept lines of a release: tidegate apps logs web --release N
`
	if b.String() != want {
		t.Errorf("showRevives =\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	showRevives(&printer{out: &b, now: func() time.Time { return now }}, apiclient.App{Name: "web"})
	if strings.TrimSpace(b.String()) != "" {
		t.Errorf("showRevives of an app never revived = %q, want nothing", b.String())
	}
}
