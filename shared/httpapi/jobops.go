package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
)

// Clusters reaches each region's cluster; kube.Clusters is the real one.
type Clusters interface {
	Client(ctx context.Context, region string) (kubernetes.Interface, error)
	Dynamic(ctx context.Context, region string) (dynamic.Interface, error)
}

// cancelJob is DELETE /api/v1/jobs/{id}: a queued job is cancelled; a dispatched one is deleted
// from its cluster (foreground: its pods go first) and then cancelled; a finished one has what is
// left of its objects deleted. It answers 200 with the job, or with ?purge=true deletes the
// job's record too and answers 204.
func (a *api) cancelJob(w http.ResponseWriter, r *http.Request) error {
	purge, err := purgeParam(r)
	if err != nil {
		return err
	}
	j, err := a.visibleJob(r)
	if err != nil {
		return err
	}
	if err := a.deleteJob(r.Context(), j, purge); err != nil {
		return err
	}
	a.ringWebhooks(r.Context())
	if purge {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	j, err = a.jobs.Job(r.Context(), j.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"job": j})
}

// purgeParam reads DELETE's ?purge: true deletes the job's record as well.
func purgeParam(r *http.Request) (bool, error) {
	switch r.URL.Query().Get("purge") {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, Invalid("purge is not true or false", FieldProblem{"purge", "true (delete the job's record too) or false"})
}

// deleteJob ends job j, whatever it was doing: an unfinished job is cancelled, a finished one's
// remaining objects are deleted; with purge its record is deleted last, once nothing of it is
// left in the cluster. Its events stay until they expire.
func (a *api) deleteJob(ctx context.Context, j jobs.Job, purge bool) error {
	if !j.Status.Terminal() {
		if err := a.cancel(ctx, j); err != nil || !purge {
			return err
		}
		var err error
		if j, err = a.jobs.Job(ctx, j.ID); err != nil {
			return err
		}
	} else if reachedCluster(j) {
		if err := a.deleteObjects(ctx, j); err != nil {
			return err
		}
	}
	if !purge {
		return nil
	}
	if j.Group() {
		if err := a.settledForPurge(ctx, j); err != nil {
			return err
		}
	}
	switch err := a.jobs.Purge(ctx, j); {
	case errors.Is(err, records.ErrNotFound):
		return nil // deleted by another request meanwhile
	case errors.Is(err, records.ErrStale):
		return Errorf(CodeConflict, "job %s changed while it was being deleted; look at it and try again", j.ID)
	default:
		return err
	}
}

// reachedCluster reports whether job j was ever claimed for dispatch, so that objects of its may
// be in its cluster: a job cancelled while queued never had any.
func reachedCluster(j jobs.Job) bool {
	return slices.ContainsFunc(j.StatusHistory, func(t jobs.Transition) bool { return t.Status == jobs.StatusDispatching })
}

// deleteObjects deletes job j's objects from its cluster, in the foreground.
func (a *api) deleteObjects(ctx context.Context, j jobs.Job) error {
	if a.clusters == nil {
		return Errorf(CodeUnavailable, "no cluster access is configured to delete job %s's objects", j.ID)
	}
	dc, err := a.clusters.Dynamic(ctx, j.Region)
	if err != nil {
		return err
	}
	return jobobjects.Delete(ctx, dc, j)
}

// cancel ends job j, whatever it was doing, or says why it cannot.
func (a *api) cancel(ctx context.Context, j jobs.Job) error {
	var token string // the claim cancel took over, when j was being dispatched
	if j.Status == jobs.StatusDispatching {
		var err error
		if j, token, err = a.takeClaim(ctx, j); err != nil {
			return err
		}
	}
	switch {
	case j.Status.Terminal():
		return Errorf(CodeConflict, "job %s is already %s", j.ID, j.Status)
	case j.Group(): // runs nothing itself; its children reached by dispatch are cancelled first
		if err := a.cancelChildren(ctx, j); err != nil {
			return err
		}
	case j.Status == jobs.StatusBlocked: // never dispatched
	case j.Status != jobs.StatusQueued || j.AttemptOf() > 1: // a retried job's last attempt may have left objects
		if err := a.deleteObjects(ctx, j); err != nil {
			return err
		}
	}
	_, c, err := jobs.Move(j, jobs.StatusCancelled, "cancelled by "+principalOf(ctx).Subject, a.now())
	if err != nil {
		return Errorf(CodeConflict, "job %s cannot be cancelled now: %v", j.ID, err)
	}
	c.Claim = token
	err = a.jobs.Apply(ctx, j, c)
	if errors.Is(err, records.ErrStale) {
		return Errorf(CodeConflict, "job %s changed while it was being cancelled; look at it and try again", j.ID)
	}
	if err == nil && j.HasDependents {
		a.release(ctx, j)
	}
	return err
}

// groupRelease bounds the release of a cancelled array's or workflow's children that the API
// starts beside its answer: thousands of children take longer than a request may, and the
// reconcile beat's sweep finishes what is left.
const groupRelease = 25 * time.Second

// release releases cancelled job j's dependents now, rather than at the next beat, which
// finishes what this leaves: in the request for a job, beside it for a group's children.
func (a *api) release(ctx context.Context, j jobs.Job) {
	do := func(ctx context.Context) {
		if _, err := a.releaser.Release(ctx, j.ID); err != nil {
			a.logger(ctx).WarnContext(ctx, "releasing a cancelled job's dependents; the beat will finish", "job_id", j.ID, "err", err)
		}
	}
	if !j.Group() {
		do(ctx)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), groupRelease)
		defer cancel()
		do(ctx)
	}()
}

// claimWait bounds how long a cancel waits for a dispatcher applying the job to finish: an apply
// takes well under a second, so a claim held this long belongs to a dispatcher that is stuck or
// gone, and the claim itself runs out within two minutes.
const claimWait = 10 * time.Second

// takeClaim makes dispatching job j the cancel's to end: a claim no dispatcher holds (parked
// after a failed apply, or run out) is taken over at once, so no drain applies the job again; a
// held one is waited for, up to claimWait, and the job answered as the dispatcher left it. It
// answers the job and, when it took the claim, the claim's token.
func (a *api) takeClaim(ctx context.Context, j jobs.Job) (jobs.Job, string, error) {
	deadline := a.now().Add(claimWait)
	for j.Status == jobs.StatusDispatching {
		if !j.Claim.Held(a.now()) {
			token := ids.New("cancel-", a.now())
			taken, c, err := jobs.Adopt(j, jobs.Claim{Token: token, Until: a.now().Add(claimWait)}, a.now())
			if err != nil {
				return j, "", err
			}
			if err = a.jobs.Apply(ctx, j, c); err == nil {
				return taken, token, nil
			}
			if !errors.Is(err, records.ErrStale) {
				return j, "", err
			}
		} else if !a.now().Before(deadline) {
			return j, "", Errorf(CodeConflict, "job %s is being dispatched right now; cancel it again in a few seconds", j.ID)
		} else {
			select {
			case <-ctx.Done():
				return j, "", ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
		var err error
		if j, err = a.jobs.Job(ctx, j.ID); err != nil {
			return j, "", err
		}
	}
	return j, "", nil
}

// retryJob is POST /api/v1/jobs/{id}/retry: a new job from the same manifests and settings,
// admitted afresh (the policy may have changed since).
func (a *api) retryJob(w http.ResponseWriter, r *http.Request) error {
	j, err := a.visibleJob(r)
	if err != nil {
		return err
	}
	if j.Array != nil {
		return Errorf(CodeConflict, "job %s is an array: retry its children that failed (GET /api/v1/jobs?parent=%s), or submit the array again", j.ID, j.ID)
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	s := submission{
		manifests: j.Manifests, namespace: j.Namespace, region: j.Region, priority: j.Priority, labels: j.Labels,
		template: j.Template, retryOf: j.ID, idempotencyKey: key, body: []byte("retry " + j.ID), retry: j.Retry,
		readyTimeout: j.ReadyTimeout, maxPreemptions: j.MaxPreemptions, onRegionLost: j.OnRegionLost,
	}
	if len(j.Regions) > 1 { // the retry chooses among the same regions afresh
		s.region, s.regions = "", j.Regions
	}
	if j.Spot != nil {
		s.maxSpotPrice, s.spotType = &j.Spot.MaxPrice, j.Spot.InstanceType
		if j.Spot.Deadline != nil {
			// The same wait as the first job's, from the retry's submission.
			s.spotDeadline, s.onDeadline = j.Spot.Deadline.Sub(j.CreatedAt).String(), string(j.Spot.OnDeadline)
		}
	}
	if err := a.admit(r.Context(), &s); err != nil {
		return err
	}
	return a.store(w, r, s)
}

type bulkDeleteRequest struct {
	Namespace     string `json:"namespace"`
	Region        string `json:"region"`
	Status        string `json:"status"`
	OlderThanDays *int   `json:"older_than_days"`
	LabelSelector string `json:"label_selector"`
	DryRun        bool   `json:"dry_run"`
	Purge         bool   `json:"purge"`
}

// maxBulk bounds the jobs one bulk delete matches, and bulkBudget the time it spends deleting
// them: each job costs a few cluster and table calls, and the API function has 30 s. What is
// left answers more: true; run it again for the rest.
const (
	maxBulk    = 500
	bulkBudget = 20 * time.Second
)

// bulkDelete is POST /api/v1/jobs/bulk-delete: delete every matching job of the caller's as
// DELETE /api/v1/jobs/{id} does (cancel an unfinished one; remove a finished one's objects, and
// its record with purge), or with dry_run just say which. Without a status, or with an
// unfinished one, only unfinished jobs match; a finished status (completed is succeeded) matches
// finished jobs. older_than_days counts from when the job was created.
func (a *api) bulkDelete(w http.ResponseWriter, r *http.Request) error {
	var req bulkDeleteRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	f, before, err := a.bulkFilter(r.Context(), req)
	if err != nil {
		return err
	}
	matched, more, err := a.bulkMatch(r.Context(), f, before)
	if err != nil {
		return err
	}
	out := map[string]any{"matched": len(matched), "deleted": 0, "jobs": matched, "dry_run": req.DryRun, "more": more}
	if req.DryRun {
		return writeJSON(w, http.StatusOK, out)
	}
	deleted := 0
	var failed []FieldProblem
	start := time.Now()
	for _, j := range matched {
		if time.Since(start) > bulkBudget {
			out["more"] = true
			break
		}
		full, err := a.jobs.Job(r.Context(), j.ID)
		if errors.Is(err, records.ErrNotFound) {
			continue // purged by another request meanwhile
		}
		if err == nil {
			err = a.deleteJob(r.Context(), full, req.Purge)
		}
		if err != nil {
			failed = append(failed, FieldProblem{Field: j.ID, Problem: a.clusterProblem(r.Context(), "deleting the job", err)})
			continue
		}
		deleted++
	}
	out["deleted"] = deleted
	a.ringWebhooks(r.Context())
	if len(failed) > 0 {
		out["failed"] = failed
	}
	return writeJSON(w, http.StatusOK, out)
}

// bulkFilter is what a bulk delete's request matches: the listing filter and, with
// older_than_days, the time before which a job must have been created.
func (a *api) bulkFilter(ctx context.Context, req bulkDeleteRequest) (jobs.Filter, time.Time, error) {
	q := map[string][]string{}
	for k, v := range map[string]string{"namespace": req.Namespace, "region": req.Region, "status": req.Status, "label_selector": req.LabelSelector} {
		if v != "" {
			q[k] = []string{v}
		}
	}
	f, err := a.jobFilter(ctx, q)
	if err != nil {
		return f, time.Time{}, err
	}
	var before time.Time
	if req.OlderThanDays != nil {
		if d := *req.OlderThanDays; d < 1 || d > 365 {
			return f, before, Invalid("older_than_days is out of range", FieldProblem{"older_than_days", "a whole number from 1 to 365"})
		}
		before = a.now().Add(-time.Duration(*req.OlderThanDays) * 24 * time.Hour)
	}
	return f, before, nil
}

// bulkMatch lists up to maxBulk jobs that f and before match, finished ones only when f asks for
// a finished status, and reports whether more may match. With before, it reads oldest first and
// stops at the first job created since, so a tenant's recent jobs are not read at all.
func (a *api) bulkMatch(ctx context.Context, f jobs.Filter, before time.Time) ([]jobs.Job, bool, error) {
	matched := []jobs.Job{}
	if !before.IsZero() {
		f.Ascending = true
	}
	for cursor := ""; ; {
		page, err := a.jobs.List(ctx, f, maxLimit, cursor)
		if err != nil {
			return nil, false, err
		}
		for _, j := range page.Jobs {
			if !before.IsZero() && !j.CreatedAt.Before(before) {
				return matched, false, nil
			}
			if j.Status.Terminal() == f.Status.Terminal() {
				if len(matched) == maxBulk {
					return matched, true, nil
				}
				matched = append(matched, j)
			}
		}
		if cursor = page.Next; cursor == "" {
			return matched, false, nil
		}
	}
}
