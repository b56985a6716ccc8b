// Package hostinghandler wires shared/hosting's Hoster, which runs hosted apps on the hosting
// region's cluster: the beat carries out its plan, and the API previews it and reads hosts' logs.
package hostinghandler

import (
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/sealing"
	"github.com/tidegate/tidegate/shared/hosting"
	"github.com/tidegate/tidegate/shared/kube/typed"
)

// New is the Hoster of cfg's hosting region. Without a KMS key for its keyring it still runs the apps of orgs
// that have no secrets, and says, for each that has, why its host cannot start.
func New(cfg config.Config, c handlers.Clients, clusters *typed.Clusters, log *slog.Logger) *hosting.Hoster {
	h := &hosting.Hoster{
		Region: cfg.HostingRegion, Namespace: cfg.AppsNamespace, Stack: cfg.Stack, PublicURL: cfg.PublicURL, Runtimes: cfg.AppRuntimes,
		UnreadyLimit: cfg.AppUnreadyLimit,
		Apps:         dynamo.NewAppStore(c.DynamoDB, handlers.Tables(cfg)),
		Secrets:      dynamo.NewSecretStore(c.DynamoDB, cfg.ControlTable),
		Sources:      hosting.S3Sources{Presign: s3.NewPresignClient(c.S3), Bucket: cfg.SourcesBucket, Prefix: cfg.SourcesPrefix},
		Clusters:     clusters,
		Log:          log,
		Metrics:      c.Metrics,
	}
	if ring, err := sealing.Keyring(cfg, c); err == nil {
		h.Box = ring
	}
	return h
}
