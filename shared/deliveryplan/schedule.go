package deliveryplan

import (
	"strconv"
	"strings"
	"time"
)

// schedule is the wait before each retry, Standard Webhooks' reference schedule: after the first
// attempt (made at once) 5 s, then 5 min, 30 min, 2 h, 5 h, and 10 h after every later one.
var schedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour}

// jitterSpread is the most a wait moves either way (±10 %), so endpoints that failed together are
// not all retried in the same second.
const jitterSpread = 0.10

// Delay is the wait after attempt number attempts (1 for the first) has failed. jitter in [0, 1)
// moves it within ±10 %; 0.5 leaves it as scheduled.
func Delay(attempts int, jitter float64) time.Duration {
	i := min(max(attempts, 1), len(schedule)) - 1
	base := schedule[i]
	return base + time.Duration(float64(base)*jitterSpread*(2*jitter-1))
}

// maxRetryAfter bounds a receiver's Retry-After: no longer than the schedule's longest wait.
var maxRetryAfter = schedule[len(schedule)-1]

// httpDate is RFC 9110's preferred date format, which Retry-After uses when it is not seconds.
const httpDate = "Mon, 02 Jan 2006 15:04:05 GMT"

// ParseRetryAfter reads a Retry-After header, seconds or an HTTP date, as a wait from now; 0 when
// absent, malformed or past. It is capped at the schedule's longest wait.
func ParseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		d = time.Duration(min(max(secs, 0), int64(maxRetryAfter/time.Second))) * time.Second
	} else if at, err := time.Parse(httpDate, h); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}
