package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployLargeRelease: a release of 9 MB that does not compress, twice what API Gateway lets
// through as a request body, goes by `apps deploy` straight to the sources bucket, becomes a
// release and goes live; its host's lines then read by release.
func TestDeployLargeRelease(t *testing.T) {
	h := newHarness(t)
	app := uniqueName("big")
	dir := t.TempDir()
	noise := make([]byte, 9<<20)
	_, _ = rand.Read(noise)
	for name, body := range map[string][]byte{"package.json": []byte(`{"name":"` + app + `"}`), "noise.bin": noise} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := h.ok("apps", "deploy", dir, "--timeout", "90s")
	if !regexp.MustCompile(`^release 1 of `+app+` uploaded \(9\.\d MB, sha256 [0-9a-f]{12}\)`).MatchString(out) || !strings.Contains(out, app+" is live: release 1") {
		t.Fatalf("apps deploy of a 9 MB folder printed\n%s\nwant release 1 of over 9 MB uploaded, then live", out)
	}
	rel := h.ok("apps", "releases", app, "-o", "json")
	if !regexp.MustCompile(`"bytes":\s*9\d{6}\b`).MatchString(rel) {
		t.Errorf("apps releases -o json = %s, want release 1 of over 9 MB", rel)
	}
	if logs := h.ok("apps", "logs", app, "--release", "1", "-o", "json"); !strings.Contains(logs, `"release": 1`) && !strings.Contains(logs, `"release":1`) {
		t.Errorf("apps logs --release 1 = %s, want release 1's host's lines", logs)
	}
	if e := h.fails("apps", "logs", app, "--release", "2"); !strings.Contains(e, "has no release 2") {
		t.Errorf("apps logs --release 2 printed %q, want the API's not found", e)
	}
}
