package tenancy

import (
	"fmt"
	"math"

	"github.com/tidegate/tidegate/shared/ratelimit"
)

// Rate is the request budget of each of the tenant's credentials: its own rate and burst where
// its record sets them (above 0), the API's default def for what it leaves at 0.
func (t Tenant) Rate(def ratelimit.Limit) ratelimit.Limit {
	l := def
	if t.RateLimit > 0 {
		l.Rate = t.RateLimit
	}
	if t.RateBurst > 0 {
		l.Burst = t.RateBurst
	}
	return l
}

// rateProblems are what is wrong with the tenant's own rate and burst: each is 0 (the default) or
// a positive number, the rate a finite one.
func (t Tenant) rateProblems() []error {
	var errs []error
	if t.RateLimit < 0 || math.IsNaN(t.RateLimit) || math.IsInf(t.RateLimit, 0) {
		errs = append(errs, fmt.Errorf("rate %v must be a number of requests a second ≥ 0 (0 is the default)", t.RateLimit))
	}
	if t.RateBurst < 0 {
		errs = append(errs, fmt.Errorf("burst %d must be ≥ 0 (0 is the default)", t.RateBurst))
	}
	return errs
}
