package apps

import (
	"regexp"
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"web", "a", "agent-2", "9lives", strings.Repeat("a", MaxNameLen)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "Web", "-web", "web-", "we_b", "web.app", strings.Repeat("a", MaxNameLen+1)} {
		err := CheckName(bad)
		if err == nil || !strings.Contains(err.Error(), "at most 40") {
			t.Errorf("CheckName(%q) = %v, want an error that names the limit of 40", bad, err)
		}
	}
	if err := CheckName("plan"); err == nil || !strings.Contains(err.Error(), "plan preview") {
		t.Errorf(`CheckName("plan") = %v, want an error saying the name is the plan preview's`, err)
	}
}

var label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func TestHostName(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	got := HostName("acme", "web", 3, sha, "d1")
	if !regexp.MustCompile(`^web-r3-[0-9a-f]{8}$`).MatchString(got) {
		t.Errorf("HostName(web, 3, …) = %q, want web-r3-<8 hex>", got)
	}
	if again := HostName("acme", "web", 3, sha, "d1"); again != got {
		t.Errorf("HostName is not stable: %q then %q", got, again)
	}
	for name, other := range map[string]string{
		"another secrets digest":                      HostName("acme", "web", 3, sha, "d2"),
		"other sources":                               HostName("acme", "web", 3, strings.Repeat("cd", 32), "d1"),
		"sources and digest run together differently": HostName("acme", "web", 3, sha+"d", "1"),
		"another org":                                 HostName("umbrella", "web", 3, sha, "d1"),
	} {
		if other == got {
			t.Errorf("HostName with %s = %q, the same as before; want a new host", name, other)
		}
	}
	longest := HostName("acme", strings.Repeat("a", MaxNameLen), MaxRelease, sha, "")
	if len(longest) != 63 || !label.MatchString(longest) {
		t.Errorf("HostName(longest name, highest release) = %q (%d), want a DNS label of 63", longest, len(longest))
	}
}

func TestAppFailedAndStopped(t *testing.T) {
	tests := []struct {
		app             App
		failed, stopped bool
	}{
		{App{Release: 2, FailedRelease: 2, State: StateFailed}, true, false},
		{App{Release: 3, FailedRelease: 2, State: StateDeploying}, false, false},
		{App{Release: 1, State: StateStopped}, false, true},
		{App{Release: 1, State: StateLive}, false, false},
	}
	for _, tt := range tests {
		if tt.app.Failed() != tt.failed || tt.app.Stopped() != tt.stopped {
			t.Errorf("%+v: Failed() = %v, Stopped() = %v; want %v, %v", tt.app, tt.app.Failed(), tt.app.Stopped(), tt.failed, tt.stopped)
		}
	}
}

func TestCheckSecretName(t *testing.T) {
	for _, ok := range []string{"API_KEY", "_X", "A1", strings.Repeat("A", MaxSecretName)} {
		if err := CheckSecretName(ok); err != nil {
			t.Errorf("CheckSecretName(%q) = %v, want nil", ok, err)
		}
	}
	tests := map[string]string{
		"":                                   "environment variable",
		"api_key":                            "environment variable",
		"1KEY":                               "environment variable",
		"KEY-2":                              "environment variable",
		"KEY NAME":                           "environment variable",
		strings.Repeat("A", MaxSecretName+1): "at most 128",
		"TIDEGATE_HOST_TOKEN":                "TIDEGATE_",
	}
	for name, want := range tests {
		if err := CheckSecretName(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSecretName(%q) = %v, want an error saying %q", name, err, want)
		}
	}
}

func TestCheckSecretValue(t *testing.T) {
	if err := CheckSecretValue(strings.Repeat("v", MaxSecretValue)); err != nil {
		t.Errorf("CheckSecretValue(16 KiB) = %v, want nil", err)
	}
	if err := CheckSecretValue(""); err != nil {
		t.Errorf("CheckSecretValue(empty) = %v, want nil", err)
	}
	secret := "hunter2\x00" + strings.Repeat("s", 10)
	for _, bad := range []string{strings.Repeat("v", MaxSecretValue+1), secret} {
		err := CheckSecretValue(bad)
		if err == nil {
			t.Errorf("CheckSecretValue(%d bytes) accepted it", len(bad))
			continue
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "vvvv") {
			t.Errorf("CheckSecretValue's error %q repeats the value", err)
		}
	}
}

func TestSecretsDigest(t *testing.T) {
	const nothing = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" // SHA-256 of no bytes
	if got := SecretsDigest(nil); got != nothing {
		t.Errorf("SecretsDigest(none) = %s, want the digest of nothing", got)
	}
	one := SecretsDigest(map[string]string{"A": "fp1", "B": "fp2"})
	if again := SecretsDigest(map[string]string{"B": "fp2", "A": "fp1"}); again != one {
		t.Errorf("SecretsDigest depends on map order: %s then %s", one, again)
	}
	for name, other := range map[string]map[string]string{
		"a changed value":   {"A": "fp1", "B": "fp3"},
		"a renamed secret":  {"A": "fp1", "C": "fp2"},
		"a removed secret":  {"A": "fp1"},
		"name and fp mixed": {"A": "fp1", "Bf": "p2"},
	} {
		if SecretsDigest(other) == one {
			t.Errorf("SecretsDigest with %s did not change", name)
		}
	}
}

func TestIsPodUID(t *testing.T) {
	for s, want := range map[string]bool{
		"6f1c2a9e-0b7d-4c1e-9a52-3d8e4f1b2c3a":   true,
		"6F1C2A9E-0B7D-4C1E-9A52-3D8E4F1B2C3A":   false, // the API server writes them lowercase
		"6f1c2a9e0b7d4c1e9a523d8e4f1b2c3a":       false,
		"$(TIDEGATE_POD_UID)":                    false, // a URL the kubelet did not expand
		"":                                       false,
		"6f1c2a9e-0b7d-4c1e-9a52-3d8e4f1b2c3a\n": false,
	} {
		if got := IsPodUID(s); got != want {
			t.Errorf("IsPodUID(%q) = %v, want %v", s, got, want)
		}
	}
}
