// Package apihandler wires the api function: shared/httpapi's handler over the stores, the
// regions' clusters, the admission policy and the hosting preview. The Lambda wraps it with the
// api-proxy adapter and `tidegate dev` serves it with net/http. Only the API links the Pod
// Security evaluator, through the policy it admits manifests with.
package apihandler

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/demand"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/hostinghandler"
	"github.com/tidegate/tidegate/shared/handlers/isolationsettings"
	"github.com/tidegate/tidegate/shared/handlers/sealing"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/wake"
)

// New is the HTTP API. It refuses to start without a KMS key for its keyring, or with a policy setting it
// cannot read. iam extracts API Gateway's authenticated IAM caller; nil outside Lambda.
func New(cfg config.Config, c handlers.Clients, clusters *typed.Clusters, log *slog.Logger, iam httpapi.IAMCaller) (http.Handler, error) {
	pc, err := policyConfig(cfg.Policy)
	if err != nil {
		return nil, err
	}
	// A job's demand counts a container that sets no CPU or memory at what the namespace's
	// LimitRange, kept by the beat from the same settings, gives it.
	iso, err := isolationsettings.Read(cfg)
	if err != nil {
		return nil, err
	}
	pc.ContainerDefaults = demand.Defaults{CPU: iso.Containers.CPURequest, Memory: iso.Containers.MemoryRequest}
	pc.AppsNamespace = cfg.AppsNamespace
	set, err := flavors.Parse(cfg.Flavors)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvFlavors, err)
	}
	pc.Pods.NodeSelectorKeys = withKeys(withCapacityLabel(pc.Pods.NodeSelectorKeys, cfg.CapacityTypeLabel), set.Labels()...)
	checker, err := policy.NewChecker(pc)
	if err != nil {
		return nil, err
	}
	ring, err := sealing.Keyring(cfg, c)
	if err != nil {
		return nil, err
	}
	t := handlers.Tables(cfg)
	wi, err := whatIfs(cfg, c, log)
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Deps{
		Log:        log,
		Principals: httpapi.NewPrincipalCache(dynamo.NewTenantStore(c.DynamoDB, t.Control), nil),
		Jobs:       dynamo.NewJobStore(c.DynamoDB, t).Retain(cfg.JobRetention),
		Templates:  dynamo.NewTemplateStore(c.DynamoDB, t.Control),
		// Every change a principal asks for is recorded before it is made.
		Audit:    dynamo.NewAuditStore(c.DynamoDB, t.Control, cfg.AuditRetention),
		Policy:   checker,
		Ringer:   wake.New(c.SQS, cfg.DispatchQueueURL),
		Regions:  cfg.RegionNames(),
		Clusters: clusters,
		Capacity: cfg.Capacity,
		Flavors: func(region string) flavors.Region {
			return set.Of(region, cfg.Capacity(region), cfg.GPUCapacity(region))
		},
		DefaultQuota: cfg.DefaultQuota,
		// The queue's stats say whether long-running jobs hold slots, as the drain counts them.
		LongRunningHoldsSlot: cfg.LongRunning.HoldsSlot,
		LongRunningPerTenant: cfg.LongRunning.PerTenant,
		ReadyTimeoutMax:      cfg.ReadyTimeoutMax,
		RegionLostAfter:      cfg.RegionLostAfter,
		WhatIfs:              wi,
		CheckpointBucket:     cfg.CheckpointBucket,
		MaxQueuedPerTenant:   cfg.MaxQueuedPerTenant,
		IAMCaller:            iam,
		Rate:                 cfg.Rate(),
		Metrics:              c.Metrics,

		Apps:          dynamo.NewAppStore(c.DynamoDB, t),
		Secrets:       dynamo.NewSecretStore(c.DynamoDB, t.Control),
		Sealer:        ring,
		Sources:       c.S3,
		Uploads:       s3.NewPresignClient(c.S3),
		SourcesBucket: cfg.SourcesBucket,
		SourcesPrefix: cfg.SourcesPrefix,
		AppRuntimes:   cfg.AppRuntimes.Names(),
		Hosting:       hostinghandler.New(cfg, c, clusters, log),

		Webhooks:             dynamo.NewWebhookStore(c.DynamoDB, t, ring),
		WebhookQueue:         delivery.NewQueue(c.SQS, cfg.WebhookQueueURL),
		WebhooksAllowPrivate: cfg.WebhooksAllowPrivate,
	}), nil
}
