package deliveryplan

import (
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	tests := []struct {
		attempts int
		jitter   float64
		want     time.Duration
	}{
		{1, 0.5, 5 * time.Second},
		{2, 0.5, 5 * time.Minute},
		{3, 0.5, 30 * time.Minute},
		{4, 0.5, 2 * time.Hour},
		{5, 0.5, 5 * time.Hour},
		{6, 0.5, 10 * time.Hour},
		{7, 0.5, 10 * time.Hour},
		{40, 0.5, 10 * time.Hour},
		{0, 0.5, 5 * time.Second},
		{1, 0, 4500 * time.Millisecond},
		{2, 0, 270 * time.Second},
		{6, 0.999999, 11*time.Hour - 7200*time.Microsecond},
	}
	for _, tt := range tests {
		got := Delay(tt.attempts, tt.jitter)
		if diff := (got - tt.want).Abs(); diff > time.Millisecond {
			t.Errorf("Delay(%d, %v) = %v, want %v", tt.attempts, tt.jitter, got, tt.want)
		}
	}
}

func TestDelayJitterStaysWithinTenPercent(t *testing.T) {
	for attempts := 1; attempts <= 8; attempts++ {
		base := Delay(attempts, 0.5)
		for _, j := range []float64{0, 0.1, 0.25, 0.75, 0.9, 0.9999} {
			d := Delay(attempts, j)
			if lo, hi := base-base/10, base+base/10; d < lo || d > hi {
				t.Errorf("Delay(%d, %v) = %v, outside [%v, %v]", attempts, j, d, lo, hi)
			}
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{" 7 ", 7 * time.Second},
		{"-5", 0},
		{"soon", 0},
		{"99999999", 10 * time.Hour},
		{"Sat, 01 Mar 2025 12:30:00 GMT", 30 * time.Minute},
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0},
		{"Mon, 10 Mar 2025 12:00:00 GMT", 10 * time.Hour},
	}
	for _, tt := range tests {
		if got := ParseRetryAfter(tt.header, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

// FuzzParseRetryAfter: whatever a receiver sends, the wait is between none and the longest wait
// of the schedule.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", "-1", "99999999999999999999", "Sat, 01 Mar 2025 12:30:00 GMT", "soon"} {
		f.Add(s)
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, h string) {
		if d := ParseRetryAfter(h, now); d < 0 || d > maxRetryAfter {
			t.Errorf("ParseRetryAfter(%q) = %v, outside [0, %v]", h, d, maxRetryAfter)
		}
	})
}
