package config

// Tunables are the settings that say how a deployment behaves, rather than where it runs or what
// its tables, queues and endpoints are called: the regions' caps, a tenant's default request
// budget, quota and cap of queued jobs, how long records and Jobs are kept, what on-demand nodes
// cost, the hosted apps' runtimes and readiness limit, how long-running jobs share a region, the
// admission policy and the namespaces' isolation. They mean the same on any stack, so `tidegate dev` reads them
// from its own environment through ApplyTunables, and an operator tries a cap or an allow-list
// locally before deploying it.
//
// The beat's watch (EnvWatchSeconds) is not one: its bound is the minute of the schedule that
// template.yaml sets, where the dev stack beats at --beat. Nor is the capacity-type label, which
// says how the clusters' nodes are labelled, a fact about the clusters rather than a choice.
var Tunables = []string{
	EnvRegionCapacity, EnvRegionGPUs, EnvFlavors,
	EnvRateLimit, EnvRateBurst, EnvDefaultQuota,
	EnvJobRetentionDays, EnvJobTTLSeconds, EnvAuditRetentionDays,
	EnvOnDemandPrices, EnvAppRuntimes, EnvAppUnreadySeconds, EnvReadyTimeoutMax,
	EnvLongRunningHoldsSlot, EnvLongRunningPerTenant, EnvMaxQueuedPerTenant, EnvDrainReadBudget,
	EnvPreemptionsPerMinute, EnvPreemptionCooldown, EnvPreemptionGraceMax, EnvRegionLostAfter,
	EnvPolicyMaxGPUs, EnvPolicyMaxCPU, EnvPolicyMaxMemory, EnvPolicyRegistries,
	EnvPolicyAllowNodeName, EnvPolicyTolerations, EnvPolicyPriorityClasses, EnvPolicyRuntimeClasses,
	EnvPolicyServiceAccounts, EnvPolicyAllowServiceAccountToken, EnvPolicyStorageClasses,
	EnvPolicyMaxEphemeralStorage, EnvPolicyMaxVolumeSize, EnvPolicyCSIDrivers, EnvPolicyNodeSelectorKeys,
	EnvPodCIDRs, EnvServiceCIDRs, EnvNodeCIDRs, EnvAppsResolvers,
	EnvContainerCPU, EnvContainerMemory, EnvContainerCPURequest, EnvContainerMemoryRequest,
	EnvPodsPerJob,
}

// ApplyTunables reads the Tunables through getenv onto c, each exactly as Parse reads it (its
// default when unset), and reports every malformed one at once, naming its variable. Nothing else
// of c changes. Like Parse, it leaves the policy's caps and the containers' defaults as text: the
// API's and the beat's wiring read those as Kubernetes quantities.
func (c *Config) ApplyTunables(getenv func(string) string) error {
	r := &reader{getenv: getenv}
	r.tunables(c)
	return r.err()
}

// tunables reads the Tunables onto c; Parse and ApplyTunables share it, so there is one reading.
func (r *reader) tunables(c *Config) {
	c.RegionCapacity = r.capacity(EnvRegionCapacity)
	c.RegionGPUs = r.capacity(EnvRegionGPUs)
	c.Flavors = r.get(EnvFlavors)
	c.DrainReadBudget = r.readBudget()
	c.RateLimit, c.RateBurst = r.rate()
	c.DefaultQuota = r.quota(EnvDefaultQuota)
	c.JobRetention, c.JobTTL = r.cleanup()
	c.AuditRetention = r.auditRetention()
	c.OnDemandPrices = r.onDemand(EnvOnDemandPrices)
	c.AppRuntimes = r.appRuntimes(EnvAppRuntimes)
	c.AppUnreadyLimit = r.unreadyLimit(EnvAppUnreadySeconds)
	c.ReadyTimeoutMax = r.readyTimeoutMax(EnvReadyTimeoutMax)
	c.LongRunning = r.longRunning()
	c.Preemption = r.preemption()
	c.RegionLostAfter = r.regionLostAfter()
	c.MaxQueuedPerTenant = r.maxQueued(EnvMaxQueuedPerTenant)
	c.Policy = r.policy()
	c.Isolation = r.isolation()
}
