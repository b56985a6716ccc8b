package ec2spot_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dev/spotprices"
	"github.com/tidegate/tidegate/shared/ec2spot"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// ec2Stand is the dev price endpoint on loopback, behind a handler that records each EC2 request
// and can fail them or shrink their pages.
type ec2Stand struct {
	book *spotprices.Book
	srv  *httptest.Server

	mu       sync.Mutex
	requests []url.Values
	failing  bool
	pageSize int // MaxResults added to each request when not 0
}

func newStand(t *testing.T) *ec2Stand {
	t.Helper()
	s := &ec2Stand{book: &spotprices.Book{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *ec2Stand) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	s.mu.Lock()
	s.requests = append(s.requests, form)
	failing, pageSize := s.failing, s.pageSize
	s.mu.Unlock()
	if failing {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `<Response><Errors><Error><Code>InternalError</Code><Message>An internal error has occurred</Message></Error></Errors><RequestID>x</RequestID></Response>`)
		return
	}
	if pageSize > 0 {
		form.Set("MaxResults", strconv.Itoa(pageSize))
		body = []byte(form.Encode())
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	s.book.Handler().ServeHTTP(w, r)
}

func (s *ec2Stand) set(t *testing.T, region, instanceType string, price float64, at time.Time) {
	t.Helper()
	if err := s.book.Set(region, instanceType, price, at); err != nil {
		t.Fatalf("setting %s %s: %v", region, instanceType, err)
	}
}

func (s *ec2Stand) fail(failing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = failing
}

func (s *ec2Stand) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *ec2Stand) last() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[len(s.requests)-1]
}

// reader is a Reader whose clients are real EC2 clients pointed at the stand. They do not retry,
// so that each Observe that reads is one request to count.
func (s *ec2Stand) reader(log *bytes.Buffer) *ec2spot.Reader {
	r := ec2spot.NewReader(func(region string) ec2spot.Describer {
		return ec2.New(ec2.Options{
			Region:       region,
			BaseEndpoint: aws.String(s.srv.URL),
			Credentials:  credentials.NewStaticCredentialsProvider("AKIDTIDEGATE", "secret", ""),
			HTTPClient:   s.srv.Client(),
			Retryer:      aws.NopRetryer{},
		})
	})
	r.Log = slog.New(slog.DiscardHandler)
	if log != nil {
		r.Log = slog.New(slog.NewTextHandler(log, nil))
	}
	return r
}

func TestObserveAsksForThePriceInEffectNow(t *testing.T) {
	s := newStand(t)
	set := now.Add(-3 * 24 * time.Hour) // set days ago, unchanged since: still the price
	s.set(t, "us-east-1", "g5.xlarge", 0.42, set)
	s.set(t, "us-east-1", "m5.large", 0.031, set)
	s.set(t, "us-west-2", "g5.xlarge", 0.55, set)
	r := s.reader(nil)
	ctx := context.Background()

	if diff := cmp.Diff(known(0.42, "us-east-1a"), r.Observe(ctx, "us-east-1", "g5.xlarge", now)); diff != "" {
		t.Errorf("Observe(us-east-1, g5.xlarge) (-want +got):\n%s", diff)
	}
	want := url.Values{
		"Action": {"DescribeSpotPriceHistory"}, "Version": {"2016-11-15"},
		"InstanceType.1": {"g5.xlarge"}, "ProductDescription.1": {"Linux/UNIX"},
		"StartTime": {now.Format("2006-01-02T15:04:05Z")},
	}
	if diff := cmp.Diff(want, s.last()); diff != "" {
		t.Errorf("the DescribeSpotPriceHistory request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(known(0.55, "us-west-2a"), r.Observe(ctx, "us-west-2", "g5.xlarge", now)); diff != "" {
		t.Errorf("Observe(us-west-2, g5.xlarge) (-want +got):\n%s", diff)
	}
	if o := r.Observe(ctx, "us-east-1", "g5.xlarge", set.Add(-time.Second)); o.Known {
		t.Errorf("Observe(us-east-1, g5.xlarge) before the price was set = %+v, want unknown", o)
	}
}

func TestObserveCachesForTheTTL(t *testing.T) {
	s := newStand(t)
	s.set(t, "us-east-1", "g5.xlarge", 0.55, now.Add(-time.Hour))
	r := s.reader(nil)
	ctx := context.Background()

	r.Observe(ctx, "us-east-1", "g5.xlarge", now)
	s.set(t, "us-east-1", "g5.xlarge", 0.35, now.Add(time.Second))
	got := r.Observe(ctx, "us-east-1", "g5.xlarge", now.Add(ec2spot.DefaultTTL-time.Millisecond))
	if s.count() != 1 || got.Price != 0.55 || !got.CheckedAt.Equal(now) {
		t.Errorf("Observe within the TTL: %d requests, price %v checked %v; want 1 request and the cached 0.55 checked at %v",
			s.count(), got.Price, got.CheckedAt, now)
	}
	later := now.Add(ec2spot.DefaultTTL)
	if diff := cmp.Diff(spotgate.Observation{InstanceType: "g5.xlarge", Price: 0.35, Zone: "us-east-1a", CheckedAt: later, Known: true},
		r.Observe(ctx, "us-east-1", "g5.xlarge", later)); diff != "" || s.count() != 2 {
		t.Errorf("Observe once the TTL ran out, after %d requests (-want +got):\n%s", s.count(), diff)
	}
	if r.Observe(ctx, "us-east-1", "g5.xlarge", now); s.count() != 3 {
		t.Errorf("Observe at a time before the cached observation: %d requests, want it read again (3)", s.count())
	}

	short := s.reader(nil)
	short.TTL = 2 * time.Second
	short.Observe(ctx, "us-east-1", "g5.xlarge", now)
	short.Observe(ctx, "us-east-1", "g5.xlarge", now.Add(2*time.Second))
	if s.count() != 5 {
		t.Errorf("a Reader with a TTL of 2s asked %d times in 2s, want 2", s.count()-3)
	}
}

func TestObserveUnknownInstanceType(t *testing.T) {
	s := newStand(t)
	s.set(t, "us-east-1", "g5.xlarge", 0.42, now.Add(-time.Hour))
	r := s.reader(nil)
	ctx := context.Background()

	want := spotgate.Observation{InstanceType: "x9.huge", CheckedAt: now}
	if diff := cmp.Diff(want, r.Observe(ctx, "us-east-1", "x9.huge", now)); diff != "" {
		t.Errorf("Observe(x9.huge) (-want +got):\n%s", diff)
	}
	r.Observe(ctx, "us-east-1", "x9.huge", now.Add(4*time.Second))
	if s.count() != 1 {
		t.Errorf("an unknown price 4s later: %d requests, want it reused (1)", s.count())
	}
	r.Observe(ctx, "us-east-1", "x9.huge", now.Add(5*time.Second))
	if s.count() != 2 {
		t.Errorf("an unknown price 5s later: %d requests, want it asked again (2), not kept for the TTL", s.count())
	}
}

func TestObserveFailsClosed(t *testing.T) {
	s := newStand(t)
	s.set(t, "us-east-1", "g5.xlarge", 0.42, now.Add(-time.Hour))
	var log bytes.Buffer
	r := s.reader(&log)
	ctx := context.Background()

	s.fail(true)
	if diff := cmp.Diff(unknown, r.Observe(ctx, "us-east-1", "g5.xlarge", now)); diff != "" {
		t.Errorf("Observe while EC2 answers 500 (-want +got):\n%s", diff)
	}
	if n := strings.Count(log.String(), "reading spot prices"); n != 1 || !strings.Contains(log.String(), "InternalError") {
		t.Errorf("log after one failed read:\n%s\nwant one line with the EC2 error", log.String())
	}
	r.Observe(ctx, "us-east-1", "g5.xlarge", now.Add(time.Second))
	if s.count() != 1 {
		t.Errorf("a failed read 1s later: %d requests, want it reused (1)", s.count())
	}
	s.fail(false)
	later := now.Add(5 * time.Second)
	want := spotgate.Observation{InstanceType: "g5.xlarge", Price: 0.42, Zone: "us-east-1a", CheckedAt: later, Known: true}
	if diff := cmp.Diff(want, r.Observe(ctx, "us-east-1", "g5.xlarge", later)); diff != "" {
		t.Errorf("Observe 5s after a failure, EC2 well again (-want +got):\n%s", diff)
	}

	none := ec2spot.NewReader(func(string) ec2spot.Describer { return nil })
	none.Log = slog.New(slog.DiscardHandler)
	if o := none.Observe(ctx, "eu-west-9", "g5.xlarge", now); o.Known {
		t.Errorf("Observe in a region without a client = %+v, want unknown", o)
	}
}

func TestObserveMany(t *testing.T) {
	s := newStand(t)
	s.set(t, "us-east-1", "g5.xlarge", 0.42, now.Add(-time.Hour))
	s.set(t, "us-east-1", "m5.large", 0.031, now.Add(-time.Hour))
	r := s.reader(nil)
	ctx := context.Background()

	got := r.ObserveMany(ctx, "us-east-1", []string{"g5.xlarge", "x9.huge", "g5.xlarge", "m5.large"}, now)
	want := map[string]spotgate.Observation{
		"g5.xlarge": known(0.42, "us-east-1a"),
		"m5.large":  {InstanceType: "m5.large", Price: 0.031, Zone: "us-east-1a", CheckedAt: now, Known: true},
		"x9.huge":   {InstanceType: "x9.huge", CheckedAt: now},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ObserveMany (-want +got):\n%s", diff)
	}
	if s.count() != 1 || s.last().Get("InstanceType.3") != "m5.large" || s.last().Has("InstanceType.4") {
		t.Errorf("ObserveMany of three distinct types: %d requests, the last %v; want one asking for each once", s.count(), s.last())
	}
	s.set(t, "us-east-1", "c5.large", 0.05, now.Add(-time.Hour))
	r.ObserveMany(ctx, "us-east-1", []string{"g5.xlarge", "c5.large"}, now.Add(time.Second))
	if s.count() != 2 || s.last().Get("InstanceType.1") != "c5.large" || s.last().Has("InstanceType.2") {
		t.Errorf("ObserveMany with one type cached: the last request %v, want c5.large alone", s.last())
	}
}

func TestObserveReadsEveryPage(t *testing.T) {
	s := newStand(t)
	s.set(t, "us-east-1", "g5.xlarge", 0.42, now.Add(-time.Hour))
	s.set(t, "us-east-1", "m5.large", 0.031, now.Add(-time.Hour))
	s.pageSize = 1 // before the first request, so unguarded
	r := s.reader(nil)

	got := r.ObserveMany(context.Background(), "us-east-1", []string{"g5.xlarge", "m5.large"}, now)
	if !got["g5.xlarge"].Known || !got["m5.large"].Known {
		t.Errorf("ObserveMany over pages of one price = %+v, want both known", got)
	}
	if s.count() != 6 {
		t.Errorf("ObserveMany of 2 types in 3 zones at one price a page: %d requests, want 6", s.count())
	}
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func known(price float64, zone string) spotgate.Observation {
	return spotgate.Observation{InstanceType: "g5.xlarge", Price: price, Zone: zone, CheckedAt: now, Known: true}
}

var unknown = spotgate.Observation{InstanceType: "g5.xlarge", CheckedAt: now}

func TestZonePrices(t *testing.T) {
	s := newStand(t)
	s.set(t, "us-east-1", "g5.xlarge", 0.42, now.Add(-time.Hour))
	r := s.reader(nil)
	ctx := context.Background()

	got := r.ZonePrices(ctx, "us-east-1", []string{"g5.xlarge", "x9.huge"}, now)
	want := map[string]map[string]float64{
		"g5.xlarge": {"us-east-1a": 0.42, "us-east-1b": 0.42, "us-east-1c": 0.42},
		"x9.huge":   {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ZonePrices (-want +got):\n%s", diff)
	}
	// The same cache serves the gate: an observation a moment later asks EC2 nothing.
	if o := r.Observe(ctx, "us-east-1", "g5.xlarge", now.Add(time.Second)); !o.Known || o.Price != 0.42 || s.count() != 1 {
		t.Errorf("Observe after ZonePrices = %+v after %d requests, want 0.42 from the cache", o, s.count())
	}
	s.fail(true)
	if got := r.ZonePrices(ctx, "us-east-2", []string{"g5.xlarge"}, now); len(got["g5.xlarge"]) != 0 {
		t.Errorf("ZonePrices with EC2 failing = %v, want no zones", got)
	}
}
