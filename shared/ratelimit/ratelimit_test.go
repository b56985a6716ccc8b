package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// take is one call of a scripted sequence: cost tokens at t0+at.
type take struct {
	at   time.Duration
	cost int
	want Decision
}

func TestBucketTake(t *testing.T) {
	two := Limit{Rate: 2, Burst: 4}
	tests := []struct {
		name  string
		limit Limit
		takes []take
	}{
		{name: "a full bucket lets its burst through at once, then the next waits one token's time", limit: two, takes: []take{
			{0, 1, Decision{Allowed: true, Remaining: 3}},
			{0, 1, Decision{Allowed: true, Remaining: 2}},
			{0, 1, Decision{Allowed: true, Remaining: 1}},
			{0, 1, Decision{Allowed: true, Remaining: 0}},
			{0, 1, Decision{Wait: 500 * time.Millisecond}},
		}},
		{name: "time refills at the rate, never past the burst", limit: two, takes: []take{
			{0, 4, Decision{Allowed: true, Remaining: 0}},
			{time.Second, 1, Decision{Allowed: true, Remaining: 1}},
			{time.Hour, 0, Decision{Allowed: true, Remaining: 4}},
		}},
		{name: "a costly take waits for all its tokens, and a refused take takes nothing", limit: two, takes: []take{
			{0, 3, Decision{Allowed: true, Remaining: 1}},
			{0, 3, Decision{Wait: time.Second, Remaining: 1}},
			{0, 1, Decision{Allowed: true, Remaining: 0}},
			{1500 * time.Millisecond, 3, Decision{Allowed: true, Remaining: 0}},
		}},
		{name: "a cost above the burst is charged as the burst", limit: two, takes: []take{
			{0, 10, Decision{Allowed: true, Remaining: 0}},
			{0, 10, Decision{Wait: 2 * time.Second}},
			{2 * time.Second, 10, Decision{Allowed: true, Remaining: 0}},
		}},
		{name: "a clock that goes back refills nothing", limit: two, takes: []take{
			{time.Minute, 4, Decision{Allowed: true, Remaining: 0}},
			{0, 1, Decision{Wait: 500 * time.Millisecond}},
			{time.Minute + 500*time.Millisecond, 1, Decision{Allowed: true, Remaining: 0}},
		}},
		{name: "a fractional rate", limit: Limit{Rate: 0.25, Burst: 1}, takes: []take{
			{0, 1, Decision{Allowed: true, Remaining: 0}},
			{3 * time.Second, 1, Decision{Wait: time.Second}},
			{4 * time.Second, 1, Decision{Allowed: true, Remaining: 0}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bucket{tokens: float64(tt.limit.Burst), last: t0}
			for i, tk := range tt.takes {
				got := b.take(tt.limit, tk.cost, t0.Add(tk.at))
				if diff := cmp.Diff(tk.want, got); diff != "" {
					t.Fatalf("take %d (cost %d at +%s) under %+v (-want +got):\n%s", i, tk.cost, tk.at, tt.limit, diff)
				}
			}
		})
	}
}

func TestBucketLimitLowered(t *testing.T) {
	b := bucket{tokens: 100, last: t0}
	got := b.take(Limit{Rate: 1, Burst: 5}, 1, t0)
	if want := (Decision{Allowed: true, Remaining: 4}); got != want {
		t.Errorf("take from a bucket of 100 under a burst lowered to 5 = %+v, want %+v", got, want)
	}
}

func TestUnlimited(t *testing.T) {
	s := NewBuckets(4)
	for _, l := range []Limit{{}, {Rate: 0, Burst: 5}, {Rate: 5, Burst: 0}, {Rate: -1, Burst: -1}} {
		for range 1000 {
			if d := s.Take("k", l, 1000, t0); !d.Allowed {
				t.Fatalf("Take under %+v = %+v, want allowed", l, d)
			}
		}
	}
	if s.Len() != 0 {
		t.Errorf("after unlimited takes, Len = %d, want no bucket kept", s.Len())
	}
}

func TestBucketsKeysAreApart(t *testing.T) {
	s := NewBuckets(16)
	l := Limit{Rate: 1, Burst: 2}
	s.Take("a", l, 2, t0)
	if d := s.Take("a", l, 1, t0); d.Allowed {
		t.Errorf("Take(a) after a's burst = %+v, want refused", d)
	}
	if d := s.Take("b", l, 2, t0); !d.Allowed {
		t.Errorf("Take(b) after a's burst = %+v, want allowed: b's bucket is its own", d)
	}
}

// TestBucketsForgetLeastRecentlyUsed: past the bound, the bucket used longest ago goes, and a key
// used since stays, still empty.
func TestBucketsForgetLeastRecentlyUsed(t *testing.T) {
	const n = 3
	s := NewBuckets(n)
	l := Limit{Rate: 0.001, Burst: 1}
	for i := range n {
		s.Take(fmt.Sprint(i), l, 1, t0) // each empty now
	}
	s.Take("0", l, 1, t0) // 0 is the most recently used
	s.Take("new", l, 1, t0)
	if s.Len() != n {
		t.Errorf("Len = %d after %d keys, want the bound %d", s.Len(), n+1, n)
	}
	if d := s.Take("0", l, 1, t0); d.Allowed {
		t.Errorf("Take(0) = %+v, want refused: 0 was used recently and kept its empty bucket", d)
	}
	if d := s.Take("1", l, 1, t0); !d.Allowed {
		t.Errorf("Take(1) = %+v, want allowed: 1 was the least recently used, so forgotten, and starts full", d)
	}
}

func TestBucketsConcurrentTakesPayOnce(t *testing.T) {
	s := NewBuckets(8)
	l := Limit{Rate: 1, Burst: 100}
	allowed := make(chan bool, 400)
	for range 4 {
		go func() {
			for range 100 {
				allowed <- s.Take("k", l, 1, t0).Allowed
			}
		}()
	}
	n := 0
	for range 400 {
		if <-allowed {
			n++
		}
	}
	if n != 100 {
		t.Errorf("400 concurrent takes from a bucket of 100: %d allowed, want 100", n)
	}
}
