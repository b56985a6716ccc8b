package apihandler

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/policy"
)

// policyConfig reads the policy's settings: each cap a Kubernetes quantity (unset is no cap), the
// trusted registries as written (none is any registry). It reports every problem at once, naming
// the setting to fix.
func policyConfig(s config.PolicySettings) (policy.Config, error) {
	var errs []error
	quantity := func(name, v string) *resource.Quantity {
		if v == "" {
			return nil
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a Kubernetes quantity such as 8, 500m or 64Gi", name, v))
			return nil
		}
		return &q
	}
	p := policy.Config{
		MaxGPUs:           quantity(config.EnvPolicyMaxGPUs, s.MaxGPUs),
		MaxCPU:            quantity(config.EnvPolicyMaxCPU, s.MaxCPU),
		MaxMemory:         quantity(config.EnvPolicyMaxMemory, s.MaxMemory),
		TrustedRegistries: s.TrustedRegistries,
	}
	if err := p.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("policy: %w", err))
	}
	if len(errs) > 0 {
		return policy.Config{}, fmt.Errorf("reading the admission policy from TIDEGATE_POLICY_*: %w", errors.Join(errs...))
	}
	return p, nil
}
