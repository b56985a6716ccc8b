package config

import (
	"strings"
	"testing"
)

// TestMaxQueuedPerTenant: the cap of a tenant's queued jobs is DefaultMaxQueuedPerTenant when
// unset, 0 (no cap) when set so, and a whole number up to MostQueuedPerTenant; anything else is
// refused naming the variable.
func TestMaxQueuedPerTenant(t *testing.T) {
	for in, want := range map[string]int{"": DefaultMaxQueuedPerTenant, "0": 0, "250": 250, "10000000": MostQueuedPerTenant} {
		var c Config
		if err := c.ApplyTunables(env(map[string]string{EnvMaxQueuedPerTenant: in})); err != nil || c.MaxQueuedPerTenant != want {
			t.Errorf("ApplyTunables(%s=%q) = %d, %v; want %d", EnvMaxQueuedPerTenant, in, c.MaxQueuedPerTenant, err, want)
		}
	}
	for _, in := range []string{"-1", "lots", "10000001", "1.5"} {
		var c Config
		if err := c.ApplyTunables(env(map[string]string{EnvMaxQueuedPerTenant: in})); err == nil || !strings.Contains(err.Error(), EnvMaxQueuedPerTenant) {
			t.Errorf("ApplyTunables(%s=%q) = %v, want an error naming it", EnvMaxQueuedPerTenant, in, err)
		}
	}
}
