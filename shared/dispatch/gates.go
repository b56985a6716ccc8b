package dispatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// Health reads whether each region admits (an operator's cordon, the beat's reach, the fences
// left to clear), and records a region a drain failed to reach; dynamo.JobStore is the real one.
type Health interface {
	Health(ctx context.Context, regions []string) (map[string]dynamo.RegionHealth, error)
	Missed(ctx context.Context, region string, at time.Time, why error) error
}

var _ Health = (*dynamo.JobStore)(nil)

// gateTTL is how long a drain trusts what it read of the regions' gates: a cordon reaches every
// warm dispatcher within it, and a busy region's drains read the gates once in it.
const gateTTL = 5 * time.Second

// gateCache keeps the regions' gates per process. Its zero value is ready.
type gateCache struct {
	mu     sync.Mutex
	at     time.Time
	closed map[string]admission.Reason
}

// gates answers why each region admits nothing now (dynamo.RegionHealth.Closed), leaving out
// those that admit. A read that fails is logged and the last gates kept, or none: a region whose
// gate cannot be read admits as it did.
func (h *Handler) gates(ctx context.Context) map[string]admission.Reason {
	if h.Health == nil {
		return nil
	}
	now := h.now()
	c := &h.gateCache
	c.mu.Lock()
	if c.closed != nil && now.Sub(c.at) < gateTTL {
		defer c.mu.Unlock()
		return c.closed
	}
	c.mu.Unlock()
	regions := slices.Sorted(maps.Keys(h.Regions))
	health, err := h.Health.Health(ctx, regions)
	if err != nil {
		h.Log.WarnContext(ctx, "reading the regions' gates; the last ones hold", "err", err)
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.closed
	}
	closed := map[string]admission.Reason{}
	for r, hl := range health {
		if why := hl.Closed(); why != "" {
			closed[r] = why
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.closed = now, closed
	return closed
}

// shut is the decision of a drain of a closed region (why): every candidate waits for the region,
// in its place, and nothing is admitted or evicted for it.
func shut(cands []admission.Candidate, why admission.Reason) admission.FlavorDecision {
	var d admission.FlavorDecision
	for i, c := range cands {
		d.Waiting = append(d.Waiting, admission.FlavorWait{Wait: admission.Wait{ID: c.ID, Reason: why, Position: i + 1}})
	}
	return d
}

// holdTenants takes the candidates of held tenants out of cands (and needs), as waits for
// ReasonTenantHeld; the tenants' records were read with their quotas (quotasOf).
func (h *Handler) holdTenants(cands []admission.Candidate, needs []admission.Need) ([]admission.Candidate, []admission.Need, []admission.FlavorWait) {
	held := h.heldTenants(tenantsOfCandidates(cands))
	if len(held) == 0 {
		return cands, needs, nil
	}
	var waits []admission.FlavorWait
	keptC, keptN := cands[:0:0], needs[:0:0]
	for i, c := range cands {
		if held[c.Tenant] {
			waits = append(waits, admission.FlavorWait{Wait: admission.Wait{ID: c.ID, Reason: admission.ReasonTenantHeld}})
			continue
		}
		keptC, keptN = append(keptC, c), append(keptN, needs[i])
	}
	return keptC, keptN, waits
}

func tenantsOfCandidates(cands []admission.Candidate) []string {
	var out []string
	for _, c := range cands {
		if !slices.Contains(out, c.Tenant) {
			out = append(out, c.Tenant)
		}
	}
	return out
}

// drainOut stops the jobs dispatched to region, which an operator is draining: each is queued
// again as a new attempt (jobs.Displaced), for another region where it allows one, and its pods
// get SIGTERM and their grace period (jobobjects.StopAttempt), as an evicted job's do. Jobs still
// being dispatched are left to the next drain, once their apply is recorded.
func (h *Handler) drainOut(ctx context.Context, region string, active []jobs.Job, tr *trail) error {
	now := h.now()
	var stopped []jobs.Job
	var errs []error
	for _, v := range active {
		if v.Status == jobs.StatusDispatching || v.LongRunning() {
			continue
		}
		j, err := h.Store.Job(ctx, v.ID)
		if errors.Is(err, records.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("reading job %s to drain it: %w", v.ID, err))
			continue
		}
		if j.Region != region || !j.Displaceable() || j.AttemptOf() != v.AttemptOf() {
			continue
		}
		_, c, err := jobs.Displaced(j, jobs.ReasonRegionDrained, "its region "+region+" was drained by the operator", "", now)
		if err == nil {
			err = h.Store.Apply(ctx, j, c)
		}
		if errors.Is(err, records.ErrStale) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("draining job %s: %w", j.ID, err))
			continue
		}
		stopped = append(stopped, j)
		tr.add(j.ID, jobs.Decision{At: now, Kind: jobs.DecisionRegionDrained, Reason: jobs.ReasonRegionDrained, Attempt: j.AttemptOf(), Region: region})
		h.Log.InfoContext(ctx, "drained", "job_id", j.ID, "region", region, "attempt", j.AttemptOf(), "elsewhere", j.Elsewhere())
	}
	if len(stopped) == 0 {
		return errors.Join(errs...)
	}
	dc, err := h.Clusters.Dynamic(ctx, region)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("reaching %s to stop %d drained jobs: %w", region, len(stopped), err))...)
	}
	for _, j := range stopped {
		errs = append(errs, jobobjects.StopAttempt(ctx, dc, j, j.AttemptOf(), h.PreemptionGraceMax))
	}
	if h.Ringer != nil {
		for _, r := range otherRegions(stopped, region) {
			errs = append(errs, h.Ringer.Ring(ctx, r))
		}
	}
	return errors.Join(errs...)
}

// otherRegions are the regions besides region that js allow, once each.
func otherRegions(js []jobs.Job, region string) []string {
	var out []string
	for _, j := range js {
		for _, r := range j.Regions {
			if r != region && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// unreached says whether err is the cluster out of reach (no connection, no answer in time)
// rather than an answer.
func unreached(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, context.DeadlineExceeded)
}

// missed records that a drain failed to reach region's cluster (why), and forgets the gates read,
// so this process's next drains see the region closed.
func (h *Handler) missed(ctx context.Context, region string, why error) {
	if h.Health == nil {
		return
	}
	if err := h.Health.Missed(ctx, region, h.now(), why); err != nil {
		h.Log.WarnContext(ctx, "recording a region unreached", "region", region, "err", err)
	}
	h.gateCache.mu.Lock()
	h.gateCache.closed = nil
	h.gateCache.mu.Unlock()
}
