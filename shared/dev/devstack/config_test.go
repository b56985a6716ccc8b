package devstack

import (
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/config"

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

// TestDevJobTTL: --job-ttl may go below TIDEGATE_JOB_TTL_SECONDS' five minutes, down to five of
// the dev stack's own beats, and reaches the functions' config; 0 is the default hour.
func TestDevJobTTL(t *testing.T) {
	base := Options{Addr: "127.0.0.1:0", Beat: time.Second}
	for _, tt := range []struct {
		ttl, beat time.Duration
		ok        bool
	}{
		{0, time.Second, true},
		{5 * time.Second, time.Second, true},
		{4 * time.Second, time.Second, false},
		{10 * time.Second, 5 * time.Second, false},
		{25 * time.Second, 5 * time.Second, true},
		{5500 * time.Millisecond, time.Second, false},
	} {
		o := base
		o.JobTTL, o.Beat = tt.ttl, tt.beat
		if err := o.Validate(); (err == nil) != tt.ok || err != nil && !strings.Contains(err.Error(), "--job-ttl") {
			t.Errorf("Validate(--job-ttl %s --beat %s) = %v, want ok %v (a refusal naming --job-ttl)", tt.ttl, tt.beat, err, tt.ok)
		}
	}
	for ttl, want := range map[time.Duration]time.Duration{0: config.DefaultJobTTL, 6 * time.Second: 6 * time.Second} {
		cfg, err := devConfig(Options{JobTTL: ttl}, namesFor(""), sandbox.State{}, "", "tidegate-apps", "", "")
		if err != nil || cfg.JobTTL != want {
			t.Errorf("devConfig(--job-ttl %s) = JobTTL %s, %v; want %s", ttl, cfg.JobTTL, err, want)
		}
	}
}
