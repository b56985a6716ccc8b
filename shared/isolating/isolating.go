// Package isolating keeps each region's cluster holding the objects shared/isolation wants: each
// beat it LISTs our NetworkPolicies, ResourceQuotas and LimitRanges (by label, one LIST per kind
// per region) and the cluster's namespaces, and applies (server-side, field manager tidegate)
// only what is missing or was changed by hand, deleting ours where no namespace held wants them.
package isolating

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/isolation"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// Tenants lists every tenant; dynamo.TenantStore is the real one.
type Tenants interface {
	Tenants(ctx context.Context) ([]tenancy.Tenant, error)
}

// Clients gives each region's typed client; typed.Clusters is the real one.
type Clients interface {
	Client(ctx context.Context, region string) (kubernetes.Interface, error)
}

// Keeper keeps the clusters' isolation objects in place.
type Keeper struct {
	// Clusters are the regions' clusters, each kept once (see Clusters).
	Clusters []isolation.Cluster
	Settings isolation.Settings
	Tenants  Tenants
	Clients  Clients
	Log      *slog.Logger
}

// writers is how many changes to one cluster are made at once: a first beat writes three objects
// a tenant namespace, and later beats mostly none.
const writers = 8

// Keep makes every cluster hold what isolation wants. A cluster that cannot be read is
// left as it is (deleting by a partial view could open what should stay shut); a change that
// fails does not stop the others. The error joins what failed, each naming its region and
// object, for the beat to log.
func (k *Keeper) Keep(ctx context.Context) error {
	tenants, err := k.Tenants.Tenants(ctx)
	if err != nil {
		return fmt.Errorf("isolation: reading tenants: %w", err)
	}
	errs := make([]error, len(k.Clusters))
	var wg sync.WaitGroup
	for i, c := range k.Clusters {
		wg.Go(func() { errs[i] = k.cluster(ctx, c, tenants) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// cluster makes one cluster hold what isolation wants of it.
func (k *Keeper) cluster(ctx context.Context, want isolation.Cluster, tenants []tenancy.Tenant) error {
	if len(want.Regions) == 0 {
		return nil
	}
	region := want.Regions[0].Name
	kc, err := k.Clients.Client(ctx, region)
	if err != nil {
		return fmt.Errorf("isolation in %s: %w", region, err)
	}
	c := cluster{kc: kc, selector: isolation.Selector(k.Settings.Owner)}
	have, exists, err := c.read(ctx)
	if err != nil {
		return fmt.Errorf("isolation in %s: %w", region, err)
	}
	steps := isolation.Plan(isolation.Wanted(want, tenants, k.Settings), have, exists)
	failed := make([]error, len(steps))
	sem := make(chan struct{}, writers)
	var wg sync.WaitGroup
	for i, s := range steps {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			failed[i] = k.carry(ctx, c, region, s)
		})
	}
	wg.Wait()
	return errors.Join(failed...)
}

// carry makes one change and logs it; what fails is returned, for the beat to log once.
func (k *Keeper) carry(ctx context.Context, c cluster, region string, s isolation.Step) error {
	switch s := s.(type) {
	case isolation.Apply:
		key := isolation.KeyOf(s.Object)
		if err := c.apply(ctx, key, s.Object); err != nil {
			return fmt.Errorf("isolation in %s: applying %s: %w", region, key, err)
		}
		k.Log.InfoContext(ctx, "isolation object applied", "region", region, "object", key.String(), "why", s.Why)
	case isolation.Delete:
		if err := c.remove(ctx, s.Key); err != nil {
			return fmt.Errorf("isolation in %s: deleting %s: %w", region, s.Key, err)
		}
		k.Log.InfoContext(ctx, "isolation object deleted: no tenant holds its namespace", "region", region, "object", s.Key.String())
	default:
		return fmt.Errorf("isolation in %s: unknown step %T", region, s)
	}
	return nil
}
