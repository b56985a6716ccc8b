package apihandler

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/policy"
)

// CheckPolicy reports what New would refuse in the policy's settings, so that `tidegate dev`
// stops on a bad one before it starts anything, with the same message.
func CheckPolicy(s config.PolicySettings) error {
	_, err := policyConfig(s)
	return err
}

// policyConfig reads the policy's settings: each cap a Kubernetes quantity (unset is no cap, or
// for the storage caps the policy's default), each list as written (an empty allow-list allows
// nothing; no trusted registries is any registry), each flag true or false (unset is false). It
// reports every problem at once, naming the setting to fix.
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
	flag := func(name, v string) bool {
		if v == "" {
			return false
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not true or false", name, v))
		}
		return b
	}
	p := policy.Config{
		MaxGPUs:           quantity(config.EnvPolicyMaxGPUs, s.MaxGPUs),
		MaxCPU:            quantity(config.EnvPolicyMaxCPU, s.MaxCPU),
		MaxMemory:         quantity(config.EnvPolicyMaxMemory, s.MaxMemory),
		TrustedRegistries: s.TrustedRegistries,
		Pods: policy.PodFields{
			AllowNodeName:            flag(config.EnvPolicyAllowNodeName, s.AllowNodeName),
			Tolerations:              s.Tolerations,
			PriorityClasses:          s.PriorityClasses,
			RuntimeClasses:           s.RuntimeClasses,
			ServiceAccounts:          s.ServiceAccounts,
			AllowServiceAccountToken: flag(config.EnvPolicyAllowServiceAccountToken, s.AllowServiceAccountToken),
			StorageClasses:           s.StorageClasses,
			CSIDrivers:               s.CSIDrivers,
			NodeSelectorKeys:         s.NodeSelectorKeys,
			MaxEphemeralStorage:      quantity(config.EnvPolicyMaxEphemeralStorage, s.MaxEphemeralStorage),
			MaxVolumeSize:            quantity(config.EnvPolicyMaxVolumeSize, s.MaxVolumeSize),
		},
	}
	errs = append(errs, validateEach(p)...)
	if len(errs) > 0 {
		return policy.Config{}, fmt.Errorf("reading the admission policy from TIDEGATE_POLICY_*: %w", errors.Join(errs...))
	}
	return p, nil
}

// validateEach validates each setting of p alone, so that every problem names the variable that
// holds it.
func validateEach(p policy.Config) []error {
	var errs []error
	for _, one := range []struct {
		name string
		cfg  policy.Config
	}{
		{config.EnvPolicyMaxGPUs, policy.Config{MaxGPUs: p.MaxGPUs}},
		{config.EnvPolicyMaxCPU, policy.Config{MaxCPU: p.MaxCPU}},
		{config.EnvPolicyMaxMemory, policy.Config{MaxMemory: p.MaxMemory}},
		{config.EnvPolicyRegistries, policy.Config{TrustedRegistries: p.TrustedRegistries}},
		{config.EnvPolicyTolerations, policy.Config{Pods: policy.PodFields{Tolerations: p.Pods.Tolerations}}},
		{config.EnvPolicyPriorityClasses, policy.Config{Pods: policy.PodFields{PriorityClasses: p.Pods.PriorityClasses}}},
		{config.EnvPolicyRuntimeClasses, policy.Config{Pods: policy.PodFields{RuntimeClasses: p.Pods.RuntimeClasses}}},
		{config.EnvPolicyServiceAccounts, policy.Config{Pods: policy.PodFields{ServiceAccounts: p.Pods.ServiceAccounts}}},
		{config.EnvPolicyStorageClasses, policy.Config{Pods: policy.PodFields{StorageClasses: p.Pods.StorageClasses}}},
		{config.EnvPolicyMaxEphemeralStorage, policy.Config{Pods: policy.PodFields{MaxEphemeralStorage: p.Pods.MaxEphemeralStorage}}},
		{config.EnvPolicyMaxVolumeSize, policy.Config{Pods: policy.PodFields{MaxVolumeSize: p.Pods.MaxVolumeSize}}},
		{config.EnvPolicyCSIDrivers, policy.Config{Pods: policy.PodFields{CSIDrivers: p.Pods.CSIDrivers}}},
		{config.EnvPolicyNodeSelectorKeys, policy.Config{Pods: policy.PodFields{NodeSelectorKeys: p.Pods.NodeSelectorKeys}}},
	} {
		if err := one.cfg.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", one.name, err))
		}
	}
	if len(errs) == 0 {
		// What only the settings together could break.
		if err := p.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("policy: %w", err))
		}
	}
	return errs
}

// withCapacityLabel is the node labels a pod may select nodes by (the policy's default when keys
// is empty) and the clusters' capacity-type label: a job asks for spot or on-demand nodes by the
// label the clusters have, which dispatch's on-demand fallback sets too, whichever it is.
func withCapacityLabel(keys []string, label string) []string {
	return withKeys(keys, label)
}

// withKeys is the allow-list keys (the policy's default when empty) with more, each once: a pod
// may select nodes by the capacity-type label and by the flavors' node labels, whatever the
// operator listed, since a job names its flavor by them.
func withKeys(keys []string, more ...string) []string {
	if len(keys) == 0 {
		keys = policy.DefaultNodeSelectorKeys()
	}
	out := slices.Clone(keys)
	for _, k := range more {
		if k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
