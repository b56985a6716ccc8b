package reconcilehandler

import (
	"log/slog"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/isolationsettings"
	"github.com/tidegate/tidegate/shared/isolating"
	"github.com/tidegate/tidegate/shared/isolation"
	"github.com/tidegate/tidegate/shared/kube/typed"
)

// keeper is the beat's keeper of the clusters' isolation objects.
func keeper(cfg config.Config, c handlers.Clients, clusters *typed.Clusters, log *slog.Logger) (*isolating.Keeper, error) {
	s, err := isolationsettings.Read(cfg)
	if err != nil {
		return nil, err
	}
	return &isolating.Keeper{
		Clusters: Clusters(cfg),
		Settings: s,
		Tenants:  dynamo.NewTenantStore(c.DynamoDB, cfg.ControlTable),
		Clients:  clusters,
		Log:      log,
	}, nil
}

// Clusters are cfg's regions by cluster: one each in AWS, every region on one with a kubeconfig
// (dev's sandbox), whose objects must then be wanted once for all of them.
func Clusters(cfg config.Config) []isolation.Cluster {
	var out []isolation.Cluster
	for _, name := range cfg.RegionNames() {
		r := isolation.Region{Name: name, Jobs: cfg.Capacity(name), GPUs: cfg.GPUCapacity(name)}
		if cfg.Kubeconfig != "" && len(out) > 0 {
			out[0].Regions = append(out[0].Regions, r)
			continue
		}
		out = append(out, isolation.Cluster{Regions: []isolation.Region{r}})
	}
	return out
}
