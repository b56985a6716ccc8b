// Package admission decides which of a region's queued jobs to dispatch now, and why each other
// one waits.
//
// Numbers in, steps out: Decide takes the region's queued jobs, its capacity and the spot prices
// observed, and touches nothing. The dispatch function claims and applies what it admits; the API
// shows each waiting job's reason and queue position.
package admission

import (
	"time"

	"github.com/tidegate/tidegate/shared/jobs"
)

// Candidate is one queued job as admission sees it.
type Candidate struct {
	ID        string
	Priority  int // 0–100 (jobs.MinPriority–jobs.MaxPriority); higher goes first
	CreatedAt time.Time
	// GPUs is the sum of the GPU requests of the job's pods, as the caller counts them from its
	// manifests. Zero for a job that needs none; a negative count is read as zero.
	GPUs int64
	// Spot is the job's price cap, nil for a job that runs at any price.
	Spot *jobs.Spot
	// Tenant is whose job it is, which quotas read (see Capacity.Shares), and the limit of
	// slotless jobs. "" is a tenant like any other.
	Tenant string
	// Slotless marks a job that takes no job slot (a long-running one, see slotless.go): only its
	// GPUs, and one of its tenant's MaxSlotless, are taken when it is admitted.
	Slotless bool
}

// Capacity is how much of the region the jobs may use, and how much dispatched jobs already hold.
type Capacity struct {
	// MaxActive is how many jobs may be active (dispatched and not yet ended) in the region at
	// once. Unlike MaxGPUs it has no "no limit" value: 0 admits nothing, so a region configured
	// without room stays closed rather than open without bound.
	MaxActive int
	// MaxGPUs is how many GPUs the region's active jobs may request in all; 0 (or less) means no
	// GPU cap.
	MaxGPUs    int64
	ActiveJobs int
	ActiveGPUs int64

	// Shares is each tenant's nominal share of the region, by tenant name; a tenant not named has
	// DefaultShare. With no Shares and a zero DefaultShare there are no quotas, and Decide admits
	// as it always has, whatever the candidates' tenants. Under a GPU cap (MaxGPUs > 0) a share's
	// GPUs count; without one only its jobs do.
	Shares       map[string]Amount
	DefaultShare Amount
	// InUse is what each tenant's active jobs hold, by tenant name: its jobs and the GPUs they
	// request. ActiveJobs and ActiveGPUs stay the region's totals, the sums of these.
	InUse map[string]Amount

	// MaxSlotless is how many slotless jobs each tenant may have active in the region at once;
	// as MaxActive, 0 admits none. SlotlessInUse is how many each has, by tenant name. Slotless
	// jobs are not in ActiveJobs, nor in InUse's Jobs; their GPUs are in ActiveGPUs and InUse.
	MaxSlotless   int
	SlotlessInUse map[string]int
}

// Amount is an amount of a region's room: jobs, and the GPUs they request.
type Amount struct {
	Jobs int
	GPUs int64
}

// Use is what active jobs hold of their region, by tenant: how many slots (HoldsSlot, given
// holdSlots), and the GPUs they all request. It is Capacity.InUse for a drain, and what the
// queue's stats show of a tenant's use.
func Use(active []jobs.Job, holdSlots bool) map[string]Amount {
	out := map[string]Amount{}
	for _, j := range active {
		u := out[j.Tenant]
		if HoldsSlot(j, holdSlots) {
			u.Jobs++
		}
		u.GPUs += max(j.GPUs, 0)
		out[j.Tenant] = u
	}
	return out
}

// quotas says whether c shares the region among tenants by quotas.
func (c Capacity) quotas() bool { return c.Shares != nil || c.DefaultShare != (Amount{}) }

// Reason says why a job was not admitted. The values are what the API shows as pending_reason.
type Reason string

const (
	// ReasonCapacity: the job is the first in line for room in the region (or shares the first
	// one's priority): no free job slot, or not enough of the GPU budget left for it.
	ReasonCapacity Reason = "capacity"
	// ReasonSpotPriceAboveCap: the spot price observed for the job's instance type is above its cap.
	ReasonSpotPriceAboveCap Reason = "spot_price_above_cap"
	// ReasonSpotPriceUnknown: no spot price could be observed for the job's instance type, and an
	// unknown price holds a capped job (fail closed).
	ReasonSpotPriceUnknown Reason = "spot_price_unknown"
	// ReasonQueuedBehindHigherPriority: the job waits for room, and a job of strictly higher
	// priority is waiting for room ahead of it.
	ReasonQueuedBehindHigherPriority Reason = "queued_behind_higher_priority"
	// ReasonTenantQuotaExhausted: the job's tenant holds its share of the region or more, and a
	// job of a tenant under its share waits for room: room that frees goes to that one first.
	// Capacity is only borrowed beyond a tenant's share when no tenant under its share waits.
	ReasonTenantQuotaExhausted Reason = "tenant_quota_exhausted"
	// ReasonSlotlessLimit: the job is long-running and holds no slot, and its tenant has as many
	// such jobs active in the region as Capacity.MaxSlotless allows
	// (TIDEGATE_LONG_RUNNING_PER_TENANT). It waits until one of them ends.
	ReasonSlotlessLimit Reason = "tenant_long_running_limit"
	// ReasonNameInUse is dispatch's, not this package's: the job was admitted, but one of its
	// objects' names is held by a finished Job of an earlier job whose end no beat has recorded
	// yet. It waits in the queue until one has; then the finished Job makes way.
	ReasonNameInUse Reason = "name_in_use_by_finishing_job"
)

// Wait is one job that is not dispatched now.
type Wait struct {
	ID     string
	Reason Reason
	// Position is the job's place among the waiting jobs judged, from 1, in dispatch order. The
	// API's queue_position is counted in the job's queue when asked (dynamo.JobStore.QueuePosition),
	// since a drain judges only the head of its queue. Jobs held by their price cap count too, at their priority, since that is
	// where they stand once the price allows them.
	Position int
}

// Decision is what Decide says for one region at one moment.
type Decision struct {
	Admit   []string // the IDs to dispatch, in dispatch order
	Waiting []Wait   // every other candidate, in dispatch order
}
