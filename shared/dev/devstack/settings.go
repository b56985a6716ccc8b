package devstack

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/flavors"
	"github.com/tidegate/tidegate/shared/handlers/apihandler"
	"github.com/tidegate/tidegate/shared/handlers/isolationsettings"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// A twin is a setting of `tidegate dev`'s own that stands for one of the deployment's tunables.
// Given (not its zero value), it is used in place of the tunable, as a flag is used in place of
// its TIDEGATE_DEV_* variable: flag, then TIDEGATE_DEV_*, then the deployment's variable, then
// config's default. An operator who sets both has said the flag last, on the command line, and
// `tidegate dev` says at start which variable it set aside (overrides).
type twin struct {
	flag, env string
	value     func(Options) string // the dev setting as given; "" when not
}

var twins = []twin{
	{"--region-capacity", config.EnvRegionCapacity, func(o Options) string { return o.RegionCapacity }},
	{"--flavors", config.EnvFlavors, func(o Options) string { return o.Flavors }},
	{"--rate", config.EnvRateLimit, func(o Options) string { return nonZero(o.RateLimit, strconv.FormatFloat(o.RateLimit, 'f', -1, 64)) }},
	{"--burst", config.EnvRateBurst, func(o Options) string { return nonZero(o.RateBurst, strconv.Itoa(o.RateBurst)) }},
	{"--default-quota", config.EnvDefaultQuota, func(o Options) string { return o.DefaultQuota }},
	{"--job-ttl", config.EnvJobTTLSeconds, func(o Options) string { return nonZero(o.JobTTL, o.JobTTL.String()) }},
}

func nonZero[T comparable](v T, s string) string {
	var zero T
	if v == zero {
		return ""
	}
	return s
}

// getenv is how the deployment's tunables are looked up: opt.Env, or nothing set.
func (o Options) getenv(name string) string {
	if o.Env == nil {
		return ""
	}
	return o.Env(name)
}

// settings are the functions' tunables: the deployment's, read from o.Env by config as the
// functions read them in AWS, with dev's twins in their place where given; every problem is
// reported at once, in the words the functions would use when they refuse to start, or naming
// the flag. Nothing here touches the stand-ins, so Run checks them before it starts any.
func (o Options) settings() (config.Config, error) {
	var cfg config.Config
	errs := []error{cfg.ApplyTunables(o.getenv)}
	var err error
	if o.RegionCapacity != "" {
		if cfg.RegionCapacity, err = config.ParseCapacity(o.RegionCapacity); err != nil {
			errs = append(errs, fmt.Errorf("--region-capacity: %w", err))
		}
	}
	if o.Flavors != "" {
		cfg.Flavors = o.Flavors
	}
	if o.RateLimit < 0 || math.IsNaN(o.RateLimit) || math.IsInf(o.RateLimit, 0) || o.RateBurst < 0 {
		errs = append(errs, fmt.Errorf("--rate %g and --burst %d must be 0 (not set) or more", o.RateLimit, o.RateBurst))
	}
	if o.RateLimit > 0 {
		cfg.RateLimit = o.RateLimit
	}
	if o.RateBurst > 0 {
		cfg.RateBurst = o.RateBurst
	}
	if o.DefaultQuota != "" {
		if cfg.DefaultQuota, err = tenancy.ParseQuota(o.DefaultQuota); err != nil {
			errs = append(errs, fmt.Errorf("--default-quota: %w", err))
		}
	}
	if o.JobTTL != 0 {
		cfg.JobTTL = o.JobTTL
	}
	errs = append(errs, devRegionsOnly(o, cfg), devFlavorsReadable(o, cfg))
	// On the sandbox, whose nodes the stack makes to match, a region given no flavors and no room
	// of the older settings' runs with dev's own.
	if cfg.Flavors == "" && o.Kubeconfig == "" {
		cfg.Flavors = devFlavors(DevRegions, cfg.RegionCapacity, cfg.RegionGPUs)
	}
	// What the API and the beat check when they start, checked before the slow start; the beat's
	// check reads the policy's caps again, so it waits for them to be well formed.
	if err := apihandler.CheckPolicy(cfg.Policy); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, isolationError(cfg))
	}
	if err := errors.Join(errs...); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// devRegionsOnly refuses a cap for a region the dev stack does not have: it would cap nothing, and
// the operator trying it would not know.
func devRegionsOnly(o Options, cfg config.Config) error {
	var errs []error
	capName := config.EnvRegionCapacity
	if o.RegionCapacity != "" {
		capName = "--region-capacity"
	}
	for _, c := range []struct {
		name string
		caps map[string]int
	}{{capName, cfg.RegionCapacity}, {config.EnvRegionGPUs, cfg.RegionGPUs}} {
		for r := range c.caps {
			if !isDevRegion(r) {
				errs = append(errs, fmt.Errorf("%s names %q; the dev regions are us-east-1 and us-west-2", c.name, r))
			}
		}
	}
	return errors.Join(errs...)
}

// devFlavorsReadable refuses flavors the functions would refuse to start with, or that name a
// region the dev stack does not have, naming the flag or the variable they came from.
func devFlavorsReadable(o Options, cfg config.Config) error {
	name := config.EnvFlavors
	if o.Flavors != "" {
		name = "--flavors"
	}
	set, err := flavors.Parse(cfg.Flavors)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var errs []error
	for _, r := range slices.Sorted(maps.Keys(set)) {
		if r != flavors.Every && !isDevRegion(r) {
			errs = append(errs, fmt.Errorf("%s names %q; the dev regions are us-east-1 and us-west-2, or \"*\" for both", name, r))
		}
	}
	return errors.Join(errs...)
}

func isolationError(cfg config.Config) error {
	_, err := isolationsettings.Read(cfg)
	return err
}

// taken are the deployment's tunables set in o.Env, as NAME=value in config.Tunables' order: what
// `tidegate dev` prints at start, so that an operator sees which of the settings being tried took.
func taken(o Options) []string {
	var out []string
	for _, name := range config.Tunables {
		if v := o.getenv(name); v != "" {
			out = append(out, name+"="+v)
		}
	}
	return out
}

// overrides are the notes `tidegate dev` prints at start for each deployment variable set in
// o.Env that a twin given in o sets aside, so that a value being tried is not silently another.
func overrides(o Options) []string {
	var out []string
	for _, t := range twins {
		if v, aside := t.value(o), o.getenv(t.env); v != "" && aside != "" {
			out = append(out, fmt.Sprintf("%s %s is used in place of %s=%s", t.flag, v, t.env, aside))
		}
	}
	return out
}
