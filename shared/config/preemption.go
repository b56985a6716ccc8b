package config

import (
	"fmt"
	"strconv"
	"time"
)

// PreemptionSettings say how a region takes borrowed room back (admission/reclaim.go): how many
// jobs its drains may evict a minute, how long a job admitted by evicting a tenant's jobs is safe
// from that tenant's, and how long an evicted job's pods get between SIGTERM and their deletion.
type PreemptionSettings struct {
	// PerMinute bounds the evictions in each region each minute (TIDEGATE_PREEMPTIONS_PER_MINUTE,
	// DefaultPreemptionsPerMinute when unset); 0 evicts nothing: a borrower keeps its room until
	// its jobs end.
	PerMinute int
	// Cooldown is how long a job admitted by evicting a tenant's jobs cannot be evicted for that
	// tenant's jobs (TIDEGATE_PREEMPTION_COOLDOWN, a Go duration, DefaultPreemptionCooldown).
	Cooldown time.Duration
	// GraceMax bounds an evicted job's pods' terminationGracePeriodSeconds
	// (TIDEGATE_PREEMPTION_GRACE_MAX, a Go duration, DefaultPreemptionGraceMax): a pod asking
	// more gets this long between SIGTERM and SIGKILL.
	GraceMax time.Duration
}

const (
	// DefaultPreemptionsPerMinute evicts at most ten jobs a region a minute: reclaim is prompt
	// for a tenant's few jobs, and a burst of submissions cannot evict a region's whole borrowing
	// at once (the work it would waste is what Armada's users met, armada#5073).
	DefaultPreemptionsPerMinute = 10
	MaxPreemptionsPerMinute     = 10_000
	// DefaultPreemptionCooldown outlasts many drains and a job's grace: room taken back stays
	// taken long enough to be worth the work it cost.
	DefaultPreemptionCooldown = 10 * time.Minute
	// DefaultPreemptionGraceMax is a spot interruption notice's length: the same time to write a
	// checkpoint whatever stopped the job.
	DefaultPreemptionGraceMax = 120 * time.Second
	// MaxPreemptionGrace bounds GraceMax: an eviction an hour long is a room never given back.
	MaxPreemptionGrace = time.Hour
)

// preemption reads the preemption settings.
func (r *reader) preemption() PreemptionSettings {
	s := PreemptionSettings{PerMinute: DefaultPreemptionsPerMinute, Cooldown: DefaultPreemptionCooldown, GraceMax: DefaultPreemptionGraceMax}
	if v := r.get(EnvPreemptionsPerMinute); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxPreemptionsPerMinute {
			r.fail(EnvPreemptionsPerMinute, fmt.Errorf("%q is not a whole number of evictions from 0 (none) to %d", v, MaxPreemptionsPerMinute))
		}
		s.PerMinute = n
	}
	s.Cooldown = r.durationIn(EnvPreemptionCooldown, s.Cooldown, 0, 24*time.Hour)
	s.GraceMax = r.durationIn(EnvPreemptionGraceMax, s.GraceMax, 0, MaxPreemptionGrace)
	return s
}

// durationIn reads name as a Go duration from lo to hi; def when unset.
func (r *reader) durationIn(name string, def, lo, hi time.Duration) time.Duration {
	v := r.get(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		r.fail(name, fmt.Errorf("%q is not a duration from %s to %s, such as 2m", v, lo, hi))
		return def
	}
	return d
}
