package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Nothing is left behind (jobobjects.AtEnd, jobobjects.Swept). Once a job's end is recorded, with
// its pods' last lines and placement, the beat deletes what was applied for it, a finished batch
// Job aside, beside following the other jobs rather than before it goes on; the beat waits for
// those deletes only at its own end. A delete that fails is left to the sweep, which once a
// sweepEvery LISTs, in each region's cluster, every object carrying the job-id label of each kind a
// tenant may submit, and deletes those of jobs that ended or have no record, in tenants'
// namespaces only.

// Tenants lists every tenant: their namespaces are the ones the sweep deletes in.
// dynamo.TenantStore is the real one.
type Tenants interface {
	Tenants(ctx context.Context) ([]tenancy.Tenant, error)
}

const (
	// sweepEvery is how often the sweep LISTs a region's cluster: one LIST a kind (the thirteen
	// Tidegate can apply, jobobjects.Kinds) a minute, the AWS beat's own period, so that in AWS it sweeps every beat and
	// in tidegate dev, whose beat is seconds, it costs the stand-in no more than in AWS. What the
	// ends delete leaves it nothing to do most minutes; it is a second net, for a delete that
	// failed, a beat that died between an end and its delete, and what nothing else deletes.
	sweepEvery = time.Minute
	// endDeletes is how many ended jobs' objects are deleted at once: a few calls a job, kept well
	// under what client-go's default rate limit of the sandbox and EKS lets through in a beat.
	endDeletes = 8
	// endDeleteWait bounds one ended job's deletes: a few objects, each a GET and a DELETE that
	// take the API server milliseconds; what is not deleted by then is the sweep's.
	endDeleteWait = 20 * time.Second
	// detailsWait is how long after a job's end the sweep leaves its objects alone while its
	// details are still due: a beat adds them within milliseconds, or the next beat does.
	detailsWait = 5 * time.Minute
)

// leave deletes in the background what job j, whose end in status ended was just recorded, left in its cluster
// (jobobjects.AtEnd). HandleBeat waits for it before it returns.
func (h *Handler) leave(ctx context.Context, j jobs.Job, ended jobs.Status) {
	if h.Clusters == nil || len(j.Manifests) == 0 || jobobjects.KeptWhole(j, ended) {
		return
	}
	h.clearOnce.Do(func() { h.clearSlots = make(chan struct{}, endDeletes) })
	h.clearing.Add(1)
	go func() {
		defer h.clearing.Done()
		select {
		case h.clearSlots <- struct{}{}:
			defer func() { <-h.clearSlots }()
		case <-ctx.Done():
			return
		}
		ctx, cancel := context.WithTimeout(ctx, endDeleteWait)
		defer cancel()
		if err := h.deleteLeft(ctx, j, ended); err != nil {
			h.Log.WarnContext(ctx, "a job's objects not all deleted at its end; the sweep deletes the rest", "job_id", j.ID, "region", j.Region, "error", err)
		}
	}()
}

// deleteLeft reads job j's objects by name and deletes what its end in status ended deletes.
func (h *Handler) deleteLeft(ctx context.Context, j jobs.Job, ended jobs.Status) error {
	dc, err := h.Clusters.Dynamic(ctx, j.Region)
	if err != nil {
		return err
	}
	seen, err := jobobjects.Applied(ctx, dc, j)
	deleted, delErr := jobobjects.DeleteEach(ctx, dc, jobobjects.AtEnd(j.ID, ended, seen))
	for _, o := range deleted {
		h.Log.DebugContext(ctx, "deleted at its job's end", "job_id", j.ID, "kind", o.Kind, "namespace", o.Namespace, "name", o.Name)
	}
	return errors.Join(err, delErr)
}

// sweepDue reports whether region's cluster is to be swept now, and if so notes it swept.
func (h *Handler) sweepDue(region string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if last, ok := h.swept[region]; ok && now.Sub(last) < sweepEvery {
		return false
	}
	if h.swept == nil {
		h.swept = map[string]time.Time{}
	}
	h.swept[region] = now
	return true
}

// sweepAgain makes the next beat sweep region, whose sweep did not finish.
func (h *Handler) sweepAgain(region string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.swept, region)
}

// sweepLeft sweeps region's cluster when its sweep is due. What fails is logged, not returned, as
// the isolation keeper's is: a beat failed for it would be delivered again and follow every job
// again, and the next beat sweeps again.
func (h *Handler) sweepLeft(ctx context.Context, region string) {
	if h.Tenants == nil || h.Clusters == nil || len(h.SweptKinds) == 0 || !h.sweepDue(region, h.now()) {
		return
	}
	if err := h.sweepRegion(ctx, region); err != nil {
		h.sweepAgain(region)
		h.Log.WarnContext(ctx, "the sweep of objects left behind did not finish; the next beat sweeps again", "region", region, "error", err)
	}
}

// sweepRegion LISTs region's cluster for objects carrying a job id, reads their jobs' records and
// deletes what jobobjects.Swept says, counting each deletion by kind.
func (h *Handler) sweepRegion(ctx context.Context, region string) error {
	tenants, err := h.Tenants.Tenants(ctx)
	if err != nil {
		return fmt.Errorf("reading the tenants' namespaces: %w", err)
	}
	managed := map[string]bool{}
	for _, t := range tenants {
		for _, ns := range t.Namespaces {
			managed[ns] = true
		}
	}
	dc, err := h.Clusters.Dynamic(ctx, region)
	if err != nil {
		return fmt.Errorf("reaching %s's cluster: %w", region, err)
	}
	var listed []jobobjects.Object
	var errs []error
	for _, k := range h.SweptKinds {
		objs, err := jobobjects.Labelled(ctx, dc, k, h.Stack, listPage)
		errs = append(errs, err)
		listed = append(listed, objs...)
	}
	var ids []string // of objects in tenants' namespaces only: another deployment's are not read
	have := map[string]bool{}
	for _, o := range listed {
		if managed[o.Namespace] && o.Job != "" && !have[o.Job] {
			have[o.Job] = true
			ids = append(ids, o.Job)
		}
	}
	if len(ids) == 0 {
		return errors.Join(errs...)
	}
	read, err := h.Jobs.States(ctx, ids)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("reading the states of %d jobs with objects in %s: %w", len(ids), region, err))...)
	}
	states := make(map[string]jobs.Status, len(read))
	due := map[string]bool{}
	for _, j := range read {
		states[j.ID] = j.Status
		// An end whose details are still to be added keeps its objects a while for the beat
		// that adds them (record), which reads its pods.
		due[j.ID] = j.DetailsDue && h.now().Sub(endedAt(j)) < detailsWait
	}
	listed = slices.DeleteFunc(listed, func(o jobobjects.Object) bool { return due[o.Job] })
	deleted, err := jobobjects.DeleteEach(ctx, dc, jobobjects.Swept(listed, states, managed))
	errs = append(errs, err)
	h.countSwept(ctx, region, deleted)
	return errors.Join(errs...)
}

// countSwept logs each object the sweep deleted and counts them by kind.
func (h *Handler) countSwept(ctx context.Context, region string, deleted []jobobjects.Object) {
	byKind := map[string]int{}
	for _, o := range deleted {
		byKind[o.Kind]++
		h.Log.InfoContext(ctx, "swept an object left behind", "region", region, "job_id", o.Job,
			"kind", o.Kind, "namespace", o.Namespace, "name", o.Name)
	}
	for kind, n := range byKind {
		if err := h.Metrics.Put(metrics.SweptObjects, []string{region, kind}, float64(n)); err != nil {
			h.Log.WarnContext(ctx, "recording the sweep's deletions", "error", err)
		}
	}
}
