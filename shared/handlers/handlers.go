// Package handlers builds the four functions' handlers from a Config, so the Lambdas and
// `tidegate dev` run exactly the same code.
package handlers

import (
	"fmt"
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
	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/hosting"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/reconcile"
	"github.com/tidegate/tidegate/shared/secretbox"
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
	box, err := SecretBox(cfg)
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Deps{
		Log:        log,
		Principals: httpapi.NewPrincipalCache(dynamo.NewTenantStore(c.DynamoDB, t.Control), nil),
		Jobs:       dynamo.NewJobStore(c.DynamoDB, t),
		Templates:  dynamo.NewTemplateStore(c.DynamoDB, t.Control),
		Policy:     checker,
		Ringer:     wake.New(c.SQS, cfg.DispatchQueueURL),
		Regions:    cfg.RegionNames(),
		Clusters:   c.Clusters,
		Capacity:   cfg.Capacity,
		IAMCaller:  iam,

		Apps:          dynamo.NewAppStore(c.DynamoDB, t),
		Secrets:       dynamo.NewSecretStore(c.DynamoDB, t.Control),
		Sealer:        box,
		Sources:       c.S3,
		SourcesBucket: cfg.SourcesBucket,
		SourcesPrefix: cfg.SourcesPrefix,
		Hosting:       Hoster(cfg, c, log),

		Webhooks:             dynamo.NewWebhookStore(c.DynamoDB, t, box),
		WebhookQueue:         delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),
		WebhooksAllowPrivate: cfg.WebhooksAllowPrivate,
	}), nil
}

// SecretBox seals and opens what Tidegate keeps secret at rest, under cfg's secrets key. The API
// and the beat need one and refuse to start without it.
func SecretBox(cfg config.Config) (*secretbox.Box, error) {
	if len(cfg.SecretsKey) == 0 {
		return nil, fmt.Errorf("%s is not set; the API and the beat seal orgs' secrets with it (make one with `openssl rand -base64 32`)", config.EnvSecretsKey)
	}
	return secretbox.New(cfg.SecretsKey)
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
		Webhooks: delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),
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
		Webhooks: webhookSweeper(cfg, c),
		Hosting:  Hoster(cfg, c, log),
	}
}

// Hoster runs hosted apps on the hosting region's cluster. Without a secrets key it still runs
// the apps of orgs that have no secrets, and says, for each that has, why its host cannot start.
func Hoster(cfg config.Config, c Clients, log *slog.Logger) *hosting.Hoster {
	h := &hosting.Hoster{
		Region: cfg.HostingRegion, Namespace: cfg.AppsNamespace, PublicURL: cfg.PublicURL,
		Apps:     dynamo.NewAppStore(c.DynamoDB, tables(cfg)),
		Secrets:  dynamo.NewSecretStore(c.DynamoDB, cfg.ControlTable),
		Sources:  hosting.S3Sources{Presign: s3.NewPresignClient(c.S3), Bucket: cfg.SourcesBucket, Prefix: cfg.SourcesPrefix},
		Clusters: c.Clusters,
		Log:      log,
	}
	if box, err := SecretBox(cfg); err == nil {
		h.Box = box
	}
	return h
}

// Webhook is the webhook queue's handler. It opens webhooks' sealed secrets with the secrets key;
// without one configured it can deliver only for webhooks stored before sealing, and says so on
// each delivery it cannot sign.
func Webhook(cfg config.Config, c Clients, log *slog.Logger) *delivery.Handler {
	var sealer dynamo.Sealer
	if box, err := SecretBox(cfg); err == nil {
		sealer = box
	}
	return &delivery.Handler{
		Outbox: dynamo.NewOutboxStore(c.DynamoDB, tables(cfg)),
		Store:  dynamo.NewWebhookStore(c.DynamoDB, tables(cfg), sealer),
		Queue:  delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),
		Client: egress.NewClient(egress.Options{AllowPrivate: cfg.WebhooksAllowPrivate}),
		Log:    log,
	}
}

// webhookSweeper is the beat's webhook sweep; it reads no secrets.
func webhookSweeper(cfg config.Config, c Clients) *delivery.Sweeper {
	return &delivery.Sweeper{
		Outbox: dynamo.NewOutboxStore(c.DynamoDB, tables(cfg)),
		Due:    dynamo.NewWebhookStore(c.DynamoDB, tables(cfg), nil),
		Queue:  delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),
	}
}

// Logger is the functions' logger: JSON lines in Lambda (CloudWatch parses them), text in dev.
func Logger(cfg config.Config, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	if cfg.LogJSON {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}
