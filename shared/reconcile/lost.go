package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// Fences are the attempts fenced in regions that were lost (dynamo.Fence); dynamo.JobStore is the
// real one.
type Fences interface {
	Fences(ctx context.Context, region string) ([]dynamo.Fence, error)
	ClearFence(ctx context.Context, f dynamo.Fence) error
}

var _ Fences = (*dynamo.JobStore)(nil)

// regions acts on what the regions' health records say after this beat followed them (health,
// read once for every region): a region this beat reached whose record still counts failures (a
// drain's miss, say) is recorded reached; a lost one's jobs that ask for it are queued for
// another region, their attempts fenced; a region reached again has its fences cleared; a
// draining one's drain is rung, to stop what still runs there.
func (h *Handler) regions(ctx context.Context, health map[string]dynamo.RegionHealth) error {
	now := h.now()
	var errs []error
	for _, region := range h.Regions {
		hl := health[region]
		reached := h.reachedNow(region)
		if reached && hl.Failures > 0 && h.Health != nil {
			errs = append(errs, h.Health.Reached(ctx, region, now))
		}
		switch {
		case !reached && hl.Lost(now, h.LostAfter):
			errs = append(errs, h.displaceLost(ctx, region, hl.Unreachable(now)))
		case reached && hl.Fenced > 0:
			errs = append(errs, h.clearFences(ctx, region))
		}
		if hl.Cordon == dynamo.Draining && h.Ringer != nil {
			errs = append(errs, h.Ringer.Ring(ctx, region))
		}
	}
	return errors.Join(errs...)
}

// displaceLost queues again, for another of their regions, the jobs dispatched to region (lost:
// unreached for gone) that ask for it (on_region_lost: requeue), each a new attempt with the
// lost one fenced; the others wait for the region. It reads the region's active records whole
// each beat the region stays lost: their policies are on them.
func (h *Handler) displaceLost(ctx context.Context, region string, gone time.Duration) error {
	states, err := h.Jobs.ActiveStates(ctx, region)
	if err != nil || len(states) == 0 {
		return err
	}
	ids := make([]string, len(states))
	for i, j := range states {
		ids[i] = j.ID
	}
	all, err := h.Jobs.Records(ctx, ids)
	if err != nil {
		return fmt.Errorf("reading lost region %s's jobs: %w", region, err)
	}
	now := h.now()
	detail := fmt.Sprintf("its region %s was unreached for %s", region, gone.Round(time.Second))
	var errs []error
	var moved []jobs.Job
	var trail []jobs.JobDecision
	for _, j := range all {
		if j.Region != region || j.OnRegionLost != jobs.OnRegionLostRequeue || !j.Displaceable() || !j.Elsewhere() {
			continue
		}
		_, c, err := jobs.Displaced(j, jobs.ReasonRegionLost, detail, region, now)
		if err == nil {
			err = h.Jobs.Apply(ctx, j, c)
		}
		switch {
		case errors.Is(err, records.ErrStale):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("queueing job %s out of lost region %s: %w", j.ID, region, err))
			continue
		}
		moved = append(moved, j)
		trail = append(trail, jobs.JobDecision{JobID: j.ID, Decision: jobs.Decision{At: now, Kind: jobs.DecisionRegionLost,
			Reason: jobs.ReasonRegionLost + ": " + detail, Attempt: j.AttemptOf(), Region: region}})
		h.Log.WarnContext(ctx, "region lost; job queued for another region, its attempt fenced", "job_id", j.ID, "region", region, "attempt", j.AttemptOf())
	}
	if len(trail) > 0 {
		errs = append(errs, h.Jobs.KeepDecisions(ctx, trail))
	}
	errs = append(errs, h.ringElsewhere(ctx, moved, region))
	return errors.Join(errs...)
}

// ringElsewhere wakes the regions besides region that js allow, so they take them up now.
func (h *Handler) ringElsewhere(ctx context.Context, js []jobs.Job, region string) error {
	if h.Ringer == nil {
		return nil
	}
	var rung []string
	var errs []error
	for _, j := range js {
		for _, r := range j.Regions {
			if r != region && !slices.Contains(rung, r) && slices.Contains(h.Regions, r) {
				rung = append(rung, r)
				errs = append(errs, h.Ringer.Ring(ctx, r))
			}
		}
	}
	return errors.Join(errs...)
}

// clearFences deletes what the attempts fenced in region (reached again) left there, and clears
// each fence once its objects are gone; the region admits again when none is left
// (dynamo.RegionHealth.Closed). Each job's trail says so.
func (h *Handler) clearFences(ctx context.Context, region string) error {
	if h.Fences == nil || h.Clusters == nil {
		return nil
	}
	fs, err := h.Fences.Fences(ctx, region)
	if err != nil || len(fs) == 0 {
		return err
	}
	dc, err := h.Clusters.Dynamic(ctx, region)
	if err != nil {
		return fmt.Errorf("reaching %s to delete its fenced attempts: %w", region, err)
	}
	now := h.now()
	var errs []error
	var trail []jobs.JobDecision
	for _, f := range fs {
		j, err := h.Jobs.Job(ctx, f.JobID)
		switch {
		case errors.Is(err, records.ErrNotFound):
			// Purged since: the sweep of objects left behind takes what it left (leftovers.go).
		case err != nil:
			errs = append(errs, err)
			continue
		default:
			// Its pods go at once: the attempt's work was given up when it was fenced.
			if err := jobobjects.StopAttempt(ctx, dc, j, f.Attempt, 0); err != nil {
				errs = append(errs, fmt.Errorf("deleting job %s's fenced attempt %d in %s: %w", f.JobID, f.Attempt, region, err))
				continue
			}
			trail = append(trail, jobs.JobDecision{JobID: j.ID, Decision: jobs.Decision{At: now, Kind: jobs.DecisionFenceCleared,
				Reason: "its fenced attempt's objects were deleted once " + region + " was reached again", Attempt: f.Attempt, Region: region}})
		}
		if err := h.Fences.ClearFence(ctx, f); err != nil {
			errs = append(errs, err)
			continue
		}
		h.Log.InfoContext(ctx, "fenced attempt cleared", "job_id", f.JobID, "attempt", f.Attempt, "region", region)
	}
	if len(trail) > 0 {
		errs = append(errs, h.Jobs.KeepDecisions(ctx, trail))
	}
	return errors.Join(errs...)
}
