package admission

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDispatchOrderMatchesCompare holds the radix sort to dispatch order itself: over queues
// large enough for every path (parts sorted a byte at a time and by insertion, ties within one
// microsecond, ages shifted down for spans of centuries, bounds held, queues split), the order
// equals a plain
// sort by compare.
func TestDispatchOrderMatchesCompare(t *testing.T) {
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	shapes := []struct {
		name string
		n    int
		make func(r *rand.Rand, i int) Candidate
	}{
		{"the benchmark's region, shuffled", 5000, nil},
		{"a queue split before its parts are sorted", 3*lsdMax + 1000, nil},
		{"most in one second, the rest over a year: split twice", 3 * lsdMax, func(r *rand.Rand, i int) Candidate {
			span := time.Second
			if r.IntN(10) == 0 {
				span = 365 * 24 * time.Hour
			}
			return Candidate{Priority: 50, CreatedAt: t0.Add(time.Duration(r.Int64N(int64(span))))}
		}},
		{"one priority, times a few µs apart", 3000, func(r *rand.Rand, i int) Candidate {
			return Candidate{Priority: 50, CreatedAt: t0.Add(time.Duration(r.IntN(5000)) * time.Microsecond / 3)}
		}},
		{"many in one microsecond", 2000, func(r *rand.Rand, i int) Candidate {
			return Candidate{Priority: r.IntN(3), CreatedAt: t0.Add(time.Duration(r.IntN(1000)))}
		}},
		{"spanning year 1 to 9999", 2000, func(r *rand.Rand, i int) Candidate {
			return Candidate{Priority: r.IntN(101), CreatedAt: time.Unix(r.Int64N(far.Unix()+62135596800)-62135596800, r.Int64N(1e9))}
		}},
		{"zero times, extreme times and priorities out of range", 2000, func(r *rand.Rand, i int) Candidate {
			times := []time.Time{{}, t0, far, time.Unix(1<<62, 0), time.Unix(-1<<62, 0), t0.Add(time.Duration(r.IntN(1e6)))}
			return Candidate{Priority: []int{-5, 0, 50, 100, 1000, r.IntN(101)}[r.IntN(6)], CreatedAt: times[r.IntN(len(times))]}
		}},
		{"already in order", 4000, nil},
	}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(s.n), 7))
			var cands []Candidate
			switch {
			case s.name == "already in order":
				cands = benchQueue(s.n)
			case s.make == nil:
				cands = shuffled(benchQueue(s.n))
			default:
				for i := range s.n {
					c := s.make(r, i)
					c.ID = fmt.Sprintf("j%06d-%d", r.IntN(1_000_000), i)
					cands = append(cands, c)
				}
			}
			want := make([]int, len(cands))
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, func(a, b int) int { return compare(&cands[a], &cands[b]) })
			ws, l := dispatchOrder(cands, nil)
			got := make([]int, len(ws))
			for i, w := range ws {
				got[i] = l.index(w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("dispatchOrder of %d candidates (-by compare +got):\n%s", len(cands), diff)
			}
		})
	}
}

// TestRadixSortHighByte: more words than a byte-at-a-time pass sorts, whose split byte is 255 for
// some (a fair order's standing past its top), sort like any others. A byte of 255 counted one
// place on wrapped to 0, and the split overran its scratch.
func TestRadixSortHighByte(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const from = 41
	ws := make([]word, lsdMax+1000)
	for i := range ws {
		key := uint64(r.IntN(1 << 23))
		if i%3 == 0 {
			key |= 0xff << 15 // the split byte all ones
		}
		ws[i] = word(key<<from | uint64(i))
	}
	radixSort(ws, from)
	for i := 1; i < len(ws); i++ {
		if ws[i]>>from < ws[i-1]>>from {
			t.Fatalf("radixSort left word %d (%#x) before %d (%#x)", i-1, ws[i-1], i, ws[i])
		}
	}
}
