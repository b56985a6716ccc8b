package hostrun

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCRILog: each whole line is one entry in the CRI format kwok reads, tagged with its stream;
// a line split across writes is one entry, one without its newline is logged when the stream
// closes, one longer than maxLine goes out in parts (P) and a last part (F), and \r\n ends a
// line like \n.
func TestCRILog(t *testing.T) {
	var out bytes.Buffer
	at := time.Date(2026, 12, 2, 3, 0, 0, 5, time.UTC)
	l := &criLog{w: &out, now: func() time.Time { return at }}
	stdout, stderr := l.stream("stdout"), l.stream("stderr")
	for _, w := range []struct {
		s    *stream
		text string
	}{
		{stdout, "listening on 8080\nregis"},
		{stderr, "warn\r\n"},
		{stdout, "tered\n"},
		{stdout, strings.Repeat("x", maxLine+3) + "\n"},
		{stdout, "no newline"},
	} {
		if n, err := w.s.Write([]byte(w.text)); err != nil || n != len(w.text) {
			t.Fatalf("Write(%q) = %d, %v", w.text, n, err)
		}
	}
	if err := stdout.Close(); err != nil {
		t.Fatal(err)
	}
	ts := "2026-12-02T03:00:00.000000005Z"
	want := []string{
		ts + " stdout F listening on 8080",
		ts + " stderr F warn",
		ts + " stdout F registered",
		ts + " stdout P " + strings.Repeat("x", maxLine),
		ts + " stdout F xxx",
		ts + " stdout F no newline",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")); diff != "" {
		t.Errorf("the CRI log (-want +got):\n%s", diff)
	}
}
