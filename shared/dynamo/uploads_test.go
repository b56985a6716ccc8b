package dynamo_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/records"
)

// TestUploads: an upload is found only under the org and app it was made for.
func TestUploads(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewAppStore(db, tables)
	ctx := context.Background()
	u := apps.Upload{ID: "up-06h2k00000000000000000000a", App: "web", SHA256: sha('a'), Bytes: 42, CreatedAt: appNow, ExpiresAt: appNow.Add(apps.UploadFor)}
	if err := s.CreateUpload(ctx, "acme", u); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUpload(ctx, "acme", u); err == nil {
		t.Error("CreateUpload of an id already there succeeded, want it refused")
	}
	got, err := s.Upload(ctx, "acme", "web", u.ID)
	if diff := cmp.Diff(u, got); err != nil || diff != "" {
		t.Errorf("Upload(acme, web) = %v (-want +got):\n%s", err, diff)
	}
	for _, at := range [][2]string{{"beta", "web"}, {"acme", "api"}} {
		if _, err := s.Upload(ctx, at[0], at[1], u.ID); !errors.Is(err, records.ErrNotFound) {
			t.Errorf("Upload(%s, %s) of acme/web's upload = %v, want ErrNotFound", at[0], at[1], err)
		}
	}
	// An upload is no app and no release.
	if list, _, err := s.Apps(ctx, "acme", 10, ""); err != nil || len(list) != 0 {
		t.Errorf("Apps(acme) with only an upload = %v, %v; want none", list, err)
	}
	if err := s.DeleteUpload(ctx, "acme", "web", u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upload(ctx, "acme", "web", u.ID); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Upload after DeleteUpload = %v, want ErrNotFound", err)
	}
	if err := s.DeleteUpload(ctx, "acme", "web", u.ID); err != nil {
		t.Errorf("DeleteUpload again = %v, want nil", err)
	}
}

// TestFailureStaysOnItsRelease: a release's failure, with its lines, is kept on the release after
// a newer release clears the app's.
func TestFailureStaysOnItsRelease(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewAppStore(db, tables)
	ctx := context.Background()
	upload(t, s, "acme", "web", 'a')
	host := apps.HostName("acme", "web", 1, sha('a'), "")
	if err := s.MarkFailed(ctx, "acme", "web", 1, host, "exited: code 1", "boom\n", appNow); err != nil {
		t.Fatal(err)
	}
	upload(t, s, "acme", "web", 'b')
	if a := mustApp(t, s, "acme", "web"); a.FailedWhy != "" {
		t.Errorf("app's failed_why after release 2 = %q, want cleared", a.FailedWhy)
	}
	rel, err := s.Release(ctx, "acme", "web", 1)
	if err != nil || rel.FailedHost != host || rel.FailedWhy != "exited: code 1\nboom" {
		t.Errorf("Release(1) = %+v, %v; want its failure on %s kept", rel, err, host)
	}
	if rel, err := s.Release(ctx, "acme", "web", 2); err != nil || rel.FailedWhy != "" {
		t.Errorf("Release(2) = %+v, %v; want no failure", rel, err)
	}
	if _, err := s.Release(ctx, "beta", "web", 1); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Release(beta/web, 1) = %v, want ErrNotFound", err)
	}
}

// TestRecordRevive keeps each revive's lines with its crash, the last five.
func TestRecordRevive(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewAppStore(db, tables)
	ctx := context.Background()
	upload(t, s, "acme", "web", 'a')
	host := apps.HostName("acme", "web", 1, sha('a'), "")
	long := strings.Repeat("x", 300)
	for i := range 7 {
		lines := make([]string, 60)
		for j := range lines {
			lines[j] = long
		}
		lines[59] = "crash " + string(rune('0'+i))
		if err := s.RecordRevive(ctx, "acme", "web", apps.Revive{Host: host, Release: 1, At: appNow.Add(time.Duration(i) * time.Minute), Lines: lines}); err != nil {
			t.Fatalf("RecordRevive #%d: %v", i, err)
		}
	}
	a := mustApp(t, s, "acme", "web")
	if len(a.Revives) != apps.KeptRevives || len(a.Crashes[host]) != 7 {
		t.Fatalf("after seven revives: %d revives, %d crashes; want %d and 7", len(a.Revives), len(a.Crashes[host]), apps.KeptRevives)
	}
	first, last := a.Revives[0], a.Revives[len(a.Revives)-1]
	if first.Lines[len(first.Lines)-1] != "crash 2" || last.Lines[len(last.Lines)-1] != "crash 6" || !last.At.Equal(appNow.Add(6*time.Minute)) {
		t.Errorf("revives kept from %q to %q (at %s), want crash 2 to crash 6", first.Lines[len(first.Lines)-1], last.Lines[len(last.Lines)-1], last.At)
	}
	if len(last.Lines) >= 60 {
		t.Errorf("a revive kept %d lines of 300 bytes, want them within its bound", len(last.Lines))
	}
	if err := s.RecordRevive(ctx, "acme", "nope", apps.Revive{Host: host, At: appNow}); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("RecordRevive(nope) = %v, want ErrNotFound", err)
	}
}
