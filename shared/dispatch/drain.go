package dispatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/admission"
	"github.com/tidegate/tidegate/shared/capacitytype"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/records"
	"github.com/tidegate/tidegate/shared/spotgate"
	"github.com/tidegate/tidegate/shared/tenancy"
)

const (
	// drainLease outlasts one drain: the function's 60 s timeout in template.yaml, and half again.
	drainLease = 90 * time.Second
	// maxDrainRounds and drainRoundsFor bound how often, and for how long, knocks keep one drain
	// going (Drain): well inside the function's 60 s.
	maxDrainRounds = 10
	drainRoundsFor = 20 * time.Second
	// claimLease is how long a claimed job may sit in dispatching before another drain adopts it:
	// an apply of a few objects takes well under a second, so two minutes means its drainer died.
	claimLease = 2 * time.Minute
	// gateRefresh is how often a waiting job's spot observation is written back, so
	// GET /api/v1/jobs/{id} shows why it waits without a write per job per drain.
	gateRefresh = time.Minute
	// dispatchers is how many admitted jobs a drain claims at once: a claim is one conditional
	// update, about 20 ms on the stand-ins and more against AWS.
	dispatchers = 8
	// appliers is how many claimed jobs a drain applies at once, beside its next rounds. An apply
	// is a create and a conditional write with its event, each 20 ms on quiet stand-ins and
	// 200 ms on busy ones (bench/ends at capacity 100): eight at once held a drain to 20 jobs a
	// second there. Thirty-two stay under the client's own 50 QPS (shared/kube) at the creates'
	// rate the drains reach.
	appliers = 32
)

// Drain dispatches what region's capacity and spot prices allow now, in priority order, and
// records why every other queued job waits. Finding the region draining already, it knocks on
// that drain's lease, and that drain runs again before it lets go: its reads may come from before
// what woke this one (an end that gave back room, a job submitted), which would otherwise wait
// for the next ring or the beat.
func (h *Handler) Drain(ctx context.Context, region string) error {
	h.Log.DebugContext(ctx, "draining", "region", region)
	name, owner := dynamo.DrainLease(region), ids.New("drain-", h.now())
	ok, err := h.Leases.Acquire(ctx, name, owner, h.now(), h.now().Add(drainLease))
	for !ok && err == nil {
		var knocked bool
		if knocked, err = h.Leases.Knock(ctx, name, h.now()); err != nil || knocked {
			h.Log.InfoContext(ctx, "region already draining; it drains again before it stops", "region", region)
			return err
		}
		// Let go meanwhile: take it, or knock on whoever took it.
		ok, err = h.Leases.Acquire(ctx, name, owner, h.now(), h.now().Add(drainLease))
	}
	if err != nil {
		return err
	}
	began := h.now()
	a := h.newApplying(ctx, region)
	var errs []error
	for round := 1; ; round++ {
		idle, err := h.drainHeld(ctx, region, a)
		errs = append(errs, err)
		a.raise() // a crash in an apply ends the drain here, its lease held, as one in a round does
		if round == maxDrainRounds || h.now().Sub(began) > drainRoundsFor || ctx.Err() != nil {
			break // the beat's sweep wakes the region for whatever a knock left
		}
		// Idle only if this round erred nowhere and no apply is in flight (one that fails puts its
		// job back): a region released idle is not rung for its ends.
		again, err := h.Leases.ReleaseUnlessKnocked(context.WithoutCancel(ctx), name, owner, idle && err == nil && !a.busy())
		if err != nil {
			h.Log.WarnContext(ctx, "releasing drain lease", "region", region, "err", err)
		}
		if !again {
			return errors.Join(append(errs, a.wait())...)
		}
		// Knocked: hold the lease a drain longer and read afresh, while the last round's applies go on.
		if ok, err := h.Leases.Acquire(ctx, name, owner, h.now(), h.now().Add(drainLease)); err != nil || !ok {
			return errors.Join(append(errs, err, a.wait())...)
		}
	}
	if err := h.Leases.Release(context.WithoutCancel(ctx), name, owner); err != nil {
		h.Log.WarnContext(ctx, "releasing drain lease", "region", region, "err", err)
	}
	return errors.Join(append(errs, a.wait())...)
}

// drainHeld is one round of a drain of region, whose lease the caller holds: it claims what it
// admits and leaves their applies to a, which runs them beside the rounds after it. It answers
// whether it found the region idle: its queues read to their ends, and no job in any of them.
func (h *Handler) drainHeld(ctx context.Context, region string, a *applying) (bool, error) {
	began := time.Now()
	// The active jobs first: what they hold says how far the queues need reading.
	active, err := h.Store.Active(ctx, region)
	if err != nil {
		return false, err
	}
	var errs []error
	for _, j := range active {
		if j.Status == jobs.StatusDispatching && j.Claim != nil && j.Claim.Until.Before(h.now()) {
			errs = append(errs, h.dispatch(ctx, region, admission.Placed{ID: j.ID}, h.adoptedOnDemand(ctx, region, j), nil))
		}
	}
	census := h.census(ctx, region)
	p, err := h.readQueues(ctx, region, h.flavorsOf(region), active, census)
	if err != nil {
		return false, errors.Join(append(errs, err)...)
	}
	if p.stopped {
		h.Log.InfoContext(ctx, "read budget spent; the next drain goes on from where this one stopped", "region", region)
	}
	// The region's own queue goes on; the roaming jobs wait for the next drain.
	errs = append(errs, p.rmErr, h.failAtDeadline(ctx, p.failing))
	h.keepPrices(ctx, region, p.observed)
	// The types the drain judged no job of (a full region's, held jobs') keep their history too,
	// once a step: the held jobs' prices are what their owners watch.
	h.keepWaitingPrices(ctx, region, census.Types)
	decision := p.decision
	var tr trail
	defer h.keep(ctx, &tr)
	errs = append(errs, h.evict(ctx, region, decision.Evict, active, p.queued, p.snap, &tr))
	if p.closed == admission.ReasonRegionDraining {
		errs = append(errs, h.drainOut(ctx, region, active, &tr))
	}
	read := time.Since(began)
	errs = append(errs, h.claimAll(ctx, region, decision.Admit, p.onDemand, p.rm.choices, a, admitted(p.snap, &tr))...)
	claimed := time.Since(began) - read
	waiting := slices.Concat(decision.Waiting, p.backoff)
	errs = append(errs, h.recordWaits(ctx, p.queued, waiting, p.observed, &tr))
	h.noteHeld(region, jobs.SpotTypes(p.queued), longHeldTenants(p.queued, waiting))
	h.gauge(ctx, region, census, p, len(active)+len(decision.Admit), waiting)
	h.took(region, len(decision.Admit))
	errs = append(errs, h.settleRoaming(ctx, region, p.rm, p.full, p.roomLeft, census.Jobs, decision))
	h.Log.DebugContext(ctx, "drained", "region", region, "admitted", len(decision.Admit), "waiting", len(waiting),
		"took", time.Since(began), "reading", read, "claiming", claimed)
	return p.idle && len(census.LongHeld) == 0, errors.Join(errs...)
}

// snapshot is admission's view of a region: its flavors, and what its active jobs hold of them.
type snapshot struct {
	region   flavors.Region
	capacity admission.FlavorCapacity
}

// flavorsOf is region's flavors: the setting's, else one of the older settings' room (Capacity's
// jobs as pods, GPUs' GPUs).
func (h *Handler) flavorsOf(region string) flavors.Region {
	var gpus int64
	if h.GPUs != nil {
		gpus = h.GPUs(region)
	}
	return h.Flavors.Of(region, h.Capacity(region), gpus)
}

// capacity is region's snapshot: its flavors, what each tenant's active jobs hold of each (their
// demand, on the flavor each was admitted on) and, under quotas, each tenant's share.
func (h *Handler) capacity(ctx context.Context, region string, queued, active []jobs.Job) (snapshot, error) {
	fr := h.flavorsOf(region)
	c := admission.FlavorCapacity{Resources: fr.Resources, Flavors: fr.Flavors, InUse: map[string][]admission.Vec{},
		MaxLongRunning: h.LongRunningPerTenant, LongRunningInUse: admission.SlotlessUse(active, h.LongRunningHoldsSlot)}
	for _, j := range active {
		c.InUse[j.Tenant] = fr.Use(c.InUse[j.Tenant], j)
	}
	snap := snapshot{region: fr, capacity: c}
	if h.Tenants == nil {
		return snap, nil
	}
	quotas, err := h.shares(ctx, region, slices.Concat(queued, active))
	if err != nil {
		return snap, err
	}
	for name, q := range quotas {
		if aq := fr.Quota(q); aq != nil {
			if snap.capacity.Quotas == nil {
				snap.capacity.Quotas = map[string]admission.Quota{}
			}
			snap.capacity.Quotas[name] = aq
		}
	}
	snap.capacity.DefaultQuota = fr.Quota(h.DefaultQuota)
	snap.capacity.Reclaim = h.reclaimOf(fr, snap.capacity, active)
	return snap, nil
}

// shares answers the quota of region each tenant of js has on its record (quotasOf), nil when
// none sets one (the default, if any, is every tenant's). A tenant without a record (deleted
// since) has the default.
func (h *Handler) shares(ctx context.Context, region string, js []jobs.Job) (map[string]tenancy.Quota, error) {
	quotas, err := h.quotasOf(ctx, tenantsOf(js))
	if err != nil {
		return nil, fmt.Errorf("sharing %s: %w", region, err)
	}
	var out map[string]tenancy.Quota
	for name, qs := range quotas {
		if q, ok := qs[region]; ok {
			if out == nil {
				out = map[string]tenancy.Quota{}
			}
			out[name] = q
		}
	}
	return out, nil
}

// candidates are the queued jobs as admission sees them, with what each asks of the region: those
// onDemand without their price cap, so that only room and shares hold them, and kept to the
// flavors of on-demand nodes; the other capped ones to the flavors of spot nodes. Where the
// flavors do not tell capacity types apart (no flavor has the capacity label), either runs on any.
func (h *Handler) candidates(fr flavors.Region, queued []jobs.Job, onDemand map[string]bool) ([]admission.Candidate, []admission.Need) {
	out, needs := make([]admission.Candidate, len(queued)), make([]admission.Need, len(queued))
	label := cmp.Or(h.CapacityLabel, capacitytype.Default)
	for i, j := range queued {
		out[i] = admission.Candidate{ID: j.ID, Tenant: j.Tenant, Priority: j.Priority, CreatedAt: j.CreatedAt, GPUs: j.GPUs, Spot: j.Spot,
			Slotless: !admission.HoldsSlot(j, h.LongRunningHoldsSlot)}
		value, ok := "", false
		switch {
		case onDemand[j.ID]:
			out[i].Spot = nil
			value, ok = capacitytype.OnDemandValue(label)
		case j.Spot != nil:
			value, ok = capacitytype.SpotValue(label)
		}
		if ok {
			j.NodeSelector = maps.Clone(j.NodeSelector)
			if j.NodeSelector == nil {
				j.NodeSelector = map[string]string{}
			}
			j.NodeSelector[label] = value
		}
		needs[i] = fr.Need(j)
	}
	return out, needs
}

// atDeadline sorts the queued jobs by their price at their spot deadline (admission.Deadline):
// those that asked to fail there (failing), and the rest (kept), with the IDs of those that run
// on demand.
func atDeadline(queued []jobs.Job, observed map[string]spotgate.Observation, now time.Time) (kept, failing []jobs.Job, onDemand map[string]bool) {
	kept = make([]jobs.Job, 0, len(queued))
	onDemand = map[string]bool{}
	for _, j := range queued {
		var o spotgate.Observation
		if j.Spot != nil {
			o = observed[j.Spot.InstanceType]
		}
		switch admission.Deadline(j.Spot, o, now) {
		case admission.Fail:
			failing = append(failing, j)
			continue
		case admission.OnDemand:
			onDemand[j.ID] = true
		}
		kept = append(kept, j)
	}
	return kept, failing, onDemand
}

// failAtDeadline fails each job of failing with spot_deadline_passed and its job.failed event
// (nothing of them was applied).
func (h *Handler) failAtDeadline(ctx context.Context, failing []jobs.Job) error {
	now := h.now()
	var errs []error
	for _, j := range failing {
		_, c, err := jobs.Move(j, jobs.StatusFailed, jobs.ReasonSpotDeadlinePassed, now)
		if err == nil {
			err = h.Store.Apply(ctx, j, c)
		}
		switch {
		case err == nil:
			h.Log.InfoContext(ctx, "spot deadline passed; failed", "job_id", j.ID, "region", j.Region)
		case !errors.Is(err, records.ErrStale): // stale: cancelled meanwhile, say
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// adoptedOnDemand says whether job j, whose claim ran out, is applied on demand: its spot
// deadline has passed and the price still holds it now. The drain that claimed it is gone, and
// with it what it decided.
func (h *Handler) adoptedOnDemand(ctx context.Context, region string, j jobs.Job) bool {
	if j.Spot == nil || j.Spot.Deadline == nil {
		return false
	}
	now := h.now()
	return admission.Deadline(j.Spot, h.Prices.Observe(ctx, region, j.Spot.InstanceType, now), now) == admission.OnDemand
}

// observe reads the spot price of every instance type the queued jobs cap, once each.
func (h *Handler) observe(ctx context.Context, region string, queued []jobs.Job) map[string]spotgate.Observation {
	out := map[string]spotgate.Observation{}
	for _, j := range queued {
		if j.Spot == nil {
			continue
		}
		if _, done := out[j.Spot.InstanceType]; !done {
			out[j.Spot.InstanceType] = h.Prices.Observe(ctx, region, j.Spot.InstanceType, h.now())
		}
	}
	return out
}

// dispatch claims one job, applies it to the region's cluster and records it pending with its
// job.dispatched event. A job another drain took first is skipped. An apply the cluster refuses
// for good fails the job at once (reject); one that a retry may mend waits out a backoff
// (retryLater); a cluster out of reach leaves the claim to run out, so the next drain adopts it.
//
// A job onDemand (its spot deadline passed with the price above its cap) has its pods sent to
// on-demand capacity (capacitytype.OnDemand, by the label CapacityLabel names), and its dispatch
// says so in its status history.
//
// A roaming job (choice set: why region was chosen among its regions) is claimed with ClaimIn,
// which gives it region in the same conditional write.
//
// The job's pods select the node labels of the flavor admission placed it on (p.Flavor), which
// its claim records; one adopted (p.Flavor "") goes where its first claim meant it to.
func (h *Handler) dispatch(ctx context.Context, region string, p admission.Placed, onDemand bool, choice *jobs.RegionChoice) error {
	j, token, err := h.claim(ctx, region, p, choice)
	if err != nil || token == "" {
		return err
	}
	return h.apply(ctx, region, j, token, onDemand)
}

// claim claims admitted job p for region (in the region choice made for a roaming job), and
// answers it whole with its claim's token; no token when another drain holds it or it has moved on.
func (h *Handler) claim(ctx context.Context, region string, p admission.Placed, choice *jobs.RegionChoice) (jobs.Job, string, error) {
	token := ids.New("claim-", h.now())
	var j jobs.Job
	var err error
	if choice != nil {
		j, err = h.Store.ClaimIn(ctx, p.ID, region, p.Flavor, *choice, token, h.now(), h.now().Add(claimLease))
	} else {
		j, err = h.Store.ClaimOn(ctx, p.ID, region, p.Flavor, token, h.now(), h.now().Add(claimLease))
	}
	if errors.Is(err, records.ErrStale) {
		return j, "", nil
	}
	if err != nil {
		return j, "", err
	}
	if h.afterClaim != nil {
		h.afterClaim(j)
	}
	return j, token, nil
}

// apply applies job j, which the claim token holds for region, and records it pending (or why it
// was not applied).
func (h *Handler) apply(ctx context.Context, region string, j jobs.Job, token string, onDemand bool) error {
	dc, err := h.Clusters.Dynamic(ctx, region)
	if err != nil {
		return fmt.Errorf("reaching %s's cluster: %w", region, err)
	}
	applied := j // the record keeps the manifests as submitted
	applied.Manifests = jobobjects.WithJobTTL(j.Manifests, h.JobTTL)
	if fr := h.flavorsOf(region); j.Flavor != "" {
		if f := fr.Index(j.Flavor); f >= 0 {
			applied.Manifests = flavors.Select(applied.Manifests, fr.Labels[f])
		}
	}
	reason := ""
	if onDemand {
		applied.Manifests = capacitytype.OnDemand(applied.Manifests, cmp.Or(h.CapacityLabel, capacitytype.Default))
		reason = jobs.ReasonSpotDeadlineOnDemand
	}
	applyErr := jobobjects.Apply(ctx, dc, applied, h.Stack, h.ended)
	switch {
	case errors.Is(applyErr, jobobjects.ErrNameFinishing):
		return h.requeue(ctx, j, token, applyErr, admission.ReasonNameInUse)
	case applyErr != nil && !jobobjects.Final(applyErr) && unreached(applyErr):
		// The cluster is out of reach, not the job at fault: it waits for the region, its
		// dispatch attempts uncounted, and the region admits nothing until the beat reaches it.
		h.missed(ctx, region, applyErr)
		return h.requeue(ctx, j, token, applyErr, admission.ReasonRegionUnreachable)
	case applyErr != nil && !jobobjects.Final(applyErr):
		return h.retryLater(ctx, dc, j, token, applyErr)
	}
	if h.afterApply != nil {
		h.afterApply(j)
	}
	if applyErr != nil {
		return h.reject(ctx, dc, j, token, applyErr)
	}
	return h.record(ctx, j, token, jobs.StatusPending, reason)
}

// record moves claimed job j to status to, for reason, with its event, if the claim is still
// token's.
func (h *Handler) record(ctx context.Context, j jobs.Job, token string, to jobs.Status, reason string) error {
	_, c, err := jobs.Move(j, to, reason, h.now())
	if err != nil {
		return err
	}
	c.Claim = token
	if err := h.Store.Apply(ctx, j, c); err != nil && !errors.Is(err, records.ErrStale) {
		return err
	}
	h.counted(ctx, j, to, reason)
	h.Log.InfoContext(ctx, "dispatched", "job_id", j.ID, "region", j.Region, "status", to, "reason", reason)
	if to.Terminal() && j.HasDependents && h.Releaser != nil {
		if _, err := h.Releaser.Release(ctx, j.ID); err != nil {
			h.Log.WarnContext(ctx, "releasing a failed job's dependents; the beat will finish", "job_id", j.ID, "err", err)
		}
	}
	return nil
}

// reject fails claimed job j, whose objects the cluster refused with an answer no retry changes
// (why): what was made of it already is deleted first, so nothing of it runs, and its room in the
// region is free at once. The reason is Tidegate's own for a name collision, else
// rejected_by_cluster with the server's message, without what names the cluster or Tidegate's
// identity in it.
func (h *Handler) reject(ctx context.Context, dc dynamic.Interface, j jobs.Job, token string, why error) error {
	if err := jobobjects.Delete(ctx, dc, j); err != nil {
		return h.retryLater(ctx, dc, j, token, fmt.Errorf("%w; deleting what was made of it: %w", why, err))
	}
	reason := why.Error()
	if !errors.Is(why, jobobjects.ErrNameCollision) {
		reason = jobs.ReasonRejectedByCluster + ": " + jobobjects.Redact(why.Error())
	}
	return h.record(ctx, j, token, jobs.StatusFailed, reason)
}

// retryBackoff is how long a job waits after its first apply that a retry may mend; it doubles
// with each further one (10, 20, 40, 80 s), until jobs.MaxDispatchAttempts fails the job.
const retryBackoff = 10 * time.Second

// retryLater parks claimed job j after an apply the cluster failed in a way a retry may mend
// (why): the attempt is counted on its record and the next drain after the backoff applies it
// again (the beat's sweep rings for it). The last allowed attempt fails the job with
// dispatch_failed, after deleting what was made of it.
func (h *Handler) retryLater(ctx context.Context, dc dynamic.Interface, j jobs.Job, token string, why error) error {
	msg := jobobjects.Redact(why.Error())
	if j.DispatchAttempts+1 >= jobs.MaxDispatchAttempts {
		if err := jobobjects.Delete(ctx, dc, j); err != nil {
			h.Log.ErrorContext(ctx, "deleting a job that failed to dispatch", "job_id", j.ID, "err", err)
		}
		return h.record(ctx, j, token, jobs.StatusFailed, jobs.ReasonDispatchFailed+": "+msg)
	}
	now := h.now()
	_, c, err := jobs.Park(j, msg, now.Add(retryBackoff<<j.DispatchAttempts), now)
	if err != nil {
		return err
	}
	if err := h.Store.Apply(ctx, j, c); err != nil && !errors.Is(err, records.ErrStale) {
		return err
	}
	h.counted(ctx, j, jobs.StatusDispatching, msg)
	h.Log.WarnContext(ctx, "dispatch failed; trying again later", "job_id", j.ID, "attempt", c.DispatchAttempts,
		"until", c.NewClaim.Until, "err", why)
	return nil
}

// requeue gives claimed job j back to the queue, to wait for why (reason): a name held by a job
// whose end is not recorded (the beat that records that end finds j queued and rings dispatch
// again), or its region out of reach (the beat rings it while it has queued jobs).
func (h *Handler) requeue(ctx context.Context, j jobs.Job, token string, why error, reason admission.Reason) error {
	_, c, err := jobs.Move(j, jobs.StatusQueued, jobobjects.Redact(why.Error()), h.now())
	if err != nil {
		return err
	}
	c.Claim, c.PendingReason = token, string(reason)
	if err := h.Store.Apply(ctx, j, c); err != nil && !errors.Is(err, records.ErrStale) {
		return err
	}
	h.counted(ctx, j, jobs.StatusQueued, why.Error())
	h.Log.InfoContext(ctx, "back in the queue", "job_id", j.ID, "why", why.Error())
	return nil
}

// ended is dispatch's answer to whether job id's end is recorded: a job without a record has
// nothing to lose.
func (h *Handler) ended(ctx context.Context, id string) (bool, error) {
	j, err := h.Store.Job(ctx, id)
	if errors.Is(err, records.ErrNotFound) {
		return true, nil
	}
	return err == nil && j.Status.Terminal(), err
}

// claimAll claims ids, dispatchers at a time, starting them in the order given, hands each
// claimed job to a to apply, and answers each claim's error in that order. A panic in one claim
// (a fault hook's crash, say) stops the rest from starting and is raised again here once those
// under way, and the applies a holds, have finished, so it ends the drain on the drain's own
// goroutine, as it did when jobs were dispatched one at a time.
func (h *Handler) claimAll(ctx context.Context, region string, ids []admission.Placed, onDemand map[string]bool, choices map[string]jobs.RegionChoice, a *applying, noted func(jobs.Job, admission.Placed, *jobs.RegionChoice)) []error {
	errs := make([]error, len(ids))
	next, stop := make(chan int), make(chan struct{})
	var (
		wg    sync.WaitGroup
		once  sync.Once
		crash any
	)
	for range min(dispatchers, len(ids)) {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					once.Do(func() { crash = p; close(stop) })
				}
			}()
			for i := range next {
				select {
				case <-stop:
					continue // a crash: start nothing more
				default:
				}
				var choice *jobs.RegionChoice
				if c, ok := choices[ids[i].ID]; ok {
					choice = &c
				}
				j, token, err := h.claim(ctx, region, ids[i], choice)
				if errs[i] = err; token != "" {
					a.start(j, token, onDemand[ids[i].ID])
					noted(j, ids[i], choice)
				}
			}
		})
	}
feed:
	for i := range ids {
		select {
		case next <- i:
		case <-stop:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if crash != nil {
		a.halt()
		panic(crash)
	}
	return errs
}

// applying is a drain's applies of the jobs its rounds claimed, appliers at once, which go on
// beside the rounds after the one that claimed them: a claimed job counts as active, so the next
// round's room is right without waiting for the cluster. The drain waits for them before it
// returns. Once they are all done, it rings the webhook queue for their job.dispatched events.
type applying struct {
	h      *Handler
	ctx    context.Context
	region string
	slots  chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	errs     []error
	crash    any
	halted   bool
	inFlight int
	unrung   bool // an apply done since the webhook queue was last rung
}

// busy says whether an apply is in flight.
func (a *applying) busy() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inFlight > 0
}

func (h *Handler) newApplying(ctx context.Context, region string) *applying {
	return &applying{h: h, ctx: ctx, region: region, slots: make(chan struct{}, appliers)}
}

// start applies claimed job j, with token, once one of the slots is free. A panic in it (a fault
// hook's crash) halts the applies not yet started, and raise raises it again.
func (a *applying) start(j jobs.Job, token string, onDemand bool) {
	a.slots <- struct{}{}
	a.mu.Lock()
	if a.halted {
		a.mu.Unlock()
		<-a.slots
		return
	}
	a.inFlight++
	a.mu.Unlock()
	a.wg.Go(func() {
		defer func() { <-a.slots }()
		defer func() {
			p := recover()
			a.mu.Lock()
			defer a.mu.Unlock()
			a.inFlight--
			if p != nil {
				a.crash, a.halted = p, true
			}
		}()
		err := a.h.apply(a.ctx, a.region, j, token, onDemand)
		a.mu.Lock()
		a.errs = append(a.errs, err)
		a.unrung = true
		ring := a.inFlight == 1 && !a.halted
		if ring {
			a.unrung = false
		}
		a.mu.Unlock()
		if ring {
			a.ringWebhooks()
		}
	})
}

// ringWebhooks rings the webhook queue for the job.dispatched events of the applies done.
func (a *applying) ringWebhooks() {
	if a.h.Webhooks == nil {
		return
	}
	// A lost ring costs a beat: the sweep rings for any event left undelivered.
	if err := a.h.Webhooks.RingDrain(a.ctx); err != nil {
		a.h.Log.WarnContext(a.ctx, "ringing the webhook queue", "region", a.region, "error", err)
	}
}

// halt starts no more applies and waits for those under way.
func (a *applying) halt() {
	a.mu.Lock()
	a.halted = true
	a.mu.Unlock()
	a.wg.Wait()
}

// raise raises again, once every apply under way is done, the panic one of them ended in.
func (a *applying) raise() {
	a.mu.Lock()
	crash := a.crash
	a.mu.Unlock()
	if crash != nil {
		a.halt()
		panic(crash)
	}
}

// wait waits for every apply, raises a panic one ended in, and answers their errors.
func (a *applying) wait() error {
	a.wg.Wait()
	a.raise()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.unrung {
		a.unrung = false
		a.ringWebhooks()
	}
	return errors.Join(a.errs...)
}

// recordWaits writes each waiting job's reason where it changed, and a capped job's spot
// observation at most every gateRefresh. A job's place in the queue is not written: it moves for
// every waiting job at every dispatch, so it is counted when asked (JobStore.QueuePosition).
func (h *Handler) recordWaits(ctx context.Context, queued []jobs.Job, waits []admission.FlavorWait, observed map[string]spotgate.Observation, tr *trail) error {
	queuedByID := byID(queued)
	now := h.now()
	var errs []error
	for _, w := range waits {
		j := queuedByID[w.ID]
		var reason string
		if j.PendingReason != string(w.Reason) || j.PendingResource != w.Resource {
			reason = string(w.Reason)
		}
		var gate *jobs.SpotGate
		if j.Spot != nil && (j.SpotGate == nil || now.Sub(j.SpotGate.CheckedAt) >= gateRefresh) {
			g := gateOf(j.Spot, observed[j.Spot.InstanceType], now)
			gate = &g
		}
		if reason == "" && gate == nil {
			continue
		}
		c := jobs.Wait(reason, 0, gate, now)
		c.PendingResource = w.Resource
		err := h.Store.Apply(ctx, j, c)
		if err != nil && !errors.Is(err, records.ErrStale) {
			errs = append(errs, err)
		}
		if err == nil && reason != "" {
			tr.add(j.ID, jobs.Decision{At: now, Kind: jobs.DecisionWaiting, Reason: reason, Attempt: j.AttemptOf(), Region: j.Region,
				Resource: w.Resource, Price: gate})
		}
	}
	return errors.Join(errs...)
}

func gateOf(s *jobs.Spot, o spotgate.Observation, now time.Time) jobs.SpotGate {
	g := jobs.SpotGate{InstanceType: s.InstanceType, MaxPrice: s.MaxPrice, CheckedAt: now.UTC()}
	if o.Known {
		p := o.Price
		g.ObservedPrice = &p
		g.CheckedAt = o.CheckedAt.UTC()
	}
	return g
}
