// Package dispatch drains each region's spot-gated job queue onto that region's cluster. SQS
// messages only wake it for a region; DynamoDB holds the queue itself.
package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"k8s.io/client-go/dynamic"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/spotgate"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/unblock"
)

// Wake is the body of a dispatch queue message: "look at this region's queued jobs".
type Wake struct {
	Region string `json:"region"`
}

// Store is what dispatch reads and writes of jobs; dynamo.JobStore is the real one.
type Store interface {
	// QueuePage reads a queue a page at a time (queue.go); Census counts one whole.
	QueuePage(ctx context.Context, q dynamo.Queue, after string, limit int) (dynamo.QueuePage, error)
	// HeldPage reads the jobs held by their cap on an instance type that a price now allows.
	HeldPage(ctx context.Context, region, instanceType string, price float64, after string, limit int) (dynamo.QueuePage, error)
	// LongHeldPage reads a tenant's long-running jobs held at its limit.
	LongHeldPage(ctx context.Context, region, tenant, after string, limit int) (dynamo.QueuePage, error)
	// BackoffPage reads the jobs whose retry's backoff is over.
	BackoffPage(ctx context.Context, region string, now time.Time, after string, limit int) (dynamo.QueuePage, error)
	Census(ctx context.Context, q dynamo.Queue) (dynamo.Census, error)
	// Roaming reads the roaming queue whole, for the census; PutCensus keeps what it counted.
	Roaming(ctx context.Context) ([]jobs.Job, error)
	PutCensus(ctx context.Context, c dynamo.RegionCensus) error
	Active(ctx context.Context, region string) ([]jobs.Job, error)
	// ClaimOn claims a job for dispatch on a flavor of its region; ClaimIn and the region
	// summaries serve jobs that may run in several regions.
	ClaimOn(ctx context.Context, id, region, flavor, token string, now, until time.Time) (jobs.Job, error)
	ClaimIn(ctx context.Context, id, region, flavor string, why jobs.RegionChoice, token string, now, until time.Time) (jobs.Job, error)
	PutRegionSummary(ctx context.Context, s jobs.RegionSummary) error
	RegionSummaries(ctx context.Context, regions []string) (map[string]jobs.RegionSummary, error)
	// KeepSpotPrice writes a point of a region's spot price history (the console's chart).
	KeepSpotPrice(ctx context.Context, region, instanceType string, step time.Duration, p jobs.PricePoint) error
	Apply(ctx context.Context, j jobs.Job, c jobs.Change) error
	Job(ctx context.Context, id string) (jobs.Job, error)
	// Evictions counts a region's evictions in a minute; CountEvictions adds to them.
	Evictions(ctx context.Context, region string, at time.Time) (int, error)
	CountEvictions(ctx context.Context, region string, at time.Time, n int) error
	// KeepDecisions writes the trail of what drains decided about jobs (decisions.go).
	KeepDecisions(ctx context.Context, ds []jobs.JobDecision) error
}

// Tenants reads a tenant's record, for its shares of the regions; dynamo.TenantStore is the real
// one. records.ErrNotFound for a tenant that is gone.
type Tenants interface {
	Tenant(ctx context.Context, name string) (tenancy.Tenant, error)
}

// Leases keeps one drain of a region at a time, and lets a drain that finds its region draining
// ask the one that is to drain once more; dynamo.LeaseStore is the real one.
type Leases interface {
	Acquire(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	Release(ctx context.Context, name, owner string) error
	Knock(ctx context.Context, name string, now time.Time) (bool, error)
	// ReleaseUnlessKnocked, idle, leaves the lease marked idle: the drain found nothing waiting.
	ReleaseUnlessKnocked(ctx context.Context, name, owner string, idle bool) (bool, error)
}

// Prices observes spot prices; spotgate.Reader is the real one.
type Prices interface {
	Observe(ctx context.Context, region, instanceType string, now time.Time) spotgate.Observation
}

// Clusters reaches each region's cluster.
type Clusters interface {
	Dynamic(ctx context.Context, region string) (dynamic.Interface, error)
}

var (
	_ Store   = (*dynamo.JobStore)(nil)
	_ Leases  = (*dynamo.LeaseStore)(nil)
	_ Tenants = (*dynamo.TenantStore)(nil)
)

// Releaser releases the dependents of an ended job; unblock.Releaser is the real one.
type Releaser interface {
	Release(ctx context.Context, id string) (unblock.Result, error)
}

// Handler is the dispatch function's SQS handler.
type Handler struct {
	Regions map[string]string // region → cluster, from config
	// Flavors are the regions' flavors (admission counts resources per flavor); a region it gives
	// none has one of Capacity's jobs as pods and, when GPUs gives some, that many GPUs.
	Flavors  flavors.Set
	Capacity func(region string) int
	// GPUs is each region's GPU budget; nil or 0 is no GPU cap.
	GPUs     func(region string) int64
	Store    Store
	Leases   Leases
	Prices   Prices
	Clusters Clusters
	Log      *slog.Logger
	Now      func() time.Time
	// Metrics takes each drain's view of its region and each dispatch's outcome; nil records none.
	Metrics *metrics.Recorder
	// Tenants, when set, gives each tenant's share of a region (its record's quota, else
	// DefaultQuota): a drain then shares each region among its tenants (admission's quotas).
	Tenants      Tenants
	DefaultQuota tenancy.Quota
	// Webhooks, when set, is rung after a drain that dispatched jobs, so their job.dispatched
	// events go out now rather than at the next beat's sweep.
	Webhooks Bell
	// JobTTL is the ttlSecondsAfterFinished given to the batch/v1 Jobs (and CronJobs' job
	// templates) a job applies when their manifests set none; 0 sets none. A tenant's own below
	// jobobjects.MinJobTTL is raised to it either way (see jobobjects.WithJobTTL).
	JobTTL time.Duration
	// CapacityLabel is the node label that tells on-demand nodes from spot ones
	// (capacitytype.Labels); "" is capacitytype.Default. A job whose spot deadline sends it to
	// on-demand capacity has its pods select it.
	CapacityLabel string
	// Stack is the deployment's label value (podspec.StackValue), set on every object applied
	// (jobobjects.Owned) so that this deployment's sweep, and no other's, takes it once it is left
	// behind.
	Stack string
	// LongRunningHoldsSlot makes long-running jobs (Deployments', StatefulSets') hold a job slot
	// like batch ones; otherwise they hold none, and each tenant may have LongRunningPerTenant of
	// them active in a region (0: none). Their GPUs count either way.
	LongRunningHoldsSlot bool
	LongRunningPerTenant int

	// Ringer, when set, wakes the drains of other regions: those this drain chose for roaming
	// jobs, and the other regions of a roaming job that waits here for room.
	Ringer Ringer

	// Releaser, when set, releases the dependents of a claimed job the cluster refused (or that
	// kept failing to apply) as its failure is recorded; the reconcile beat's sweep releases
	// what it does not (unblock).
	Releaser Releaser

	// PriceStep is how far apart the points of each region's spot price history are
	// (jobs.PriceSlots of them are kept); 0 is jobs.DefaultPriceStep.
	PriceStep time.Duration

	// PreemptionsPerMinute bounds the jobs a region's drains evict a minute to give tenants
	// within their nominal quotas the room others borrowed (reclaim.go); 0 evicts none.
	// PreemptionCooldown is how long a job admitted by evicting a tenant's jobs is safe from that
	// tenant's; PreemptionGraceMax bounds an evicted pod's grace period.
	PreemptionsPerMinute int
	PreemptionCooldown   time.Duration
	PreemptionGraceMax   time.Duration

	// Health, when set, says which regions admit nothing now (gates.go): cordoned or drained by
	// the operator, unreached by the beat, or clearing what attempts fenced there left. A drain
	// of such a region admits nothing (a drained one stops its running jobs), and no roaming job
	// is sent there; a drain that fails to reach its cluster records it.
	Health Health

	// ReadBudget is how many queued jobs a drain may read past its region's room (0 is
	// DefaultReadBudget): the jobs further back wait for the next drain, which goes on from where
	// this one stopped.
	ReadBudget int

	// kept is the last spot price point each region's history was given by this process.
	kept keptPrices
	// resume is where each region's last drain stopped reading its queue, its budget spent.
	resume resumeCache

	// quotas keeps tenants' quotas for quotaTTL.
	quotas quotaCache
	// censuses keeps each region's last census for censusEvery.
	censuses censusCache
	// gateCache keeps the regions' gates for gateTTL.
	gateCache gateCache

	// hooks let the fault tests stop a drain at the moments a crash would: after a claim, after
	// the apply, before the record. nil in production.
	afterClaim, afterApply func(jobs.Job)
	// afterEvict, the moment after an eviction is recorded and before its pods are stopped.
	afterEvict func(jobs.Job)
}

// Ringer wakes the dispatch function for a region; wake.Ringer is the real one.
type Ringer interface {
	Ring(ctx context.Context, region string) error
}

// Bell wakes the webhook function to deliver what the outbox holds; delivery.Queue is the real one.
type Bell interface {
	RingDrain(ctx context.Context) error
}

// HandleSQS drains the regions named by the batch, each once however many messages name it. A
// record it cannot act on is reported as a batch item failure so SQS retries it and, past
// maxReceiveCount, dead-letters it. Jobs held by their price cap are not failures: they stay
// queued in DynamoDB, and the sweep wakes the region again.
func (h *Handler) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	byRegion := map[string][]string{}
	var order []string
	for _, rec := range ev.Records {
		region, err := h.wakeOf(rec)
		if err != nil {
			h.Log.ErrorContext(ctx, "dispatch message refused", "message_id", rec.MessageId, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			continue
		}
		if _, seen := byRegion[region]; !seen {
			order = append(order, region)
		}
		byRegion[region] = append(byRegion[region], rec.MessageId)
	}
	for _, region := range order {
		if err := h.Drain(ctx, region); err != nil {
			h.Log.ErrorContext(ctx, "drain failed", "region", region, "err", err)
			for _, id := range byRegion[region] {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
			}
		}
	}
	return resp, nil
}

func (h *Handler) wakeOf(rec events.SQSMessage) (string, error) {
	var w Wake
	if err := json.Unmarshal([]byte(rec.Body), &w); err != nil {
		return "", fmt.Errorf("reading wake message: %w", err)
	}
	if _, ok := h.Regions[w.Region]; !ok {
		return "", fmt.Errorf("wake names region %q, which is not configured", w.Region)
	}
	return w.Region, nil
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}
