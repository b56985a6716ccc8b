package apps

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestKeepRevive(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	var kept []Revive
	for i := range 7 {
		kept = KeepRevive(kept, Revive{Host: "web-r1-abc", Release: i + 1, At: at, Lines: []string{"line"}})
	}
	var releases []int
	for _, r := range kept {
		releases = append(releases, r.Release)
	}
	if diff := cmp.Diff([]int{3, 4, 5, 6, 7}, releases); diff != "" {
		t.Errorf("KeepRevive seven times kept releases (-want +got):\n%s", diff)
	}

	many := make([]string, 80)
	for i := range many {
		many[i] = strings.Repeat("x", 10)
	}
	many[79] = "last"
	if got := KeepRevive(nil, Revive{Lines: many})[0].Lines; len(got) != KeptReviveLines || got[len(got)-1] != "last" {
		t.Errorf("KeepRevive of 80 short lines kept %d ending %q, want the last %d", len(got), got[len(got)-1], KeptReviveLines)
	}

	wide := []string{"first", strings.Repeat("a", 3000), strings.Repeat("b", 3000)}
	if got := KeepRevive(nil, Revive{Lines: wide})[0].Lines; len(got) != 1 || got[0] != wide[2] {
		t.Errorf("KeepRevive of two 3000-byte lines kept %d lines, want only the last whole", len(got))
	}
	huge := []string{strings.Repeat("c", 10000) + "end"}
	got := KeepRevive(nil, Revive{Lines: huge})[0].Lines
	if len(got) != 1 || len(got[0]) >= keptReviveBytes || !strings.HasSuffix(got[0], "end") {
		t.Errorf("KeepRevive of one 10 kB line kept %d lines of %d bytes, want its tail within %d", len(got), len(got[0]), keptReviveBytes)
	}
	bad := []string{"ok \xff\xfe"}
	if got := KeepRevive(nil, Revive{Lines: bad})[0].Lines; got[0] != "ok " {
		t.Errorf("KeepRevive of invalid UTF-8 kept %q, want it dropped", got[0])
	}
	total := 0
	for _, r := range KeepRevive(KeepRevive(KeepRevive(KeepRevive(KeepRevive(nil, Revive{Lines: huge}), Revive{Lines: wide}), Revive{Lines: huge}), Revive{Lines: many}), Revive{Lines: huge}) {
		for _, l := range r.Lines {
			total += len(l) + 1
		}
	}
	if total > KeptRevives*keptReviveBytes {
		t.Errorf("five revives kept %d bytes of lines, want at most %d", total, KeptRevives*keptReviveBytes)
	}
}

func TestUploads(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	for _, tt := range []struct {
		sha      string
		bytes    int64
		field    string
		tooLarge bool
	}{
		{sha, 1, "", false},
		{sha, MaxPackedBytes, "", false},
		{strings.ToUpper(sha), 10, "sha256", false},
		{sha[:63], 10, "sha256", false},
		{sha, 0, "bytes", false},
		{sha, MaxPackedBytes + 1, "bytes", true},
	} {
		field, _, tooLarge := CheckDeclared(tt.sha, tt.bytes)
		if field != tt.field || tooLarge != tt.tooLarge {
			t.Errorf("CheckDeclared(%.8s…, %d) = %q, %v; want %q, %v", tt.sha, tt.bytes, field, tooLarge, tt.field, tt.tooLarge)
		}
	}
	u := Upload{ID: "up-x", SHA256: sha, Bytes: 10}
	for _, tt := range []struct {
		bytes int64
		sha   string
		want  string
	}{
		{10, sha, ""},
		{10, "", ""},
		{11, sha, "holds 11 bytes, not the 10 declared"},
		{10, strings.Repeat("0", 64), "not the " + sha + " declared"},
	} {
		if got := UploadMismatch(u, tt.bytes, tt.sha); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("UploadMismatch(%d, %.8s) = %q, want %q", tt.bytes, tt.sha, got, tt.want)
		}
	}
	if !IsUploadID("up-06h2k0000000000000000000ab") || IsUploadID("up-../../x") || IsUploadID("job-06h2k0000000000000000000ab") {
		t.Error("IsUploadID takes only up- and 26 base32 characters")
	}
	if got := UploadKey("t1/", "up-1"); got != "t1/uploads/up-1.tar.gz" {
		t.Errorf("UploadKey = %q", got)
	}
}
