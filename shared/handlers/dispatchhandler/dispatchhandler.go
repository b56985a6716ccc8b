// Package dispatchhandler wires the dispatch function: shared/dispatch's handler of the dispatch
// queue over the job store, the leases, the regions' clusters and their spot prices.
package dispatchhandler

import (
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/dispatch"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ec2spot"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/podspec"
	"github.com/tidegate/tidegate/shared/unblock"
	"github.com/tidegate/tidegate/shared/wake"
)

// New is the dispatch queue's handler. It refuses flavors it cannot read.
func New(cfg config.Config, c handlers.Clients, clusters *kube.Clusters, prices *ec2spot.Reader, log *slog.Logger) (*dispatch.Handler, error) {
	set, err := flavors.Parse(cfg.Flavors)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvFlavors, err)
	}
	return &dispatch.Handler{
		Regions:  cfg.Regions,
		Flavors:  set,
		Capacity: cfg.Capacity,
		GPUs:     cfg.GPUCapacity,
		Store:    dynamo.NewJobStore(c.DynamoDB, handlers.Tables(cfg)).Retain(cfg.JobRetention),
		Leases:   dynamo.NewLeaseStore(c.DynamoDB, cfg.ControlTable),
		// Each tenant's share of a region: its record's quota, else the default.
		Tenants:      dynamo.NewTenantStore(c.DynamoDB, cfg.ControlTable),
		DefaultQuota: cfg.DefaultQuota,
		Prices:       prices,
		Clusters:     clusters,
		Log:          log,
		Metrics:      c.Metrics,
		Webhooks:     delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),
		Ringer:       wake.New(c.SQS, cfg.DispatchQueueURL),
		// A job that fails at dispatch releases its dependents (an array's next child among them).
		Releaser: &unblock.Releaser{
			Jobs: dynamo.NewJobStore(c.DynamoDB, handlers.Tables(cfg)).Retain(cfg.JobRetention), Ringer: wake.New(c.SQS, cfg.DispatchQueueURL), Log: log,
		},
		CapacityLabel: cfg.CapacityTypeLabel,
		// The objects it applies are labelled with the deployment, whose sweep takes only its own.
		Stack:  podspec.StackValue(cfg.Stack),
		JobTTL: cfg.JobTTL,
		// A long-running job's slot, and how many slot-free ones a tenant may run in a region.
		LongRunningHoldsSlot: cfg.LongRunning.HoldsSlot,
		LongRunningPerTenant: cfg.LongRunning.PerTenant,
		// How far past its room a drain reads its queue; the next goes on from there.
		ReadBudget: cfg.DrainReadBudget,
		// Taking borrowed room back: evictions a minute, a preemptor's cool-down, the pods' grace.
		PreemptionsPerMinute: cfg.Preemption.PerMinute,
		PreemptionCooldown:   cfg.Preemption.Cooldown,
		PreemptionGraceMax:   cfg.Preemption.GraceMax,
		// A cordoned, drained, unreached or clearing region admits nothing.
		Health: dynamo.NewJobStore(c.DynamoDB, handlers.Tables(cfg)),
	}, nil
}

// Prices reads spot prices through EC2 in each region (at cfg's EC2 endpoint when one is set),
// keeping each answer for its TTL.
func Prices(cfg config.Config, c handlers.Clients) *ec2spot.Reader {
	return ec2spot.NewReader(func(region string) ec2spot.Describer {
		return ec2.NewFromConfig(c.AWS, func(o *ec2.Options) {
			o.Region = region
			o.BaseEndpoint = handlers.Endpoint(cfg.Endpoints.EC2)
		})
	})
}
