package admission

import (
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// Decide says which candidates to dispatch now and why each other one waits.
//
// It orders the whole candidate set by priority, highest first, ties going to the oldest
// (CreatedAt, then ID, so the order never depends on how the candidates were listed), and walks
// that order once:
//
//   - A job with a price cap whose instance type has no known price waits with
//     ReasonSpotPriceUnknown; one whose observed price is above its cap waits with
//     ReasonSpotPriceAboveCap. Either way it takes no room and blocks nobody behind it.
//   - Otherwise the job is admitted if the region has a free job slot and, under a GPU cap,
//     enough GPUs left for it. Its slot and GPUs are then taken from what is left.
//   - A job there is no room for waits, and blocks nobody behind it: a job too large for the
//     GPUs left is passed over for smaller ones behind it (best-effort FIFO). Among the jobs
//     waiting for room, those of the first one's priority wait with ReasonCapacity, since they
//     are next when room frees; the rest wait with ReasonQueuedBehindHigherPriority.
//
// The price gate is judged before room, so a capped job's reason names its price even in a full
// region: room would not be enough for it. Decide never changes candidates or prices.
//
// Under quotas (capacity.Shares or DefaultShare set) the region is shared among the candidates'
// tenants as decideShared says; without them the tenants are not read.
func Decide(candidates []Candidate, capacity Capacity, prices map[string]spotgate.Observation) Decision {
	if capacity.quotas() {
		return decideShared(candidates, capacity, prices)
	}
	order, l := dispatchOrder(candidates, prices)
	d := walk(order, l, roomOf(capacity, candidates))
	// The IDs are read after the walk, in a loop whose reads do not wait on each other, so the
	// processor overlaps their cache misses; in the walk each would stall it.
	a, wt := 0, 0
	for _, w := range order {
		id := candidates[w&^admitted].ID
		if w&admitted != 0 {
			d.Admit[a], a = id, a+1
		} else {
			d.Waiting[wt].ID, wt = id, wt+1
		}
	}
	return d
}

// admitted marks the index of a job the walk admitted.
const admitted = word(1) << 63

// walk decides each job of order in turn, as Decide says, and leaves each word of order as its
// job's index, marked when admitted. The decision it returns has every slot but no ID yet.
func walk(order []word, l layout, r room) Decision {
	d := Decision{Admit: make([]string, 0, min(r.slots, len(order))), Waiting: make([]Wait, 0, len(order))}
	var (
		roomWaited bool // a job ahead is waiting for room
		headPrio   int  // the priority of the first job waiting for room
	)
	for i, w := range order {
		k := l.index(w)
		order[i] = word(k)
		reason := verdictReasons[l.verdict(w)]
		if reason == "" && r.free.atLimit(k) {
			reason = ReasonSlotlessLimit // not waiting for room: it blocks nobody's place
		}
		if reason == "" {
			if r.take(k) {
				d.Admit = append(d.Admit, "")
				order[i] |= admitted
				continue
			}
			prio := l.priority(w)
			if !roomWaited {
				roomWaited, headPrio = true, prio
			}
			// Jobs ahead have at least this one's priority, so only a lower one is behind a
			// higher-priority job waiting for room.
			reason = ReasonCapacity
			if prio < headPrio {
				reason = ReasonQueuedBehindHigherPriority
			}
		}
		d.Waiting = append(d.Waiting, Wait{Reason: reason, Position: len(d.Waiting) + 1})
	}
	return d
}

// gate is a job's price verdict. A job without a cap is never held; a capped job is held unless a
// price is known for its instance type and is at or below its cap.
func gate(spot *jobs.Spot, prices map[string]spotgate.Observation) verdict {
	if spot == nil {
		return open
	}
	p, ok := prices[spot.InstanceType]
	switch {
	case !ok || !p.Known:
		return unknownPrice
	case !(p.Price <= spot.MaxPrice): // also holds a NaN price or cap
		return aboveCap
	}
	return open
}

// room is what is left of a region's capacity during one walk.
type room struct {
	slots     int
	gpus      int64
	gpuCapped bool
	// needs is each candidate's GPUs, in the order given, under a GPU cap: the walk reads this
	// dense slice rather than reach into the candidates in dispatch order.
	needs []int64
	// free is what is left of each tenant's slotless jobs, and which candidates are slotless.
	free slotless
}

func roomOf(c Capacity, candidates []Candidate) room {
	r := room{
		slots:     max(c.MaxActive-c.ActiveJobs, 0),
		gpus:      c.MaxGPUs - c.ActiveGPUs, // negative when the cap was lowered under use
		gpuCapped: c.MaxGPUs > 0,
		free:      slotlessOf(c, candidates),
	}
	if r.gpuCapped {
		r.needs = make([]int64, len(candidates))
		for i := range candidates {
			r.needs[i] = max(candidates[i].GPUs, 0) // a negative count is read as none
		}
	}
	return r
}

// take takes a slot (for a slotless candidate, one of its tenant's slotless jobs), and under a
// GPU cap candidate k's GPUs, if both are left, and says whether it did. A job needing no GPU is
// judged by slots alone, even when lowering the GPU cap left the region over it.
func (r *room) take(k int) bool {
	free := r.free.is(k)
	if free && r.free.atLimit(k) || !free && r.slots == 0 {
		return false
	}
	if r.gpuCapped {
		need := r.needs[k]
		if need > 0 && need > r.gpus {
			return false
		}
		r.gpus -= need
	}
	if free {
		r.free.left[r.free.of[k]-1]--
	} else {
		r.slots--
	}
	return true
}
