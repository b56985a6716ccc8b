package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/records"
)

var appNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func sha(c byte) string { return strings.Repeat(string(c), 64) }

func upload(t *testing.T, s *dynamo.AppStore, org, app string, c byte) apps.Release {
	t.Helper()
	r, err := s.CreateRelease(context.Background(), org, apps.Release{App: app, SHA256: sha(c), Bytes: 100, Note: "n", CreatedAt: appNow})
	if err != nil {
		t.Fatalf("CreateRelease(%s/%s): %v", org, app, err)
	}
	return r
}

func mustApp(t *testing.T, s *dynamo.AppStore, org, name string) apps.App {
	t.Helper()
	a, err := s.App(context.Background(), org, name)
	if err != nil {
		t.Fatalf("App(%s/%s): %v", org, name, err)
	}
	return a
}

func TestAppReleases(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewAppStore(db, tables)
	ctx := context.Background()

	if r := upload(t, s, "acme", "web", 'a'); r.Number != 1 {
		t.Errorf("first release = %d, want 1", r.Number)
	}
	want := apps.App{Org: "acme", Name: "web", Release: 1, SHA256: sha('a'), State: apps.StateDeploying, CreatedAt: appNow, UpdatedAt: appNow}
	if diff := cmp.Diff(want, mustApp(t, s, "acme", "web")); diff != "" {
		t.Errorf("App after the first release (-want +got):\n%s", diff)
	}
	if r := upload(t, s, "acme", "web", 'b'); r.Number != 2 {
		t.Errorf("second release = %d, want 2", r.Number)
	}
	upload(t, s, "acme", "api", 'c')
	upload(t, s, "acme-x", "web", 'd') // an org whose name starts like acme's
	upload(t, s, "acm", "web", 'e')

	list, next, err := s.Apps(ctx, "acme", 1, "")
	if err != nil || len(list) != 1 || list[0].Name != "api" || next != "api" {
		t.Fatalf("Apps(acme, limit 1) = %v, %q, %v; want api and a cursor", list, next, err)
	}
	list, next, err = s.Apps(ctx, "acme", 10, next)
	if err != nil || len(list) != 1 || list[0].Name != "web" || list[0].Org != "acme" || next != "" {
		t.Errorf("Apps(acme, after api) = %v, %q, %v; want web alone, no cursor", list, next, err)
	}

	rb, err := s.Rollback(ctx, "acme", "web", 1, appNow.Add(time.Minute))
	if err != nil || rb.Number != 3 || rb.SHA256 != sha('a') || rb.RollbackOf != 1 || rb.Bytes != 100 {
		t.Errorf("Rollback(web, 1) = %+v, %v; want release 3 with release 1's sources", rb, err)
	}
	if _, err := s.Rollback(ctx, "acme", "web", 9, appNow); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Rollback(web, 9) = %v, want ErrNotFound", err)
	}
	if _, err := s.Rollback(ctx, "acme", "nope", 1, appNow); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Rollback(nope, 1) = %v, want ErrNotFound", err)
	}

	var got []int
	cursor := ""
	for {
		rs, next, err := s.Releases(ctx, "acme", "web", 2, cursor)
		if err != nil {
			t.Fatalf("Releases(web, cursor %q): %v", cursor, err)
		}
		for _, r := range rs {
			got = append(got, r.Number)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if diff := cmp.Diff([]int{3, 2, 1}, got); diff != "" {
		t.Errorf("Releases(web) page by page (-want +got):\n%s", diff)
	}

	hosting, err := s.Hosting(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range hosting {
		names = append(names, a.Org+"/"+a.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"acm/web", "acme-x/web", "acme/api", "acme/web"}, names); diff != "" {
		t.Errorf("Hosting (-want +got):\n%s", diff)
	}
	ofAcme, err := s.Hosting(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, a := range ofAcme {
		names = append(names, a.Org+"/"+a.Name)
	}
	if diff := cmp.Diff([]string{"acme/api", "acme/web"}, names); diff != "" {
		t.Errorf("Hosting(acme), beside orgs acm and acme-x (-want +got):\n%s", diff)
	}
}

// TestConcurrentReleases: uploads racing to one app each get their own number, with no gaps.
func TestConcurrentReleases(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewAppStore(db, tables)
	const n = 8
	var wg sync.WaitGroup
	numbers := make(chan int, n)
	for i := range n {
		wg.Go(func() {
			r, err := s.CreateRelease(context.Background(), "acme", apps.Release{App: "web", SHA256: sha(byte('a' + i)), CreatedAt: appNow})
			if err != nil {
				t.Errorf("CreateRelease #%d: %v", i, err)
				return
			}
			numbers <- r.Number
		})
	}
	wg.Wait()
	close(numbers)
	var got []int
	for n := range numbers {
		got = append(got, n)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5, 6, 7, 8}, got); diff != "" {
		t.Errorf("numbers of %d racing uploads (-want +got):\n%s", n, diff)
	}
	if a := mustApp(t, s, "acme", "web"); a.Release != n {
		t.Errorf("app's release = %d, want %d", a.Release, n)
	}
}

// undeliveredEvents reads the outbox's undelivered index as it is stored.
func undeliveredEvents(t *testing.T, db *dynamodb.Client, tables dynamo.Tables) []outbox.Event {
	t.Helper()
	out, err := db.Query(context.Background(), &dynamodb.QueryInput{
		TableName: &tables.Events, IndexName: aws.String("gsi1"),
		KeyConditionExpression:    aws.String("gsi1pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "undelivered"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var evs []outbox.Event
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &evs); err != nil {
		t.Fatal(err)
	}
	return evs
}

// Two pods' UIDs, as the API server makes them: two incarnations of one host.
const (
	podA = "6f1c2a9e-0b7d-4c1e-9a52-3d8e4f1b2c3a"
	podB = "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a"
)

// TestHostLifecycle walks a host from its token to live, then a newer release's host to failed.
func TestHostLifecycle(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewAppStore(db, tables)
	ctx := context.Background()
	upload(t, s, "acme", "web", 'a')
	h1 := apps.HostName("acme", "web", 1, sha('a'), "")

	if _, _, err := s.Register(ctx, h1, podA, "tgh_x", appNow); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Register before any token = %v, want ErrNotFound", err)
	}
	tok1, err := s.MintHostToken(ctx, "acme", "web", h1)
	if err != nil || !strings.HasPrefix(tok1, "tgh_") {
		t.Fatalf("MintHostToken = %q, %v", tok1, err)
	}
	if _, _, err := s.Register(ctx, h1, podA, tok1+"x", appNow); !errors.Is(err, dynamo.ErrBadHostToken) {
		t.Errorf("Register(wrong token) = %v, want ErrBadHostToken", err)
	}
	if org, app, err := s.Register(ctx, h1, podA, tok1, appNow); err != nil || org != "acme" || app != "web" {
		t.Fatalf("Register(right token) = %s, %s, %v; want acme, web", org, app, err)
	}
	if a := mustApp(t, s, "acme", "web"); a.Registered != h1 || a.RegisteredPod != podA || a.TokenHost != h1 {
		t.Errorf("after Register: registered %q by pod %q, token host %q; want %s by %s, token host %s", a.Registered, a.RegisteredPod, a.TokenHost, h1, podA, h1)
	}
	// The same host's process in another pod (the host started again) registers that pod instead,
	// and when.
	later := appNow.Add(time.Minute)
	if _, _, err := s.Register(ctx, h1, podB, tok1, later); err != nil {
		t.Fatalf("Register(another pod of the host) = %v", err)
	}
	if a := mustApp(t, s, "acme", "web"); a.RegisteredPod != podB || !a.RegisteredAt.Equal(later) {
		t.Errorf("after the host's next pod registered: registered pod %q at %v, want %s at %v", a.RegisteredPod, a.RegisteredAt, podB, later)
	}
	if err := s.MarkLive(ctx, "acme", "web", h1, 1, appNow); err != nil {
		t.Fatalf("MarkLive: %v", err)
	}
	if a := mustApp(t, s, "acme", "web"); a.State != apps.StateLive || a.LiveHost != h1 || a.LiveRelease != 1 {
		t.Errorf("after MarkLive: %+v, want live on %s release 1", a, h1)
	}
	if _, err := s.MintHostToken(ctx, "other", "web", h1); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("MintHostToken for an app that does not exist = %v, want ErrNotFound", err)
	}
	upload(t, s, "other", "site", 'z')
	if _, err := s.MintHostToken(ctx, "other", "site", h1); !errors.Is(err, dynamo.ErrHostTaken) {
		t.Errorf("MintHostToken(another app, the same host name) = %v, want ErrHostTaken", err)
	}

	upload(t, s, "acme", "web", 'b')
	h2 := apps.HostName("acme", "web", 2, sha('b'), "")
	if _, err := s.MintHostToken(ctx, "acme", "web", h2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Register(ctx, h1, podA, tok1, appNow); !errors.Is(err, dynamo.ErrHostNotWanted) {
		t.Errorf("Register(the old host, once the app wants another) = %v, want ErrHostNotWanted", err)
	}
	if err := s.MarkLive(ctx, "acme", "web", h1, 1, appNow); !errors.Is(err, records.ErrStale) {
		t.Errorf("MarkLive(release 1, after release 2 was uploaded) = %v, want ErrStale", err)
	}
	lines := strings.Repeat("npm ERR! something\n", 400) + "last line\n"
	if err := s.MarkFailed(ctx, "acme", "web", 2, h2, "the process exited before it registered", lines, appNow); err != nil {
		t.Fatalf("MarkFailed: %v", err)
	}
	a := mustApp(t, s, "acme", "web")
	if a.State != apps.StateFailed || !a.Failed() || a.FailedHost != h2 || a.LiveHost != h1 {
		t.Errorf("after MarkFailed: %+v, want failed on %s, %s still live", a, h2, h1)
	}
	if !strings.HasPrefix(a.FailedWhy, "the process exited before it registered\nnpm ERR!") || !strings.HasSuffix(a.FailedWhy, "last line") || len(a.FailedWhy) > 4096 {
		t.Errorf("failed_why = %d bytes %q…, want the reason then the last lines within 4 KiB", len(a.FailedWhy), a.FailedWhy[:60])
	}
	// Hostile: the app.failed event goes to every tenant of the org, a member's webhooks too; it
	// carries the reason and none of what the host printed.
	var failed []outbox.Event
	for _, ev := range undeliveredEvents(t, db, tables) {
		if ev.Type == outbox.AppFailed {
			failed = append(failed, ev)
		}
	}
	if len(failed) != 1 || failed[0].Data["reason"] != "the process exited before it registered" || strings.Contains(fmt.Sprint(failed[0].Data), "npm ERR!") {
		t.Errorf("app.failed events after MarkFailed = %+v, want one with the reason and no log line", failed)
	}
	tok2, _ := s.MintHostToken(ctx, "acme", "web", h2)
	if _, _, err := s.Register(ctx, h2, podA, tok2, appNow); !errors.Is(err, dynamo.ErrHostNotWanted) {
		t.Errorf("Register(the failed release's host) = %v, want ErrHostNotWanted", err)
	}
	if err := s.MarkFailed(ctx, "ghost", "web", 1, "h", "r", "", appNow); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("MarkFailed(an app that does not exist) = %v, want ErrNotFound", err)
	}

	var types []string
	for _, ev := range undeliveredEvents(t, db, tables) {
		types = append(types, fmt.Sprintf("%s %v %v %v", ev.Type, ev.Data["org"], ev.Data["app"], ev.Data["host"]))
	}
	slices.Sort(types)
	if diff := cmp.Diff([]string{"app.failed acme web " + h2, "app.live acme web " + h1}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	stopped, err := s.SetStopped(ctx, "acme", "web", true, appNow)
	if err != nil || stopped.State != apps.StateStopped || stopped.LiveHost != "" || stopped.Registered != "" || stopped.RegisteredPod != "" || !stopped.RegisteredAt.IsZero() || stopped.TokenHost != "" {
		t.Errorf("SetStopped(true) = %+v, %v; want stopped with nothing live, registered or tokened", stopped, err)
	}
	if err := s.MarkLive(ctx, "acme", "web", h2, 2, appNow); !errors.Is(err, records.ErrStale) {
		t.Errorf("MarkLive on a stopped app = %v, want ErrStale", err)
	}
	started, err := s.SetStopped(ctx, "acme", "web", false, appNow)
	if err != nil || started.State != apps.StateDeploying || started.FailedWhy != "" || started.FailedRelease != 0 {
		t.Errorf("SetStopped(false) = %+v, %v; want deploying with no failure", started, err)
	}
	if err := s.MarkLive(ctx, "acme", "web", h2, 2, appNow); err != nil {
		t.Fatal(err)
	}
	if again, err := s.SetStopped(ctx, "acme", "web", false, appNow); err != nil || again.State != apps.StateLive {
		t.Errorf("starting a live app = %+v, %v; want it unchanged, live", again, err)
	}
	if _, err := s.SetStopped(ctx, "acme", "nope", true, appNow); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("SetStopped(nope) = %v, want ErrNotFound", err)
	}
}

func TestRecordCrash(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewAppStore(db, tables)
	ctx := context.Background()
	upload(t, s, "acme", "web", 'a')
	if err := s.RecordCrash(ctx, "acme", "web", "old-host", appNow.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var want []time.Time
	for i := range 12 {
		at := appNow.Add(time.Duration(i) * time.Minute)
		if err := s.RecordCrash(ctx, "acme", "web", "web-r1-abc", at); err != nil {
			t.Fatalf("RecordCrash #%d: %v", i, err)
		}
		want = append(want, at)
	}
	got := mustApp(t, s, "acme", "web").Crashes
	if diff := cmp.Diff(map[string][]time.Time{"web-r1-abc": want[2:]}, got); diff != "" {
		t.Errorf("crashes after twelve of one host and one two days old of another (-want +got):\n%s", diff)
	}
	if err := s.RecordCrash(ctx, "acme", "nope", "h", appNow); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("RecordCrash(nope) = %v, want ErrNotFound", err)
	}
}

// TestAppDelete removes an app with more items than one transaction takes.
func TestAppDelete(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewAppStore(db, tables)
	ctx := context.Background()
	for range 105 {
		upload(t, s, "acme", "web", 'a')
	}
	upload(t, s, "acme", "keep", 'k')
	host := apps.HostName("acme", "web", 105, sha('a'), "")
	tok, err := s.MintHostToken(ctx, "acme", "web", host)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "acme", "web"); err != nil {
		t.Fatalf("Delete(web): %v", err)
	}
	if _, err := s.App(ctx, "acme", "web"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("App(web) after Delete = %v, want ErrNotFound", err)
	}
	if rs, _, err := s.Releases(ctx, "acme", "web", 10, ""); err != nil || len(rs) != 0 {
		t.Errorf("Releases(web) after Delete = %d, %v; want none", len(rs), err)
	}
	if _, _, err := s.Register(ctx, host, podA, tok, appNow); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Register after Delete = %v, want ErrNotFound: the host's token went with the app", err)
	}
	if hosting, err := s.Hosting(ctx, ""); err != nil || len(hosting) != 1 || hosting[0].Name != "keep" {
		t.Errorf("Hosting after Delete = %v, %v; want only keep", hosting, err)
	}
	if err := s.Delete(ctx, "acme", "web"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Delete(web) again = %v, want ErrNotFound", err)
	}
	if r := upload(t, s, "acme", "web", 'b'); r.Number != 1 {
		t.Errorf("an app made again after Delete starts at release %d, want 1", r.Number)
	}
}

func TestSecretStore(t *testing.T) {
	tables, db := testenv.Tables(t)
	s := dynamo.NewSecretStore(db, tables.Control)
	ctx := context.Background()
	empty, err := s.Digest(ctx, "acme")
	if err != nil || empty != apps.SecretsDigest(nil) {
		t.Errorf("Digest(no secrets) = %q, %v; want the digest of nothing", empty, err)
	}
	if created, err := s.Put(ctx, "acme", "API_KEY", "sealed-1", "fp-1", appNow); err != nil || !created {
		t.Errorf("Put(new) = %v, %v; want created", created, err)
	}
	d1, _ := s.Digest(ctx, "acme")
	if created, err := s.Put(ctx, "acme", "API_KEY", "sealed-2", "fp-2", appNow.Add(time.Minute)); err != nil || created {
		t.Errorf("Put(again) = %v, %v; want replaced, not created", created, err)
	}
	d2, _ := s.Digest(ctx, "acme")
	if d1 == empty || d2 == d1 || d2 != apps.SecretsDigest(map[string]string{"API_KEY": "fp-2"}) {
		t.Errorf("Digests %s → %s → %s; want each change to change it, ending at the digest of API_KEY=fp-2", empty, d1, d2)
	}
	if _, err := s.Put(ctx, "other", "DB_URL", "sealed-3", "fp-3", appNow); err != nil {
		t.Fatal(err)
	}
	names, next, err := s.Names(ctx, "acme", 10, "")
	if diff := cmp.Diff([]dynamo.SecretName{{Name: "API_KEY", UpdatedAt: appNow.Add(time.Minute)}}, names); diff != "" || err != nil || next != "" {
		t.Errorf("Names(acme) = %v, %v (-want +got):\n%s", next, err, diff)
	}
	if sealed, err := s.Sealed(ctx, "acme"); err != nil || !cmp.Equal(sealed, map[string]string{"API_KEY": "sealed-2"}) {
		t.Errorf("Sealed(acme) = %v, %v; want API_KEY's latest", sealed, err)
	}
	if err := s.Delete(ctx, "acme", "API_KEY"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "acme", "API_KEY"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Delete(again) = %v, want ErrNotFound", err)
	}
	if d, _ := s.Digest(ctx, "acme"); d != empty {
		t.Errorf("Digest after deleting the last secret = %s, want the digest of nothing", d)
	}

	for i := range apps.MaxSecrets {
		if _, err := s.Put(ctx, "acme", fmt.Sprintf("S%02d", i), "x", "f", appNow); err != nil {
			t.Fatalf("Put #%d: %v", i, err)
		}
	}
	if _, err := s.Put(ctx, "acme", "ONE_TOO_MANY", "x", "f", appNow); !errors.Is(err, dynamo.ErrTooManySecrets) {
		t.Errorf("Put(secret %d) = %v, want ErrTooManySecrets", apps.MaxSecrets+1, err)
	}
	if _, err := s.Put(ctx, "acme", "S00", "y", "g", appNow); err != nil {
		t.Errorf("replacing a secret at the limit = %v, want it allowed", err)
	}
	page, next, err := s.Names(ctx, "acme", 20, "S09")
	if err != nil || len(page) != 20 || page[0].Name != "S10" || next != "S29" {
		t.Errorf("Names(after S09, 20) = %d names from %v, next %q, %v; want S10…S29", len(page), page[:1], next, err)
	}
}
