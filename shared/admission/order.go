package admission

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// Dispatch order is priority descending, then CreatedAt ascending, then ID ascending.
//
// The issue asks Decide over 100,000 queued jobs to be linear (t(2N)/t(N) ≤ 2.3). A comparison
// sort's log factor and cache misses overshoot that, so the queue is radix-sorted on one 64-bit
// word a job, which also carries what the walk reads, so the walk need not reach back into the
// candidates in dispatch order (a cache miss a job). From the top, a word holds:
//
//	7 bits   MaxPriority minus the priority, so higher priorities sort first
//	age      the job's age in the queue in microseconds, shifted down when the queue's oldest
//	         and newest jobs are too far apart for the bits left; jobs whose priority and age
//	         tie are put in exact order (CreatedAt, then ID) by a last pass, and such runs are
//	         short
//	2 bits   the job's price verdict: none, unknown price or above its cap
//	index    the job's index among the candidates
//
// The sort reads the priority and the age only; words that tie on them are left in no
// particular order for the last pass to order exactly.
//
// A priority outside 0–100, which the API never accepts, counts as the nearer bound.
type word uint64

const (
	prioBits    = 7 // MaxPriority-MinPriority is 100
	verdictBits = 2
)

var _ [1<<prioBits - 1 - (jobs.MaxPriority - jobs.MinPriority)]struct{} // 0–100 must fit

// UnixMicro is exact for times up to this many seconds either side of 1970 (292,000 years); a
// time beyond counts as that bound in the word, and the last pass orders it exactly.
const microSafeSec = math.MaxInt64/1_000_000 - 1

// verdict is a job's price verdict as a word holds it.
type verdict uint8

const (
	open verdict = iota
	unknownPrice
	aboveCap
)

var verdictReasons = [...]Reason{open: "", unknownPrice: ReasonSpotPriceUnknown, aboveCap: ReasonSpotPriceAboveCap}

// layout says where a word's fields are, for a queue of some length.
type layout struct{ idxBits int }

func layoutFor(n int) layout { return layout{bits.Len(uint(max(n, 1) - 1))} }

func (l layout) index(w word) int       { return int(uint64(w) & (1<<l.idxBits - 1)) }
func (l layout) verdict(w word) verdict { return verdict(w >> l.idxBits & (1<<verdictBits - 1)) }
func (l layout) priority(w word) int    { return jobs.MaxPriority - int(w>>(64-prioBits)) }
func (l layout) sortKey(w word) uint64  { return uint64(w) >> l.sortFrom() }
func (l layout) sortFrom() int          { return l.idxBits + verdictBits }
func (l layout) ageBits() int           { return 64 - prioBits - l.sortFrom() }
func (l layout) pack(p int, age uint64, v verdict, i int) word {
	return word(uint64(jobs.MaxPriority-p)<<(64-prioBits) | age<<l.sortFrom() | uint64(v)<<l.idxBits | uint64(i))
}

// dispatchOrder is the candidates' words in dispatch order.
func dispatchOrder(candidates []Candidate, prices map[string]spotgate.Observation) ([]word, layout) {
	l := layoutFor(len(candidates))
	if len(candidates) == 0 {
		return nil, l
	}
	oldest, newest := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range candidates {
		us := micros(candidates[i].CreatedAt)
		oldest, newest = min(oldest, us), max(newest, us)
	}
	// The true span is under 2⁶⁴, so the unsigned difference is exact.
	shift := max(0, bits.Len64(uint64(newest)-uint64(oldest))-l.ageBits())
	ws := make([]word, len(candidates))
	for i := range candidates {
		c := &candidates[i]
		age := (uint64(micros(c.CreatedAt)) - uint64(oldest)) >> shift
		ws[i] = l.pack(clampPriority(c.Priority), age, gate(c.Spot, prices), i)
	}
	if !inOrder(ws, l) {
		radixSort(ws, l.sortFrom())
	}
	breakTies(ws, l, candidates)
	return ws, l
}

// micros is t in Unix microseconds, held to the range where that is exact.
func micros(t time.Time) int64 {
	switch sec := t.Unix(); {
	case sec > microSafeSec:
		return microSafeSec * 1_000_000
	case sec < -microSafeSec:
		return -microSafeSec * 1_000_000
	}
	return t.UnixMicro()
}

func clampPriority(p int) int { return min(max(p, jobs.MinPriority), jobs.MaxPriority) }

// inOrder says whether ws are already sorted, as the dispatch function's queue arrives: DynamoDB
// answers it in dispatch order.
func inOrder(ws []word, l layout) bool {
	for i := 1; i < len(ws); i++ {
		if l.sortKey(ws[i]) < l.sortKey(ws[i-1]) {
			return false
		}
	}
	return true
}

// radixSort sorts ws on their bits from the bit from up. A queue too large for a core's cache is
// split by the top byte of the bits that vary, and each part again until it fits; a part that
// fits is sorted a byte at a time from the lowest. A plain byte-at-a-time sort would stream the
// whole queue through memory on every pass, and slow down a job as the queue outgrows the cache.
func radixSort(ws []word, from int) {
	if len(ws) < 2 {
		return
	}
	or, and := uint64(0), ^uint64(0)
	for _, w := range ws {
		or, and = or|uint64(w)>>from, and&(uint64(w)>>from)
	}
	if varying := or ^ and; varying != 0 {
		sortBits(ws, make([]word, len(ws)), from+bits.TrailingZeros64(varying), from+bits.Len64(varying))
	}
}

// Parts are sorted by insertion up to insertionMax words, below which clearing and summing 256
// counts a byte costs more than the comparisons, and a byte at a time up to lsdMax words, which
// with their scratch (512 KiB) stay in a core's L2 cache (1–2 MiB on the machines Lambda and
// our CI run on).
const (
	insertionMax = 32
	lsdMax       = 1 << 15
)

// sortBits sorts ws on bits lo up to (not including) hi, using scratch, as long as ws, for
// scratch. Words equal on those bits end in no particular order; breakTies orders them.
func sortBits(ws, scratch []word, lo, hi int) {
	switch {
	case lo >= hi || len(ws) < 2:
		return
	case len(ws) <= insertionMax:
		mask := ^word(0) >> (64 - hi) &^ (word(1)<<lo - 1) // bits lo..hi-1
		for i := 1; i < len(ws); i++ {
			for j := i; j > 0 && ws[j]&mask < ws[j-1]&mask; j-- {
				ws[j], ws[j-1] = ws[j-1], ws[j]
			}
		}
	case len(ws) <= lsdMax:
		sortBytes(ws, scratch, lo, hi)
	default:
		top := max(hi-8, lo) // the lowest bit of the byte split on
		var starts [257]int
		for _, w := range ws {
			starts[int(byte(w>>top))+1]++ // int first: a byte of 255 plus one is 0
		}
		for v := 1; v < len(starts); v++ {
			starts[v] += starts[v-1]
		}
		next := starts
		for _, w := range ws {
			v := byte(w >> top)
			scratch[next[v]] = w
			next[v]++
		}
		for v := range 256 {
			part, spare := scratch[starts[v]:starts[v+1]], ws[starts[v]:starts[v+1]]
			sortBits(part, spare, lo, top)
			copy(spare, part)
		}
	}
}

// sortBytes sorts ws on bits lo up to hi a byte at a time from the lowest, stably, skipping a
// byte every word shares.
func sortBytes(ws, scratch []word, lo, hi int) {
	passes := (hi - lo + 7) / 8
	var counts [8][256]int
	for _, w := range ws {
		for d := range passes {
			counts[d][byte(w>>(lo+8*d))]++
		}
	}
	src, dst := ws, scratch
	for d := range passes {
		c, at := &counts[d], lo+8*d
		if c[byte(src[0]>>at)] == len(src) {
			continue
		}
		next := 0
		for v := range c {
			c[v], next = next, next+c[v]
		}
		for _, w := range src {
			v := byte(w >> at)
			dst[c[v]] = w
			c[v]++
		}
		src, dst = dst, src
	}
	copy(ws, src) // a no-op when an even number of passes left the result in ws
}

// breakTies puts each run of words whose priority and age tie in exact dispatch order.
func breakTies(ws []word, l layout, candidates []Candidate) {
	for start := 0; start < len(ws); {
		end := start + 1
		for end < len(ws) && l.sortKey(ws[end]) == l.sortKey(ws[start]) {
			end++
		}
		if end-start > 1 {
			slices.SortFunc(ws[start:end], func(a, b word) int {
				return compare(&candidates[l.index(a)], &candidates[l.index(b)])
			})
		}
		start = end
	}
}

// compare is dispatch order itself.
func compare(a, b *Candidate) int {
	if c := cmp.Compare(clampPriority(b.Priority), clampPriority(a.Priority)); c != 0 {
		return c
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
