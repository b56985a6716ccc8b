package admission

// Fair order within a priority: a job's standing is its tenant's use of its share were the job
// admitted, counting the tenant's active jobs and its jobs ahead of this one in dispatch order:
// the larger of jobs ÷ share's jobs and, under a GPU cap, GPUs ÷ share's GPUs (Kueue's and DRF's
// dominant share). Among jobs of one priority the lowest standing goes first, ties to dispatch
// order. A tenant's standing only grows from one of its jobs to the next, so its own jobs keep
// their order.

// zeroShare weighs a use of nothing shared: far beyond any ratio to a share, and still ordered
// by how much is used.
const zeroShare = 1 << 40

// standing is use's part of share, the larger of its jobs' and (when gpus) its GPUs'.
func standing(use, share Amount, gpus bool) float64 {
	s := ratio(int64(use.Jobs), int64(share.Jobs))
	if gpus {
		s = max(s, ratio(use.GPUs, share.GPUs))
	}
	return s
}

func ratio(used, share int64) float64 {
	if share <= 0 {
		return float64(max(used, 0)) * zeroShare
	}
	return float64(used) / float64(share)
}

// fairOrder reorders each run of equal priority of order, whose words are as dispatchOrder made
// them, fairly among its tenants. Each word's age, which has done its work, is replaced by the
// job's standing in fixed point, and the words are sorted on priority and standing alone. The
// sort is stable, so ties stay in dispatch order.
func fairOrder(order []word, l layout, r *room, ts tenants) {
	if len(order) < 2 || len(ts.share) < 2 {
		return // one tenant: dispatch order is its own order
	}
	at, keep := standingAt, word(1)<<l.sortFrom()-1 // the verdict and the index are kept
	seen := make([]Amount, len(ts.share))
	// The sort's counts are taken as the words are written, which spares it reading them twice
	// more (once for the bits that vary, once to count).
	var counts fairCounts
	for i, w := range order {
		k := l.index(w)
		t := ts.of[k]
		// A held job takes no room, so it counts against nobody behind it, and stands where its
		// tenant stands: so a tenant's standings never fall from one of its jobs to the next.
		s := seen[t]
		if l.verdict(w) == open {
			if !r.free.is(k) {
				s.Jobs++ // a slotless job takes none of its tenant's jobs
			}
			s.GPUs += r.need(k)
			seen[t] = s
		}
		w = stand(w, standing(Amount{ts.used[t].Jobs + s.Jobs, ts.used[t].GPUs + s.GPUs}, ts.share[t], r.gpuCapped), keep)
		order[i] = w
		counts[0][w>>at&fairDigitMask]++
		counts[1][w>>(at+fairDigit)]++
	}
	if len(order) > lsdMax {
		radixSort(order, at) // split first, as it says, to stay in a core's cache
		return
	}
	fairSort(order, at, &counts)
}

// Up to lsdMax words the fair order is sorted in two passes of 12 bits (the 7 of the priority
// and the 16 of the standing are 23) rather than radixSort's three of a byte: one pass fewer
// over the queue, for counts (2 × 4,096 of them, 32 KiB) that stay in a core's L1 or L2 cache.
const (
	fairDigit     = 12
	fairDigitMask = 1<<fairDigit - 1
)

var _ [2*fairDigit - prioBits - standingBits]struct{} // two digits hold the key

type fairCounts [2][1 << fairDigit]int32 // int32: up to lsdMax words

// fairSort sorts order stably on its bits from at up, given their digits' counts.
func fairSort(order []word, at int, counts *fairCounts) {
	src, dst := order, make([]word, len(order))
	for d := range counts {
		c, shift := &counts[d], at+d*fairDigit
		if int(c[src[0]>>shift&fairDigitMask]) == len(src) {
			continue // every word has this digit
		}
		next := int32(0)
		for v := range c {
			c[v], next = next, next+c[v]
		}
		for _, w := range src {
			v := w >> shift & fairDigitMask
			dst[c[v]] = w
			c[v]++
		}
		src, dst = dst, src
	}
	copy(order, src) // a no-op when both passes or neither ran
}

// standingAt is where a word's standing goes, under its priority.
const standingAt = 64 - prioBits - standingBits

// stand is w with its age replaced by standing st in fixed point (past the top, the top), its
// priority above and what keep masks (the verdict and the index) below.
func stand(w word, st float64, keep word) word {
	q := uint64(1)<<standingBits - 1
	if st < float64(uint64(1)<<(standingBits-fracBits)) {
		q = uint64(st * (1 << fracBits))
	}
	return w>>(64-prioBits)<<(64-prioBits) | word(q)<<standingAt | w&keep
}

// A standing is sorted as a fixed-point number of standingBits, fracBits of them its fraction:
// standings closer than 1/256 of a share tie, and go in dispatch order, which also keeps each
// tenant's own jobs in order; standings past 256 shares tie too.
const (
	standingBits = 16
	fracBits     = 8
)
