package admission

import "github.com/tidegate/tidegate/shared/jobs"

// A slotless job (Candidate.Slotless: a long-running one, a Deployment or StatefulSet, unless the
// deployment makes those hold slots) takes no job slot of its region, so the region's MaxActive
// does not bound how many run. Its GPUs count like any job's, against the region's GPU cap and
// its tenant's share; and each tenant may have at most Capacity.MaxSlotless of them active in the
// region, so a tenant cannot fill a region with slot-free jobs that need no GPU. One over that
// waits with ReasonSlotlessLimit, blocking nobody: it is not waiting for room.

// slotless is what a walk knows of the slotless candidates.
type slotless struct {
	// of is, for each candidate in the order given, 0 for one that holds a slot, else one more
	// than its tenant's place in left. Nil when no candidate is slotless, which keeps a walk
	// without them to one nil check a job.
	of []int32
	// left is, by tenant, how many more slotless jobs it may start in the region.
	left []int
}

func slotlessOf(c Capacity, candidates []Candidate) slotless {
	var s slotless
	var tenants map[string]int32 // made at the first slotless candidate: most queues have none
	for i := range candidates {
		if !candidates[i].Slotless {
			continue
		}
		if s.of == nil {
			s.of, tenants = make([]int32, len(candidates)), map[string]int32{}
		}
		name := candidates[i].Tenant
		t, ok := tenants[name]
		if !ok {
			t = int32(len(s.left))
			tenants[name] = t
			limit := c.MaxSlotless
			if c.MaxActive <= 0 {
				limit = 0 // a region without room is closed to every job
			}
			s.left = append(s.left, max(limit-c.SlotlessInUse[name], 0))
		}
		s.of[i] = t + 1
	}
	return s
}

// is reports whether candidate k is slotless.
func (s slotless) is(k int) bool { return s.of != nil && s.of[k] != 0 }

// atLimit reports whether candidate k is slotless and its tenant may start no more such jobs.
func (s slotless) atLimit(k int) bool { return s.is(k) && s.left[s.of[k]-1] == 0 }

// SlotlessUse is how many slotless jobs each tenant has active, by tenant name, when long-running
// jobs hold no slot (holdSlots false); nil when they do, since there are none then.
func SlotlessUse(active []jobs.Job, holdSlots bool) map[string]int {
	if holdSlots {
		return nil
	}
	out := map[string]int{}
	for _, j := range active {
		if j.LongRunning() {
			out[j.Tenant]++
		}
	}
	return out
}

// HoldsSlot reports whether job j holds a job slot of its region: every batch job does, and a
// long-running one when holdSlots (TIDEGATE_LONG_RUNNING_HOLDS_SLOT) says so.
func HoldsSlot(j jobs.Job, holdSlots bool) bool { return holdSlots || !j.LongRunning() }
