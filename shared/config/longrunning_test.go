package config

import (
	"strings"
	"testing"
)

func TestParseLongRunning(t *testing.T) {
	for _, tt := range []struct {
		holds, per string
		want       LongRunningSettings
	}{
		{"", "", LongRunningSettings{PerTenant: DefaultLongRunningPerTenant}},
		{"true", "", LongRunningSettings{HoldsSlot: true, PerTenant: DefaultLongRunningPerTenant}},
		{"false", "0", LongRunningSettings{}},
		{"", "1000", LongRunningSettings{PerTenant: 1000}},
	} {
		m := full()
		m[EnvLongRunningHoldsSlot], m[EnvLongRunningPerTenant] = tt.holds, tt.per
		c, err := Parse(env(m))
		if err != nil || c.LongRunning != tt.want {
			t.Errorf("Parse(%s=%q, %s=%q) = %+v, %v; want %+v", EnvLongRunningHoldsSlot, tt.holds, EnvLongRunningPerTenant, tt.per,
				c.LongRunning, err, tt.want)
		}
	}
	for name, bad := range map[string][]string{
		EnvLongRunningHoldsSlot: {"maybe", "2"},
		EnvLongRunningPerTenant: {"-1", "1001", "five", "2.5"},
		EnvDrainReadBudget:      {"0", "-5", "100001", "lots"},
	} {
		for _, v := range bad {
			m := full()
			m[name] = v
			if _, err := Parse(env(m)); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("Parse(%s=%q) = %v, want an error naming %s", name, v, err, name)
			}
		}
	}
}

func TestParseDrainReadBudget(t *testing.T) {
	for in, want := range map[string]int{"": 0, "250": 250, "100000": 100_000} {
		m := full()
		m[EnvDrainReadBudget] = in
		if c, err := Parse(env(m)); err != nil || c.DrainReadBudget != want {
			t.Errorf("Parse(%s=%q).DrainReadBudget = %d, %v; want %d", EnvDrainReadBudget, in, c.DrainReadBudget, err, want)
		}
	}
}
