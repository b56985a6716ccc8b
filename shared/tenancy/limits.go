package tenancy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// TopPriority is the highest priority a job may have (jobs.MaxPriority), and so the limit of a
// tenant whose record sets none: every tenant could submit at 100 before limits existed.
const TopPriority = 100

// PriorityLimit is the highest priority the tenant's jobs may have.
func (t Tenant) PriorityLimit() int {
	if t.MaxPriority == nil {
		return TopPriority
	}
	return *t.MaxPriority
}

// QueuedLimit is how many of the tenant's jobs may wait in the queues at once: its record's cap,
// or def, the deployment's, where it sets none. 0 is no cap.
func (t Tenant) QueuedLimit(def int) int {
	if t.MaxQueued == nil {
		return def
	}
	return *t.MaxQueued
}

// Quota is a tenant's share of one region, per flavor and resource (Flavors), as Kueue's
// ClusterQueues share a cohort. The older form, still read from records and the default quota,
// is a count of jobs and GPUs: Jobs pods and GPUs GPUs nominal on every flavor of the region.
type Quota struct {
	Jobs int   `json:"jobs" dynamodbav:"jobs"`
	GPUs int64 `json:"gpus" dynamodbav:"gpus"`
	// Flavors is the tenant's share of each flavor, by flavor name; where set, Jobs and GPUs are
	// not read.
	Flavors map[string]FlavorQuota `json:"flavors,omitempty" dynamodbav:"flavors,omitempty"`
}

// FlavorQuota is a tenant's share of one flavor, each a quantity by resource name ("cpu": "32",
// "memory": "128Gi", "nvidia.com/gpu": "8", "pods": "100").
type FlavorQuota struct {
	// Nominal is what the flavor keeps for the tenant; a resource it leaves out it has none of,
	// and borrows.
	Nominal map[string]string `json:"nominal,omitempty" dynamodbav:"nominal,omitempty"`
	// BorrowingLimit is how far above Nominal the tenant may go; a resource left out has no limit.
	BorrowingLimit map[string]string `json:"borrowing_limit,omitempty" dynamodbav:"borrowing_limit,omitempty"`
	// LendingLimit is how much of its unused Nominal other tenants may borrow; a resource left out
	// lends all of it.
	LendingLimit map[string]string `json:"lending_limit,omitempty" dynamodbav:"lending_limit,omitempty"`
}

func (q Quota) String() string {
	if q.Flavors != nil {
		var parts []string
		for _, f := range slices.Sorted(maps.Keys(q.Flavors)) {
			parts = append(parts, f+"="+resourceList(q.Flavors[f].Nominal))
		}
		return strings.Join(parts, " ")
	}
	if q.GPUs == 0 {
		return strconv.Itoa(q.Jobs)
	}
	return fmt.Sprintf("%d:%d", q.Jobs, q.GPUs)
}

// ParseQuota reads JOBS[:GPUS], as `--quota REGION=JOBS[:GPUS]` and the default share spell it.
// GPUS left out is none: the tenant's GPU jobs then borrow.
func ParseQuota(s string) (Quota, error) {
	jobs, gpus, withGPUs := strings.Cut(strings.TrimSpace(s), ":")
	var q Quota
	var err error
	if q.Jobs, err = strconv.Atoi(jobs); err != nil || q.Jobs < 0 {
		return Quota{}, fmt.Errorf("quota %q is not JOBS[:GPUS] with JOBS a whole number ≥ 0", s)
	}
	if withGPUs {
		if q.GPUs, err = strconv.ParseInt(gpus, 10, 64); err != nil || q.GPUs < 0 {
			return Quota{}, fmt.Errorf("quota %q is not JOBS[:GPUS] with GPUS a whole number ≥ 0", s)
		}
	}
	return q, nil
}

// ParseRegionQuotas reads REGION=JOBS[:GPUS] pairs, one a flag, into quotas by region.
func ParseRegionQuotas(pairs []string) (map[string]Quota, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := map[string]Quota{}
	for _, p := range pairs {
		region, quota, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(region) == "" {
			return nil, fmt.Errorf("quota %q is not REGION=JOBS[:GPUS], such as us-east-1=4:8", p)
		}
		region = strings.TrimSpace(region)
		if _, dup := out[region]; dup {
			return nil, fmt.Errorf("region %s is given two quotas; give it one", region)
		}
		q, err := ParseQuota(quota)
		if err != nil {
			return nil, fmt.Errorf("region %s: %w", region, err)
		}
		out[region] = q
	}
	return out, nil
}

// QuotaIn is the tenant's share of region: its own where its record sets one, def otherwise.
func (t Tenant) QuotaIn(region string, def Quota) Quota {
	if q, ok := t.Quotas[region]; ok {
		return q
	}
	return def
}

// limitProblems are what is wrong with the tenant's priority limit, cap of queued jobs and quotas.
func (t Tenant) limitProblems() []error {
	var errs []error
	if p := t.MaxPriority; p != nil && (*p < 0 || *p > TopPriority) {
		errs = append(errs, fmt.Errorf("max priority %d must be a whole number from 0 to %d", *p, TopPriority))
	}
	if n := t.MaxQueued; n != nil && *n < 0 {
		errs = append(errs, fmt.Errorf("max queued %d must be a whole number ≥ 0 (0: no cap)", *n))
	}
	for _, region := range slices.Sorted(maps.Keys(t.Quotas)) {
		if q := t.Quotas[region]; q.Jobs < 0 || q.GPUs < 0 {
			errs = append(errs, fmt.Errorf("quota %s in region %s must be whole numbers ≥ 0", q, region))
		}
	}
	return errs
}

// resourceList writes quantities by resource as RES:QTY,RES:QTY, sorted.
func resourceList(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+":"+m[k])
	}
	return strings.Join(parts, ",")
}
