package devstack

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/config"
)

// TestTakenSettings: the tunables set in the environment are listed, in config.Tunables' order;
// a variable that is no tunable, or one set empty, is not.
func TestTakenSettings(t *testing.T) {
	env := map[string]string{config.EnvRateLimit: "9", config.EnvPolicyMaxGPUs: "1", "TIDEGATE_DEV_ADDR": "127.0.0.1:1", config.EnvDefaultQuota: ""}
	got := taken(Options{Env: func(name string) string { return env[name] }})
	var want []string
	for _, name := range config.Tunables {
		if name == config.EnvRateLimit || name == config.EnvPolicyMaxGPUs {
			want = append(want, name+"="+env[name])
		}
	}
	if len(want) != 2 {
		t.Fatalf("config.Tunables lacks %s or %s", config.EnvRateLimit, config.EnvPolicyMaxGPUs)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("taken (-want +got):\n%s", diff)
	}
}
