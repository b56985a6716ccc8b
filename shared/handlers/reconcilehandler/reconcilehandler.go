// Package reconcilehandler wires the reconcile function: shared/reconcile's beat, which follows
// dispatched jobs, runs the hosted apps' plan, keeps the namespaces' isolation objects in place
// and sweeps up what lost messages left behind.
package reconcilehandler

import (
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/ec2spot"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/hostinghandler"
	"github.com/tidegate/tidegate/shared/jobobjects"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/podspec"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/unblock"
	"github.com/tidegate/tidegate/shared/wake"
)

// New is the schedule's handler, or why cfg's isolation settings cannot be used.
func New(cfg config.Config, c handlers.Clients, clusters *typed.Clusters, log *slog.Logger) (*reconcile.Handler, error) {
	k, err := keeper(cfg, c, clusters, log)
	if err != nil {
		return nil, err
	}
	t := handlers.Tables(cfg)
	return &reconcile.Handler{
		Regions:  cfg.RegionNames(),
		Queues:   dynamo.NewJobStore(c.DynamoDB, t).Retain(cfg.JobRetention),
		Ringer:   wake.New(c.SQS, cfg.DispatchQueueURL),
		Jobs:     dynamo.NewJobStore(c.DynamoDB, t).Retain(cfg.JobRetention),
		Clusters: clusters,
		Leases:   dynamo.NewLeaseStore(c.DynamoDB, cfg.ControlTable),
		Log:      log,
		Webhooks: webhookSweeper(cfg, c),
		// An ended job's dependents are released as its end is recorded, and by each beat's sweep.
		Releaser: &unblock.Releaser{
			Jobs: dynamo.NewJobStore(c.DynamoDB, t).Retain(cfg.JobRetention), Ringer: wake.New(c.SQS, cfg.DispatchQueueURL), Log: log,
		},
		// Each region's reach is recorded; one lost has its jobs that ask queued elsewhere, their
		// attempts fenced until it is reached again.
		Health:    dynamo.NewJobStore(c.DynamoDB, t).Retain(cfg.JobRetention),
		LostAfter: cfg.RegionLostAfter,
		Fences:    dynamo.NewJobStore(c.DynamoDB, t).Retain(cfg.JobRetention),
		Hosting:   hostinghandler.New(cfg, c, clusters, log),
		Isolation: k,
		Prices:    prices(cfg, c),
		OnDemand:  cfg.OnDemandPrices,
		Metrics:   c.Metrics,
		// A pod lost with its spot node is a spot interruption, told by this label.
		CapacityLabel: cfg.CapacityTypeLabel,
		// Between beats, ends are recorded as they happen; their events go out at once.
		Watch: cfg.Watch,
		Bell:  delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),
		// What ended jobs left behind is swept from the tenants' namespaces, of every kind they
		// may submit.
		Tenants:    dynamo.NewTenantStore(c.DynamoDB, cfg.ControlTable),
		SweptKinds: jobobjects.Kinds(),
		Stack:      podspec.StackValue(cfg.Stack),
	}, nil
}

// prices reads the spot prices finished jobs are costed at, through EC2 in each region (at cfg's
// EC2 endpoint when one is set), as dispatch's gate reads them.
func prices(cfg config.Config, c handlers.Clients) *ec2spot.Reader {
	return ec2spot.NewReader(func(region string) ec2spot.Describer {
		return ec2.NewFromConfig(c.AWS, func(o *ec2.Options) {
			o.Region = region
			o.BaseEndpoint = handlers.Endpoint(cfg.Endpoints.EC2)
		})
	})
}

// webhookSweeper is the beat's webhook sweep; it reads no secrets.
func webhookSweeper(cfg config.Config, c handlers.Clients) *delivery.Sweeper {
	t := handlers.Tables(cfg)
	return &delivery.Sweeper{
		Outbox: dynamo.NewOutboxStore(c.DynamoDB, t),
		Due:    dynamo.NewWebhookStore(c.DynamoDB, t, nil),
		Queue:  delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),

		Metrics: c.Metrics,
	}
}
