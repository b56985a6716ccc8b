// Package handlers provides what every function starts from: the configuration read from the
// environment, the AWS SDK clients and the logger (the keyring that seals secrets is in sealing). Each function's own wiring
// lives in a package beneath it (apihandler, dispatchhandler, reconcilehandler, webhookhandler,
// and hostinghandler, which the API and the beat share), which both its Lambda and `tidegate dev`
// call, so what runs locally is the code that runs in AWS and each Lambda links only what it
// uses. This package links no Kubernetes package: the webhook function is built from it alone.
package handlers

import (
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/metrics"
)

// Clients are the AWS SDK clients the functions share, each pointed at its configured endpoint,
// and the SDK config they were made from, for the clients one function makes for itself (EC2
// for spot prices, EKS and STS for its clusters).
type Clients struct {
	AWS      aws.Config
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	S3       *s3.Client
	// Metrics takes the function's metrics, as EMF lines in its log in Lambda; nil records none.
	Metrics *metrics.Recorder
}

// NewClients makes the clients from an SDK config, replacing each service's endpoint where cfg
// says. Making them reads nothing and dials nothing.
func NewClients(awsCfg aws.Config, cfg config.Config) Clients {
	ep := cfg.Endpoints
	return Clients{
		AWS:      awsCfg,
		DynamoDB: dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) { o.BaseEndpoint = Endpoint(ep.DynamoDB) }),
		SQS:      sqs.NewFromConfig(awsCfg, func(o *sqs.Options) { o.BaseEndpoint = Endpoint(ep.SQS) }),
		S3: s3.NewFromConfig(awsCfg, func(o *s3.Options) {
			o.BaseEndpoint = Endpoint(ep.S3)
			// The S3 stand-in serves path-style URLs only; AWS serves both.
			o.UsePathStyle = ep.S3 != ""
		}),
	}
}

// Endpoint is an SDK client's BaseEndpoint for a configured endpoint: nil, AWS's own, when unset.
func Endpoint(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// Tables names cfg's three DynamoDB tables.
func Tables(cfg config.Config) dynamo.Tables {
	return dynamo.Tables{Jobs: cfg.JobsTable, Events: cfg.EventsTable, Control: cfg.ControlTable}
}

// Logger is the functions' logger: JSON lines in Lambda (CloudWatch parses them), text in dev.
func Logger(cfg config.Config, w io.Writer) *slog.Logger {
	if cfg.LogJSON {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}
