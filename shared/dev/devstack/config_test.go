package devstack

import (
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestDevConfigLimits: `tidegate dev --rate --burst --default-quota` reach the functions' config,
// and a negative budget or a malformed quota is refused naming the flag.
func TestDevConfigLimits(t *testing.T) {
	cfg, err := devConfig(Options{RateLimit: 2.5, RateBurst: 7, DefaultQuota: "3:1"}, namesFor(""), sandbox.State{}, "", "tidegate-apps", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimit != 2.5 || cfg.RateBurst != 7 || cfg.DefaultQuota != (tenancy.Quota{Jobs: 3, GPUs: 1}) {
		t.Errorf("config = rate %v, burst %d, default quota %+v; want 2.5, 7, 3 jobs and 1 GPU", cfg.RateLimit, cfg.RateBurst, cfg.DefaultQuota)
	}
	for opt, want := range map[string]Options{
		"--rate":          {RateLimit: -1},
		"--burst":         {RateBurst: -2},
		"--default-quota": {DefaultQuota: "many"},
	} {
		if _, err := devConfig(want, namesFor(""), sandbox.State{}, "", "tidegate-apps", "", ""); err == nil || !strings.Contains(err.Error(), opt) {
			t.Errorf("devConfig(%+v) = %v; want a refusal naming %s", want, err, opt)
		}
	}
}
