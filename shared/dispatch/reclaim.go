package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// A drain's part in taking borrowed room back (admission/reclaim.go): it gives admission the
// region's running jobs and what is left of the minute's evictions, and carries out the
// evictions the decision makes. Each is recorded first, the job queued again in its place as a
// new attempt (jobs.Preempted, job.preempted), so a crash after it loses nothing: what the
// evicted attempt left is replaced by the next attempt's apply, or taken by the sweep. Then the
// attempt's pods are stopped with their grace period, and the region rung, so that the next
// drain admits the job the room was taken back for.

// reclaimOf is what admission needs to take room back in region, whose flavors are fr and whose
// tenants' use and quotas c has: its running jobs, and a budget of the whole minute's evictions
// (judge reads how many are spent only when the decision evicts: most drains evict nothing). The
// zero Reclaim (nothing evicted) when preemption is off or nobody borrows.
func (h *Handler) reclaimOf(fr flavors.Region, c admission.FlavorCapacity, active []jobs.Job) admission.Reclaim {
	if h.PreemptionsPerMinute <= 0 {
		return admission.Reclaim{}
	}
	within := h.withinTenants(tenantsOf(active))
	if !c.Borrowing() && len(within) == 0 {
		return admission.Reclaim{}
	}
	rc := admission.Reclaim{Budget: h.PreemptionsPerMinute, Now: h.now(), WithinTenant: within}
	for _, j := range active {
		if j.Status == jobs.StatusDispatching || j.Podless || len(fr.Flavors) == 0 {
			continue // being applied, or holding nothing to give back
		}
		r := admission.Running{ID: j.ID, Tenant: j.Tenant, Flavor: fr.Flavors[fr.FlavorOf(j)].Name, Demand: fr.Need(j).Demand,
			Priority: j.Priority, StartedAt: j.UpdatedAt} // a record from before dispatched_at: its last move
		if j.DispatchedAt != nil {
			r.StartedAt = *j.DispatchedAt
		}
		if j.Shield != nil {
			r.Shield, r.ShieldUntil = j.Shield.Tenant, j.Shield.Until
		}
		rc.Running = append(rc.Running, r)
	}
	return rc
}

// withinBudget is decide's decision, taken again with the budget the region's evictions this
// minute leave when it would evict more: read only when it evicts at all.
func (h *Handler) withinBudget(ctx context.Context, region string, c *admission.FlavorCapacity, d admission.FlavorDecision, decide func() admission.FlavorDecision) (admission.FlavorDecision, error) {
	if len(d.Evict) == 0 {
		return d, nil
	}
	done, err := h.Store.Evictions(ctx, region, c.Reclaim.Now)
	if err != nil {
		return d, err
	}
	if left := h.PreemptionsPerMinute - done; left < len(d.Evict) {
		c.Reclaim.Budget = max(left, 0)
		return decide(), nil
	}
	return d, nil
}

// mayReclaim says whether a drain of region, full (fr, active), should read its queues anyway:
// preemption is on and a tenant borrows (or lets its jobs evict its own), so a job may be owed
// room that others hold.
func (h *Handler) mayReclaim(ctx context.Context, region string, fr flavors.Region, active []jobs.Job) (bool, error) {
	if h.PreemptionsPerMinute <= 0 || h.Tenants == nil && fr.Quota(h.DefaultQuota) == nil {
		return false, nil
	}
	snap, err := h.capacity(ctx, region, nil, active)
	if err != nil {
		return false, err
	}
	return len(h.reclaimOf(fr, snap.capacity, active).Running) > 0, nil
}

// evict carries out evictions, made by a drain of region whose active jobs are active and whose
// queued jobs read are queued: as the file's comment says.
func (h *Handler) evict(ctx context.Context, region string, evictions []admission.Eviction, active, queued []jobs.Job, snap snapshot, tr *trail) error {
	if len(evictions) == 0 {
		return nil
	}
	activeByID, queuedByID := byID(active), byID(queued)
	made := map[string]*jobs.Decision{} // what was evicted for each job, for its trail
	now := h.now()
	var stopped []jobs.Job
	var errs []error
	for _, e := range evictions {
		j, err := h.preempt(ctx, e, activeByID[e.ID], now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if j.ID == "" {
			continue // it moved meanwhile: ended, cancelled, or already evicted
		}
		stopped = append(stopped, j)
		if h.afterEvict != nil {
			h.afterEvict(j)
		}
		// Its owner sees its own tenant's borrowing, never the tenant or job it made room for.
		tr.add(j.ID, jobs.Decision{At: now, Kind: jobs.DecisionPreempted, Reason: string(e.Reason), Attempt: j.AttemptOf(), Region: region,
			Flavor: e.Flavor, Quota: standing(snap, j.Tenant, e.Flavor, nil)})
		f, ok := queuedByID[e.For]
		if !ok {
			continue
		}
		if made[e.For] == nil {
			made[e.For] = &jobs.Decision{At: now, Kind: jobs.DecisionRoomReclaimed, Reason: string(e.Reason), Region: region, Flavor: e.Flavor,
				Quota: standing(snap, f.Tenant, e.Flavor, nil)}
		}
		made[e.For].Evicted++
		c := jobs.Wait(string(admission.ReasonPreempting), 0, nil, now)
		if e.Reason == admission.EvictReclaimed && h.PreemptionCooldown > 0 {
			c = jobs.Shielded(f, j.Tenant, string(admission.ReasonPreempting), now.Add(h.PreemptionCooldown), now)
		}
		if err := h.Store.Apply(ctx, f, c); err != nil && !errors.Is(err, records.ErrStale) {
			errs = append(errs, err)
		}
		f.PendingReason = string(admission.ReasonPreempting)
		queuedByID[e.For] = f
	}
	for i, j := range queued {
		queued[i] = queuedByID[j.ID] // their reasons as written, so recordWaits writes them no more
		if d := made[j.ID]; d != nil {
			tr.add(j.ID, *d)
		}
	}
	if len(stopped) == 0 {
		return errors.Join(errs...)
	}
	errs = append(errs, h.Store.CountEvictions(ctx, region, now, len(stopped)))
	errs = append(errs, h.stop(ctx, region, stopped))
	if h.Ringer != nil {
		errs = append(errs, h.Ringer.Ring(ctx, region)) // the jobs evicted for are admitted next
	}
	return errors.Join(errs...)
}

// preempt records eviction e of running job v at now; the job read whole as it was, or no ID when
// it had moved since the drain read it.
func (h *Handler) preempt(ctx context.Context, e admission.Eviction, v jobs.Job, now time.Time) (jobs.Job, error) {
	j, err := h.Store.Job(ctx, e.ID)
	if errors.Is(err, records.ErrNotFound) {
		return jobs.Job{}, nil
	}
	if err != nil {
		return jobs.Job{}, fmt.Errorf("reading job %s to evict it: %w", e.ID, err)
	}
	if j.Status != v.Status || j.AttemptOf() != v.AttemptOf() || !j.Status.Active() {
		return jobs.Job{}, nil
	}
	_, c, err := jobs.Preempted(j, string(e.Reason), jobs.AttemptRecord{}, now)
	if err == nil {
		err = h.Store.Apply(ctx, j, c)
	}
	if errors.Is(err, records.ErrStale) {
		return jobs.Job{}, nil
	}
	if err != nil {
		return jobs.Job{}, fmt.Errorf("evicting job %s: %w", e.ID, err)
	}
	h.Log.InfoContext(ctx, "preempted", "job_id", j.ID, "tenant", j.Tenant, "reason", e.Reason, "for", e.For,
		"flavor", e.Flavor, "attempt", j.AttemptOf(), "preemptions", j.Preemptions+1)
	return j, nil
}

// stop stops the evicted attempts of js in region's cluster (jobobjects.StopAttempt).
func (h *Handler) stop(ctx context.Context, region string, js []jobs.Job) error {
	dc, err := h.Clusters.Dynamic(ctx, region)
	if err != nil {
		return fmt.Errorf("reaching %s to stop %d evicted jobs (their next attempts replace what is left): %w", region, len(js), err)
	}
	var errs []error
	for _, j := range js {
		errs = append(errs, jobobjects.StopAttempt(ctx, dc, j, j.AttemptOf(), h.PreemptionGraceMax))
	}
	return errors.Join(errs...)
}

func byID(js []jobs.Job) map[string]jobs.Job {
	out := make(map[string]jobs.Job, len(js))
	for _, j := range js {
		out[j.ID] = j
	}
	return out
}

// tenantsOf are the tenants of js, once each, in order of first appearance.
func tenantsOf(js []jobs.Job) []string {
	seen := map[string]bool{}
	var out []string
	for _, j := range js {
		if !seen[j.Tenant] {
			seen[j.Tenant] = true
			out = append(out, j.Tenant)
		}
	}
	return out
}
