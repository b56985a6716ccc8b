package admission

import "slices"

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
// them, fairly among its tenants. It radix-sorts words of the priority, then the standing in
// fixed point, then the place in dispatch order (for ties), and maps each back to its own word.
func fairOrder(order []word, l layout, r *room, ts tenants) {
	if len(order) < 2 || len(ts.share) < 2 {
		return // one tenant: dispatch order is its own order
	}
	posBits := l.idxBits // places in order number as candidates do
	standBits := 64 - prioBits - posBits
	top := float64(uint64(1) << (standBits - fracBits(standBits)))
	base := slices.Clone(order)
	seen := make([]Amount, len(ts.share))
	for i, w := range base {
		k := l.index(w)
		t := ts.of[k]
		// A held job takes no room, so it counts against nobody behind it, and stands where its
		// tenant stands: so a tenant's standings never fall from one of its jobs to the next.
		s := seen[t]
		if l.verdict(w) == open {
			s.Jobs++
			s.GPUs += r.need(k)
			seen[t] = s
		}
		st := standing(Amount{ts.used[t].Jobs + s.Jobs, ts.used[t].GPUs + s.GPUs}, ts.share[t], r.gpuCapped)
		q := uint64(1)<<standBits - 1 // beyond top, standings tie and go in dispatch order
		if st < top {
			q = uint64(st * float64(uint64(1)<<fracBits(standBits)))
		}
		order[i] = word(uint64(w)>>(64-prioBits)<<(64-prioBits) | q<<posBits | uint64(i))
	}
	radixSort(order, 0)
	for i, w := range order {
		order[i] = base[uint64(w)&(1<<posBits-1)]
	}
}

// fracBits of a standing of bits are its fraction: a tenant's standing grows by 1/share a job, so
// shares up to 2^fracBits jobs or GPUs stay exact; the bits above it order standings up to 2^12
// times a share. Fewer bits are fewer passes of the sort: 20 keep shares of a million exact, and
// a queue of 2^27 jobs still has 18.
func fracBits(bits int) int { return min(bits-12, 20) }
