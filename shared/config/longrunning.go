package config

import (
	"fmt"
	"strconv"
)

// LongRunningSettings say how long-running jobs (a Deployment's or StatefulSet's, which run until
// cancelled) share a region: whether each holds one of its job slots, and, when they do not, how
// many of them each tenant may have active in a region at once.
type LongRunningSettings struct {
	// HoldsSlot makes long-running jobs hold a job slot like batch ones
	// (TIDEGATE_LONG_RUNNING_HOLDS_SLOT; false when unset): then they are bounded by the
	// region's capacity, and PerTenant is not read.
	HoldsSlot bool
	// PerTenant bounds the slot-free long-running jobs each tenant may have active in each
	// region (TIDEGATE_LONG_RUNNING_PER_TENANT, DefaultLongRunningPerTenant when unset): without
	// it a tenant could start any number of them, GPU-free ones unbounded by the GPU budget.
	PerTenant int
}

// DefaultLongRunningPerTenant lets a tenant run five services beside its batch jobs in each
// region: half the default region capacity (DefaultCapacity), so that at the default pods per job
// its namespace's ResourceQuota, sized to the region's capacity, still leaves its batch jobs
// room for their pods.
const DefaultLongRunningPerTenant = 5

// MaxLongRunningPerTenant bounds TIDEGATE_LONG_RUNNING_PER_TENANT; 0 admits no slot-free
// long-running job (set HoldsSlot to run them in slots instead).
const MaxLongRunningPerTenant = 1000

// longRunning reads the long-running settings.
func (r *reader) longRunning() LongRunningSettings {
	s := LongRunningSettings{HoldsSlot: r.flag(EnvLongRunningHoldsSlot), PerTenant: DefaultLongRunningPerTenant}
	if v := r.get(EnvLongRunningPerTenant); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxLongRunningPerTenant {
			r.fail(EnvLongRunningPerTenant, fmt.Errorf("%q is not a whole number of long-running jobs from 0 to %d", v, MaxLongRunningPerTenant))
		}
		s.PerTenant = n
	}
	return s
}

// MaxDrainReadBudget bounds TIDEGATE_DRAIN_READ_BUDGET: a drain of that many reads, about 1 MB a
// hundred, stays well inside the dispatch function's minute.
const MaxDrainReadBudget = 100_000

// readBudget reads TIDEGATE_DRAIN_READ_BUDGET: how many queued jobs a drain reads past its room;
// 0 (unset) is dispatch's default.
func (r *reader) readBudget() int {
	v := r.get(EnvDrainReadBudget)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxDrainReadBudget {
		r.fail(EnvDrainReadBudget, fmt.Errorf("%q is not a whole number of queued jobs from 1 to %d", v, MaxDrainReadBudget))
	}
	return n
}
