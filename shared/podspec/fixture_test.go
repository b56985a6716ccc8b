package podspec

import (
	"os"
	"os/exec"
	"testing"
)

// fixture is the Launch the golden files are built from; tests change copies of it.
func fixture() Launch {
	return Launch{
		Org:           "acme",
		App:           "support-bot",
		Host:          "support-bot-r7-0a1b2c3d",
		Release:       7,
		Namespace:     "tidegate-apps",
		Stack:         "tidegate-prod",
		SourcesURL:    "https://sources.example/acme/support-bot/7.tar.gz?X-Amz-Expires=900&X-Amz-Signature=0f0f",
		SourcesSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Env: map[string]string{
			"OPENAI_API_KEY": "sk-fixture-openai",
			"GREETING":       "it's $HOME\nand `more`",
		},
		HostToken:   "htk_fixture_token",
		RegisterURL: "https://api.tidegate.example/api/v1/hosts/support-bot-r7-0a1b2c3d/register",
	}
}

// needTools skips a test when a tool it runs is missing here, and fails it in CI, where every
// machine has them.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not on PATH: %v", tool, err)
			}
			t.Skipf("%s is not on PATH: %v", tool, err)
		}
	}
}
