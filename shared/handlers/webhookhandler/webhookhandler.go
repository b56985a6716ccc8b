// Package webhookhandler wires the webhook function: shared/delivery's handler of the webhook
// queue, which fans the outbox out and makes signed deliveries. It links no Kubernetes package.
package webhookhandler

import (
	"log/slog"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/sealing"
)

// New is the webhook queue's handler. It opens webhooks' sealed secrets with the keyring; without
// a KMS key configured it can deliver only for webhooks stored before sealing, and says so on
// each delivery it cannot sign.
func New(cfg config.Config, c handlers.Clients, log *slog.Logger) *delivery.Handler {
	var sealer dynamo.Sealer
	if ring, err := sealing.Keyring(cfg, c); err == nil {
		sealer = ring
	}
	t := handlers.Tables(cfg)
	return &delivery.Handler{
		Outbox: dynamo.NewOutboxStore(c.DynamoDB, t),
		Store:  dynamo.NewWebhookStore(c.DynamoDB, t, sealer),
		Queue:  delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),
		Client: egress.NewClient(egress.Options{AllowPrivate: cfg.WebhooksAllowPrivate}),
		Log:    log,

		Metrics: c.Metrics,
	}
}
