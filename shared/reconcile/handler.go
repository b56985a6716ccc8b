// Package reconcile is the beat: it follows dispatched jobs, runs the host plan and sweeps for
// anything a lost message or a crashed worker left behind.
package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ids"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/unblock"
)

// Queues tells which regions have queued jobs; dynamo.JobStore is the real one.
type Queues interface {
	HasQueued(ctx context.Context, region string) (bool, error)
}

// Ringer wakes dispatch for a region; wake.Ringer is the real one.
type Ringer interface {
	Ring(ctx context.Context, region string) error
}

// Leases keeps one beat at a time; dynamo.LeaseStore is the real one.
type Leases interface {
	Acquire(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	Release(ctx context.Context, name, owner string) error
	// Idle says whether a lease was last released idle: a region's drain lease so released
	// (dynamo.DrainLease) means its last drain found nothing waiting, and an end need not ring.
	Idle(ctx context.Context, name string) (bool, error)
}

// WebhookSweeper re-rings webhook work a lost message or a dead worker left; delivery.Sweeper is
// the real one.
type WebhookSweeper interface {
	Sweep(ctx context.Context) error
}

// Health records whether each beat reached each region's cluster; dynamo.JobStore is the real
// one.
type Health interface {
	Reached(ctx context.Context, region string, at time.Time) error
	Missed(ctx context.Context, region string, at time.Time, why error) error
	Health(ctx context.Context, regions []string) (map[string]dynamo.RegionHealth, error)
}

// Releaser releases the dependents of ended jobs; unblock.Releaser is the real one.
type Releaser interface {
	Release(ctx context.Context, id string) (unblock.Result, error)
	Sweep(ctx context.Context) error
}

// WebhookBell wakes the webhook function to fan the outbox out; delivery.Queue is the real one.
type WebhookBell interface {
	RingDrain(ctx context.Context) error
}

// Hosting runs hosted apps' plan, one beat at a time; hosting.Hoster is the real one.
type Hosting interface {
	Beat(ctx context.Context) error
}

// Isolation keeps the clusters' NetworkPolicies, ResourceQuotas and LimitRanges in place;
// isolating.Keeper is the real one.
type Isolation interface {
	Keep(ctx context.Context) error
}

// SpotPrices reads each instance type's current spot price in each zone of a region that has
// one; ec2spot.Reader is the real one.
type SpotPrices interface {
	ZonePrices(ctx context.Context, region string, instanceTypes []string, now time.Time) map[string]map[string]float64
}

// Handler is the reconcile function's schedule handler.
type Handler struct {
	Regions  []string
	Queues   Queues
	Ringer   Ringer
	Jobs     Jobs
	Clusters Clusters
	Leases   Leases
	Log      *slog.Logger
	Now      func() time.Time
	// Hosting, when set, runs the host plan each beat, beside following the regions' jobs.
	Hosting Hosting
	// Webhooks, when set, is swept after the regions, so this beat's own events are rung for too.
	Webhooks WebhookSweeper
	// Releaser, when set, releases the dependents of each job whose end is recorded, as it is,
	// and each beat sweeps the ended jobs whose dependents are still to be released (unblock).
	Releaser Releaser
	// Health, when set, records each region's reachability as each beat found it (its LISTs of
	// the region's cluster), and each beat publishes how long each region has gone unreached
	// (metrics.RegionUnreachable).
	Health Health
	// LostAfter is how long a region goes unreached before it is lost (TIDEGATE_REGION_LOST_AFTER):
	// its running jobs that ask for it are queued for another region, their attempts fenced
	// (lost.go), whose objects are deleted from Fences once it is reached again. 0 loses none.
	LostAfter time.Duration
	Fences    Fences
	// Isolation, when set, is kept each beat beside the jobs and hosts. What it fails at is
	// logged, not returned: a failed beat is delivered again by EventBridge and would follow
	// every job again, and a cluster that refuses one object (say, an RBAC gap) would fail them all.
	Isolation Isolation
	// Prices are the spot prices a finished job's cost is estimated at, read when it ends;
	// ec2spot.Reader is the real one. Without them a spot node's cost is not known.
	Prices SpotPrices
	// OnDemand is each instance type's on-demand price per hour (TIDEGATE_ON_DEMAND_PRICES).
	OnDemand map[string]float64
	// Metrics takes each beat's duration and lateness; nil records none.
	Metrics *metrics.Recorder
	// CapacityLabel is the node label telling spot nodes from on-demand ones
	// (TIDEGATE_CAPACITY_TYPE_LABEL): a pod lost with its spot node is a spot interruption.
	CapacityLabel string
	// Watch is how long after its start a beat goes on watching its regions' Jobs and bare pods,
	// recording starts and ends as they happen and ringing dispatch at each end (watch.go); 0
	// watches not, and a job's end waits for the next beat (TIDEGATE_WATCH_SECONDS).
	Watch time.Duration
	// Bell, when set, wakes the webhook function after the watch records a job's start or end, so
	// its event goes out now rather than at the next beat's sweep; delivery.Queue is the real one.
	Bell WebhookBell
	// FollowDepth is how many watched jobs of a region are followed at once (watchfollow.go);
	// 0 is DefaultFollowDepth.
	FollowDepth int
	// Tenants and SweptKinds, both set, sweep each region's cluster once a sweepEvery for objects
	// left behind (leftovers.go): of SweptKinds (jobobjects.Kinds: every kind Tidegate can
	// apply, whatever the policy allows), in the Tenants' namespaces.
	Tenants    Tenants
	SweptKinds []schema.GroupVersionKind
	// Stack is the deployment's label value (podspec.StackValue): the sweep takes only the objects
	// it applied (jobobjects.Owned), so deployments sharing a cluster leave each other's alone.
	Stack string

	mu     sync.Mutex
	memory map[string]memory    // by region: what the last beat saw
	kept   map[string]kept      // by region: where the last beat's watch left off (watch.go)
	swept  map[string]time.Time // by region: when its last sweep started
	// reached is, by region, when this process last recorded it reached (health.go).
	reached map[string]time.Time
	// lastReach is, by region, whether this process's last call to it reached it.
	lastReach map[string]bool

	// nodes are the nodes ended jobs' pods ran on, as read lately (nodes.go).
	nodes nodeCache

	// clearing are the deletes of what ended jobs left, which HandleBeat waits for (leftovers.go);
	// clearSlots bounds how many run at once.
	clearing   sync.WaitGroup
	clearOnce  sync.Once
	clearSlots chan struct{}
}

// beatLease is how long a beat's lease runs from its last renewal (lease.go): a beat that dies
// holds up the next for at most this long.
const beatLease = time.Minute

// HandleBeat runs one beat, if no other beat is running: EventBridge may deliver a beat twice,
// and a slow beat may overlap the next; the lease makes the second a no-op. With Watch set, the
// beat then watches its regions until Watch after it started (watch.go), and a beat that finds
// the lease held waits a little for the watching beat before it to let go.
func (h *Handler) HandleBeat(ctx context.Context, ev events.EventBridgeEvent) error {
	start := time.Now()
	owner := ids.New("beat-", h.now())
	ok, err := h.acquire(ctx, owner)
	if err != nil {
		return err
	}
	if !ok {
		h.Log.InfoContext(ctx, "another beat is running; this one does nothing", "event_id", ev.ID)
		return nil
	}
	ctx, lost := context.WithCancel(ctx)
	kept := h.keepLease(ctx, owner, lost)
	defer func() {
		lost()
		kept()
		_ = h.Leases.Release(context.WithoutCancel(ctx), "reconcile", owner)
	}()
	w := h.openWindow(ctx, start)
	err = h.pass(ctx, ev, w.watch)
	w.wait()
	h.clearing.Wait() // what the ended jobs left, deleted while the beat went on
	return err
}

// pass is the beat's work proper: it follows the regions' jobs, runs the host plan, keeps the
// isolation objects and sweeps. As soon as it has followed a region, it hands what it LISTed
// there to followed, which watches the region from it while the rest of the pass goes on.
func (h *Handler) pass(ctx context.Context, ev events.EventBridgeEvent, followed func(region string, l owned)) error {
	defer h.timed(ctx, h.now(), ev.Time)
	// Hosting runs beside the jobs: the two touch different pods and records.
	hosted := make(chan error, 1)
	go func() {
		if h.Hosting == nil {
			hosted <- nil
			return
		}
		hosted <- h.Hosting.Beat(ctx)
	}()
	isolated := make(chan struct{})
	go func() {
		defer close(isolated)
		if h.Isolation == nil {
			return
		}
		if err := h.Isolation.Keep(ctx); err != nil {
			h.Log.ErrorContext(ctx, "isolation not kept everywhere this beat", "error", err)
		}
	}()
	// The regions are followed at once: each has its own cluster and its own records.
	errs := make([]error, len(h.Regions), len(h.Regions)+2)
	var wg sync.WaitGroup
	for i, r := range h.Regions {
		wg.Go(func() {
			var l owned
			l, errs[i] = h.region(ctx, r)
			followed(r, l)
		})
	}
	wg.Wait()
	errs = append(errs, <-hosted)
	<-isolated
	errs = append(errs, h.publishReach(ctx))
	if h.Releaser != nil {
		errs = append(errs, h.Releaser.Sweep(ctx))
	}
	if h.Webhooks != nil {
		errs = append(errs, h.Webhooks.Sweep(ctx))
	}
	return errors.Join(errs...)
}

// started records job j's time from submission to the beat seeing it run.
func (h *Handler) started(ctx context.Context, j jobs.Job) {
	ms := float64(h.now().Sub(j.CreatedAt) / time.Millisecond)
	if err := h.Metrics.Put(metrics.SubmitToRunning, []string{j.Region}, ms); err != nil {
		h.Log.WarnContext(ctx, "recording a job's start", "error", err)
	}
}

// timed records a beat that started at start for the schedule's time scheduled (zero when the
// event gives none): how long it took, and how late it started.
func (h *Handler) timed(ctx context.Context, start, scheduled time.Time) {
	err := h.Metrics.Put(metrics.BeatDuration, nil, float64(h.now().Sub(start).Milliseconds()))
	if !scheduled.IsZero() {
		err = errors.Join(err, h.Metrics.Put(metrics.BeatLateness, nil, float64(max(0, start.Sub(scheduled).Milliseconds()))))
	}
	if err != nil {
		h.Log.WarnContext(ctx, "recording the beat's metrics", "error", err)
	}
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// region follows region's jobs and sweeps it, asking whether it has queued jobs and sweeping its
// cluster for objects left behind while the jobs are followed rather than after. It answers what
// it LISTed.
func (h *Handler) region(ctx context.Context, region string) (owned, error) {
	type answer struct {
		queued bool
		err    error
	}
	asked := make(chan answer, 1)
	go func() {
		q, err := h.Queues.HasQueued(ctx, region)
		asked <- answer{q, err}
	}()
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		h.sweepLeft(ctx, region)
	}()
	began := time.Now()
	read, l, rang, err := h.follow(ctx, region)
	h.Log.InfoContext(ctx, "followed", "region", region, "took", time.Since(began), "listed", len(l.jobs)+len(l.pods)+len(l.serving), "rang", rang)
	a := <-asked
	<-swept
	if a.err != nil || rang {
		return l, errors.Join(err, a.err) // rung for the ends already, if it has queued jobs or not
	}
	return l, errors.Join(err, h.sweep(ctx, region, read, a.queued))
}

// sweep rings dispatch for region if it has queued jobs or a claim whose dispatcher died (read
// holds the region's claims, as the beat read them), so a job whose submission's ring was lost
// waits one beat at most. Ringing a region with nothing to admit costs one empty drain.
func (h *Handler) sweep(ctx context.Context, region string, read []jobs.Job, queued bool) error {
	deadClaim := slices.ContainsFunc(read, func(j jobs.Job) bool {
		return j.Status == jobs.StatusDispatching && j.Claim != nil && j.Claim.Until.Before(h.now())
	})
	if !deadClaim && !queued {
		return nil
	}
	return h.Ringer.Ring(ctx, region)
}
