package apihandler

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dispatch"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/spotgate"
)

// whatIfs is the admission the API runs for ?what_if=true: the dispatch function's own drain,
// configured as the deployment's, reading the same records, but never asked to drain (it has no
// cluster, leases or ringer) — only WhatIf, which writes nothing. Its spot prices are what the
// drains last observed and kept (the price history), so the API calls no EC2.
func whatIfs(cfg config.Config, c handlers.Clients, log *slog.Logger) (*dispatch.Handler, error) {
	set, err := flavors.Parse(cfg.Flavors)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvFlavors, err)
	}
	store := dynamo.NewJobStore(c.DynamoDB, handlers.Tables(cfg)).Retain(cfg.JobRetention)
	return &dispatch.Handler{
		Regions: cfg.Regions, Flavors: set, Capacity: cfg.Capacity, GPUs: cfg.GPUCapacity,
		Store: store, Prices: keptPrices{store}, Log: log, Health: store,
		Tenants: dynamo.NewTenantStore(c.DynamoDB, cfg.ControlTable), DefaultQuota: cfg.DefaultQuota,
		CapacityLabel: cfg.CapacityTypeLabel, LongRunningHoldsSlot: cfg.LongRunning.HoldsSlot,
		LongRunningPerTenant: cfg.LongRunning.PerTenant, ReadBudget: cfg.DrainReadBudget,
		PreemptionsPerMinute: cfg.Preemption.PerMinute, PreemptionCooldown: cfg.Preemption.Cooldown,
	}, nil
}

// keptPrices observes an instance type's spot price in a region as the drains last kept it.
type keptPrices struct{ store *dynamo.JobStore }

func (k keptPrices) Observe(ctx context.Context, region, instanceType string, now time.Time) spotgate.Observation {
	h, err := k.store.SpotPriceHistories(ctx, region, []string{instanceType}, now)
	points := h[instanceType]
	if err != nil || len(points) == 0 {
		return spotgate.Observation{InstanceType: instanceType}
	}
	last := points[len(points)-1]
	return spotgate.Observation{InstanceType: instanceType, Price: last.Price, CheckedAt: last.At, Known: true}
}
