// Package isolationsettings reads the tenant namespaces' isolation settings from the config as
// Kubernetes quantities: the beat keeps each namespace's NetworkPolicies, ResourceQuota and
// LimitRange with them, and the API counts a job's demand with the same container defaults the
// LimitRange gives.
package isolationsettings

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/isolation"
)

// Read reads cfg's isolation settings and the policy's caps, which bound the
// namespaces' quotas, as Kubernetes quantities, reporting every problem at once by the setting to
// fix. A container's default limit left unset is the policy's cap on a pod, or the documented one
// without a cap; its request left unset the documented one, or the limit if lower. One set above
// the cap is an error.
func Read(cfg config.Config) (isolation.Settings, error) {
	var errs []error
	quantity := func(name, v string) *resource.Quantity {
		if v == "" {
			return nil
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() < 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a Kubernetes quantity such as 8, 500m or 64Gi", name, v))
			return nil
		}
		return &q
	}
	caps := isolation.PodCaps{
		CPU:    quantity(config.EnvPolicyMaxCPU, cfg.Policy.MaxCPU),
		Memory: quantity(config.EnvPolicyMaxMemory, cfg.Policy.MaxMemory),
		GPUs:   quantity(config.EnvPolicyMaxGPUs, cfg.Policy.MaxGPUs),
	}
	// A limit left unset is the policy's cap on a pod, where there is one: the API server refuses
	// a container whose request is above the limit a LimitRange gave it, and no container the
	// policy admits asks for more than the cap.
	limit := func(name, v, def string, capped *resource.Quantity) resource.Quantity {
		if q := quantity(name, v); q != nil {
			return *q
		}
		if v == "" && capped != nil {
			return capped.DeepCopy()
		}
		return resource.MustParse(def)
	}
	// A request left unset is at most its limit.
	request := func(name, v, def string, lim resource.Quantity) resource.Quantity {
		if q := quantity(name, v); q != nil {
			return *q
		}
		if q := resource.MustParse(def); v != "" || q.Cmp(lim) <= 0 {
			return q
		}
		return lim.DeepCopy()
	}
	i := cfg.Isolation
	c := isolation.ContainerDefaults{
		CPU:    limit(config.EnvContainerCPU, i.DefaultCPU, config.DefaultContainerCPU, caps.CPU),
		Memory: limit(config.EnvContainerMemory, i.DefaultMemory, config.DefaultContainerMemory, caps.Memory),
	}
	c.CPURequest = request(config.EnvContainerCPURequest, i.DefaultCPURequest, config.DefaultContainerCPURequest, c.CPU)
	c.MemoryRequest = request(config.EnvContainerMemoryRequest, i.DefaultMemoryRequest, config.DefaultContainerMemoryRequest, c.Memory)
	s := isolation.Settings{
		Owner:         isolation.OwnerOf(cfg.ControlTable),
		AppsNamespace: cfg.AppsNamespace,
		HostingRegion: cfg.HostingRegion,
		Ranges:        isolation.Ranges{Pods: i.PodCIDRs, Services: i.ServiceCIDRs, Nodes: i.NodeCIDRs},
		Resolvers:     i.Resolvers,
		Containers:    c,
		PodsPerJob:    int64(i.PodsPerJob),
		PodCaps:       caps,
	}
	if len(errs) == 0 {
		if err := s.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("TIDEGATE_CONTAINER_DEFAULT_* and the policy's caps: %w", err))
		}
	}
	if len(errs) > 0 {
		return isolation.Settings{}, fmt.Errorf("reading the namespaces' isolation settings: %w", errors.Join(errs...))
	}
	return s, nil
}
