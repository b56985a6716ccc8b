package ratelimit

import (
	"container/list"
	"sync"
	"time"
)

// Buckets are token buckets by key, at most a fixed number of them: taking for a new key when the
// set is full forgets the least recently used bucket. A forgotten key starts again with a full
// bucket, which is what an idle one holds anyway once Burst/Rate seconds have passed. It is safe
// for concurrent use.
type Buckets struct {
	max int

	mu    sync.Mutex
	byKey map[string]*list.Element // of *entry
	order *list.List               // most recently used first
}

type entry struct {
	key string
	b   bucket
}

// NewBuckets keeps at most limit buckets (at least one).
func NewBuckets(limit int) *Buckets {
	return &Buckets{max: max(limit, 1), byKey: make(map[string]*list.Element), order: list.New()}
}

// Take takes cost tokens from key's bucket under limit l at now. A key seen for the first time
// starts with a full bucket. An unlimited l decides without keeping a bucket.
func (s *Buckets) Take(key string, l Limit, cost int, now time.Time) Decision {
	if l.Unlimited() {
		return (&bucket{}).take(l, cost, now)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byKey[key]
	if ok {
		s.order.MoveToFront(el)
	} else {
		if s.order.Len() >= s.max {
			oldest := s.order.Back()
			s.order.Remove(oldest)
			delete(s.byKey, oldest.Value.(*entry).key)
		}
		el = s.order.PushFront(&entry{key: key, b: bucket{tokens: float64(l.Burst), last: now}})
		s.byKey[key] = el
	}
	return el.Value.(*entry).b.take(l, cost, now)
}

// Len is how many buckets are kept.
func (s *Buckets) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}
