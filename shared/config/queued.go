package config

import (
	"fmt"
	"strconv"
)

// DefaultMaxQueuedPerTenant is how many of a tenant's jobs may wait in the queues at once, across
// regions, unless its record sets its own: 10,000, as far as a job's queue position is counted
// (the jobs store's PositionCounted), so no one tenant alone puts a job of another's past where its
// place can be told, and a drain's census of a queue one tenant filled reads about 370 read units.
const DefaultMaxQueuedPerTenant = 10_000

// MostQueuedPerTenant bounds TIDEGATE_MAX_QUEUED_PER_TENANT: a cap above ten million is a typo, not
// a cap; 0 sets none.
const MostQueuedPerTenant = 10_000_000

// maxQueued reads the deployment's cap of a tenant's queued jobs.
func (r *reader) maxQueued(name string) int {
	v := r.get(name)
	if v == "" {
		return DefaultMaxQueuedPerTenant
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > MostQueuedPerTenant {
		r.fail(name, fmt.Errorf("%q is not a whole number of queued jobs from 0 (no cap) to %d", v, MostQueuedPerTenant))
		return DefaultMaxQueuedPerTenant
	}
	return n
}
