package tenancy

import (
	"math"
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/ratelimit"
)

func TestTenantRate(t *testing.T) {
	def := ratelimit.Limit{Rate: 20, Burst: 100}
	tests := []struct {
		name        string
		rate        float64
		burst       int
		want        ratelimit.Limit
		wantProblem string
	}{
		{name: "neither set: the default", want: def},
		{name: "both set", rate: 2, burst: 5, want: ratelimit.Limit{Rate: 2, Burst: 5}},
		{name: "only the rate", rate: 0.5, want: ratelimit.Limit{Rate: 0.5, Burst: 100}},
		{name: "only the burst", burst: 500, want: ratelimit.Limit{Rate: 20, Burst: 500}},
		{name: "a negative rate", rate: -1, wantProblem: "rate -1"},
		{name: "an infinite rate", rate: math.Inf(1), wantProblem: "rate +Inf"},
		{name: "a negative burst", burst: -3, wantProblem: "burst -3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn := Tenant{Name: "ml", Org: "acme", Namespaces: []string{"team-a"}, Role: RoleMember, RateLimit: tt.rate, RateBurst: tt.burst}
			err := tn.Validate()
			if tt.wantProblem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantProblem) {
					t.Errorf("Validate with rate %v, burst %d = %v, want it to say %q", tt.rate, tt.burst, err, tt.wantProblem)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate with rate %v, burst %d = %v", tt.rate, tt.burst, err)
			}
			if got := tn.Rate(def); got != tt.want {
				t.Errorf("Rate(%+v) with rate %v, burst %d = %+v, want %+v", def, tt.rate, tt.burst, got, tt.want)
			}
		})
	}
}
