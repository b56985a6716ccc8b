// Package handlers builds the four functions' handlers from a Config, so the Lambdas and
// `tidegate dev` run exactly the same code.
package handlers

import (
	"log/slog"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/dispatch"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/spotgate"
	"github.com/tidegate/tidegate/shared/wake"
)

// Clients are the AWS SDK clients the handlers use, each pointed at its configured endpoint, and
// the regions' clusters.
type Clients struct {
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	S3       *s3.Client
	Clusters *kube.Clusters
	Prices   *spotgate.Reader
}

// NewClients makes the clients from an SDK config, replacing each service's endpoint where cfg
// says, and reaching clusters as cfg says (a kubeconfig, or EKS).
func NewClients(awsCfg aws.Config, cfg config.Config) (Clients, error) {
	c := sdkClients(awsCfg, cfg.Endpoints)
	var err error
	if c.Clusters, err = kube.New(cfg, awsCfg); err != nil {
		return c, err
	}
	c.Prices = spotgate.NewReader(func(region string) spotgate.Describer {
		return ec2.NewFromConfig(awsCfg, func(o *ec2.Options) {
			o.Region = region
			o.BaseEndpoint = endpoint(cfg.Endpoints.EC2)
		})
	})
	return c, nil
}

func sdkClients(awsCfg aws.Config, ep config.Endpoints) Clients {
	return Clients{
		DynamoDB: dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) { o.BaseEndpoint = endpoint(ep.DynamoDB) }),
		SQS:      sqs.NewFromConfig(awsCfg, func(o *sqs.Options) { o.BaseEndpoint = endpoint(ep.SQS) }),
		S3: s3.NewFromConfig(awsCfg, func(o *s3.Options) {
			o.BaseEndpoint = endpoint(ep.S3)
			// The S3 stand-in serves path-style URLs only; AWS serves both.
			o.UsePathStyle = ep.S3 != ""
		}),
	}
}

func endpoint(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

func tables(cfg config.Config) dynamo.Tables {
	return dynamo.Tables{Jobs: cfg.JobsTable, Events: cfg.EventsTable, Control: cfg.ControlTable}
}

// API is the HTTP API. iam extracts API Gateway's authenticated IAM caller; nil outside Lambda.
func API(cfg config.Config, c Clients, log *slog.Logger, iam httpapi.IAMCaller) (http.Handler, error) {
	t := tables(cfg)
	checker, err := policy.NewChecker(cfg.Policy)
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Deps{
		Log:        log,
		Principals: dynamo.NewTenantStore(c.DynamoDB, t.Control),
		Jobs:       dynamo.NewJobStore(c.DynamoDB, t),
		Templates:  dynamo.NewTemplateStore(c.DynamoDB, t.Control),
		Policy:     checker,
		Ringer:     wake.New(c.SQS, cfg.DispatchQueueURL),
		Regions:    cfg.RegionNames(),
		Clusters:   c.Clusters,
		Capacity:   cfg.Capacity,
		IAMCaller:  iam,
	}), nil
}

// Dispatch is the dispatch queue's handler.
func Dispatch(cfg config.Config, c Clients, log *slog.Logger) *dispatch.Handler {
	return &dispatch.Handler{
		Regions:  cfg.Regions,
		Capacity: cfg.Capacity,
		GPUs:     cfg.GPUCapacity,
		Store:    dynamo.NewJobStore(c.DynamoDB, tables(cfg)),
		Leases:   dynamo.NewLeaseStore(c.DynamoDB, cfg.ControlTable),
		Prices:   c.Prices,
		Clusters: c.Clusters,
		Log:      log,
	}
}

// Reconcile is the schedule's handler.
func Reconcile(cfg config.Config, c Clients, log *slog.Logger) *reconcile.Handler {
	return &reconcile.Handler{
		Regions:  cfg.RegionNames(),
		Queues:   dynamo.NewJobStore(c.DynamoDB, tables(cfg)),
		Ringer:   wake.New(c.SQS, cfg.DispatchQueueURL),
		Jobs:     dynamo.NewJobStore(c.DynamoDB, tables(cfg)),
		Clusters: c.Clusters,
		Leases:   dynamo.NewLeaseStore(c.DynamoDB, cfg.ControlTable),
		Log:      log,
	}
}

// Webhook is the webhook queue's handler.
func Webhook(cfg config.Config, c Clients, log *slog.Logger) *delivery.Handler {
	return &delivery.Handler{Log: log}
}

// Logger is the functions' logger: JSON lines in Lambda (CloudWatch parses them), text in dev.
func Logger(cfg config.Config, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	if cfg.LogJSON {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}
