package flavors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidegate/tidegate/shared/tenancy"
)

// QuotaSyntax is how `tidegate admin tenants put` spells a tenant's share of one flavor, for its
// --quota (the nominal quota), --borrowing-limit and --lending-limit alike.
const QuotaSyntax = "REGION/FLAVOR=RESOURCE:QUANTITY[,RESOURCE:QUANTITY…], e.g. us-east-1/spot=cpu:32,memory:128Gi,nvidia.com/gpu:8"

// ParseQuotas reads a tenant's quotas from the admin command's flags: quotas (--quota), each
// either REGION/FLAVOR=RESOURCE:QUANTITY,… (a nominal quota in resources) or the older
// REGION=JOBS[:GPUS] (that many pods and GPUs nominal on every flavor of the region); borrowing
// and lending (--borrowing-limit, --lending-limit) in the first form, for flavors whose quota is
// in resources. A region has one form or the other. Each error says what to write.
func ParseQuotas(quotas, borrowing, lending []string) (map[string]tenancy.Quota, error) {
	var older, perFlavor []string
	for _, q := range quotas {
		target, _, _ := strings.Cut(q, "=")
		if strings.Contains(target, "/") {
			perFlavor = append(perFlavor, q)
		} else {
			older = append(older, q)
		}
	}
	out, err := tenancy.ParseRegionQuotas(older)
	if err != nil {
		return nil, fmt.Errorf("--quota: %w; or, in resources per flavor, %s", err, QuotaSyntax)
	}
	if out == nil {
		out = map[string]tenancy.Quota{}
	}
	set := func(flag string, pairs []string, put func(*tenancy.FlavorQuota, map[string]string)) error {
		for _, p := range pairs {
			region, flavor, amounts, err := flavorAmounts(p)
			if err != nil {
				return fmt.Errorf("%s: %w", flag, err)
			}
			q, had := out[region]
			if had && q.Flavors == nil {
				return fmt.Errorf("%s: region %s has a quota of jobs and GPUs (REGION=JOBS[:GPUS]) and one in resources; give it one form", flag, region)
			}
			if q.Flavors == nil {
				q.Flavors = map[string]tenancy.FlavorQuota{}
			}
			fq := q.Flavors[flavor]
			put(&fq, amounts)
			q.Flavors[flavor] = fq
			out[region] = q
		}
		return nil
	}
	if err := set("--quota", perFlavor, func(q *tenancy.FlavorQuota, m map[string]string) { q.Nominal = merge(q.Nominal, m) }); err != nil {
		return nil, err
	}
	if err := set("--borrowing-limit", borrowing, func(q *tenancy.FlavorQuota, m map[string]string) { q.BorrowingLimit = merge(q.BorrowingLimit, m) }); err != nil {
		return nil, err
	}
	if err := set("--lending-limit", lending, func(q *tenancy.FlavorQuota, m map[string]string) { q.LendingLimit = merge(q.LendingLimit, m) }); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// flavorAmounts reads REGION/FLAVOR=RESOURCE:QUANTITY,….
func flavorAmounts(p string) (region, flavor string, amounts map[string]string, err error) {
	target, list, ok := strings.Cut(p, "=")
	region, flavor, slash := strings.Cut(strings.TrimSpace(target), "/")
	if !ok || !slash || region == "" || flavor == "" || strings.TrimSpace(list) == "" {
		return "", "", nil, fmt.Errorf("%q is not %s", p, QuotaSyntax)
	}
	amounts = map[string]string{}
	for _, item := range strings.Split(list, ",") {
		name, q, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok || name == "" {
			return "", "", nil, fmt.Errorf("%q: %q is not RESOURCE:QUANTITY, such as cpu:32 or memory:128Gi", p, item)
		}
		if _, dup := amounts[name]; dup {
			return "", "", nil, fmt.Errorf("%q gives %s twice", p, name)
		}
		if _, err := Units(name, q); err != nil {
			return "", "", nil, fmt.Errorf("%q: %w", p, err)
		}
		amounts[name] = strings.TrimSpace(q)
	}
	return region, flavor, amounts, nil
}

// merge adds more into m, which may be nil.
func merge(m, more map[string]string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range more {
		m[k] = v
	}
	return m
}

// Spell is a tenant's quota of region as the admin command's flags give it, one entry a flag
// value: REGION=JOBS[:GPUS] for the older form, else REGION/FLAVOR=RESOURCE:QUANTITY,… for each
// nominal quota, and REGION/FLAVOR:borrowing-limit=… and REGION/FLAVOR:lending-limit=… for the
// limits set.
func Spell(region string, q tenancy.Quota) []string {
	if q.Flavors == nil {
		return []string{region + "=" + q.String()}
	}
	var out []string
	for _, f := range sortedKeys(q.Flavors) {
		fq := q.Flavors[f]
		for _, part := range []struct {
			suffix string
			m      map[string]string
		}{{"", fq.Nominal}, {":borrowing-limit", fq.BorrowingLimit}, {":lending-limit", fq.LendingLimit}} {
			if len(part.m) > 0 {
				var items []string
				for _, k := range sortedKeys(part.m) {
					items = append(items, k+":"+part.m[k])
				}
				out = append(out, region+"/"+f+part.suffix+"="+strings.Join(items, ","))
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
