// Package ratelimit provides token buckets, one per key, in a bounded set that forgets the least
// recently used: numbers and the time in, a decision out. It reads no clock; the caller passes now.
package ratelimit

import (
	"math"
	"time"
)

// Limit is a bucket's refill rate, in tokens a second, and its size. The zero Limit limits nothing.
type Limit struct {
	Rate  float64
	Burst int
}

// Unlimited reports whether l lets everything through: a rate or a burst of zero or less.
func (l Limit) Unlimited() bool { return l.Rate <= 0 || l.Burst <= 0 }

// Decision is a bucket's answer to one take.
type Decision struct {
	// Allowed is whether the tokens were taken; a refused take takes nothing.
	Allowed bool
	// Wait is how long until the same take would be allowed, when it was not; 0 when it was.
	Wait time.Duration
	// Remaining is how many whole tokens the bucket holds after the take.
	Remaining int
}

// bucket holds tokens as of last. It starts full: a principal's first requests never wait.
type bucket struct {
	tokens float64
	last   time.Time
}

// take refills b for the time since its last take, at most to l.Burst, then takes cost tokens if
// it holds them. A cost above the burst could never be paid, so it is charged as the burst: such a
// request waits for a full bucket and empties it. A clock that went back refills nothing.
func (b *bucket) take(l Limit, cost int, now time.Time) Decision {
	if l.Unlimited() {
		return Decision{Allowed: true, Remaining: math.MaxInt}
	}
	burst := float64(l.Burst)
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(burst, b.tokens+elapsed.Seconds()*l.Rate)
		b.last = now
	}
	// A limit lowered since the last take leaves no more than its new burst.
	b.tokens = min(b.tokens, burst)
	need := min(float64(max(cost, 0)), burst)
	if b.tokens >= need {
		b.tokens -= need
		return Decision{Allowed: true, Remaining: int(b.tokens)}
	}
	wait := time.Duration(math.Ceil((need - b.tokens) / l.Rate * float64(time.Second)))
	return Decision{Wait: wait, Remaining: int(b.tokens)}
}
