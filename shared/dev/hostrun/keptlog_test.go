package hostrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKeptLogRotates: a container that writes far more than the cap leaves a file that never
// passed the cap, holds its newest lines and not its oldest, and begins on a whole CRI entry.
func TestKeptLogRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const limit = 8 << 10
	k, err := openKept(path, limit)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	l := &criLog{w: k, now: time.Now}
	out := l.stream("stdout")
	const lines = 2000 // about 80 KiB: ten times the cap
	for i := range lines {
		if _, err := fmt.Fprintf(out, "line %d of the chatty app\n", i); err != nil {
			t.Fatalf("writing line %d: %v", i, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() > limit {
			t.Fatalf("after line %d the log is %d bytes (%v), over the cap %d", i, fi.Size(), err, limit)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.HasSuffix(text, fmt.Sprintf(" stdout F line %d of the chatty app\n", lines-1)) {
		t.Errorf("the log does not end with the newest line; it ends %q", text[max(0, len(text)-80):])
	}
	if strings.Contains(text, " line 0 of") || strings.Contains(text, " line 10 of") {
		t.Errorf("the log still holds the oldest lines after %d bytes were written under a cap of %d", lines*40, limit)
	}
	first := strings.SplitN(text, "\n", 2)[0]
	if f := strings.Fields(first); len(f) < 4 || f[1] != "stdout" || f[2] != "F" {
		t.Errorf("the log's first line %q is not a whole CRI entry", first)
	} else if _, err := time.Parse(time.RFC3339Nano, f[0]); err != nil {
		t.Errorf("the log's first line %q does not begin with its time: %v", first, err)
	}
	if len(b) < limit/4 {
		t.Errorf("the log holds %d bytes after rotating, want the newest lines, near half the cap %d", len(b), limit)
	}
	if _, err := os.Stat(path + ".rotating"); !os.IsNotExist(err) {
		t.Errorf("a rotation left %s.rotating behind", path)
	}
}
