package hosting

import (
	"cmp"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/podspec"
)

var update = flag.Bool("update", false, "rewrite testdata/pod-*.golden.yaml from what the beat builds")

// goldenRuntimes is a deployment's allow-list as TIDEGATE_APP_RUNTIMES spells it (the digests are
// the fixture's own).
const goldenRuntimes = "node22=docker.io/library/node:22-bookworm-slim@sha256:1111111111111111111111111111111111111111111111111111111111111111," +
	"python3.12=docker.io/library/python:3.12-slim-bookworm@sha256:2222222222222222222222222222222222222222222222222222222222222222," +
	"python3.13=docker.io/library/python:3.13-slim-bookworm@sha256:3333333333333333333333333333333333333333333333333333333333333333"

// goldenLaunches is, for each runtime of goldenRuntimes and for the default (""), the tidegate.json
// of an app that runs on it; "" for the default is an app without one.
var goldenLaunches = map[string]string{
	"":           "",
	"node22":     `{"runtime": "node22", "start": ["node", "server.js"], "ready": {"http_path": "/healthz", "port": 3000}}`,
	"python3.12": `{"runtime": "python3.12", "start": ["python3", "-u", "main.py"], "ready": {"http_path": "/healthz", "port": 8080}}`,
	"python3.13": `{"runtime": "python3.13", "start": ["uv", "run", "--frozen", "bot"], "ready": {"exec": ["python3", "-c", "import bot; bot.ready()"]}}`,
}

// TestPodPerRuntimeGolden: for each runtime the deployment offers, and the default, the pod the
// beat starts for an app whose tidegate.json names it: read as an upload reads it, run on that
// runtime's pinned image with the app's start command and readiness check, whole as the golden
// file has it.
func TestPodPerRuntimeGolden(t *testing.T) {
	runtimes, err := apps.ParseRuntimes(goldenRuntimes)
	if err != nil {
		t.Fatal(err)
	}
	h := &Hoster{Namespace: "tidegate-apps", Stack: "tidegate-prod", PublicURL: "https://api.tidegate.example", Runtimes: runtimes}
	for _, name := range append([]string{""}, runtimes.Names()...) {
		file, ok := goldenLaunches[name]
		if !ok {
			t.Errorf("runtime %s has no golden pod: add its tidegate.json to goldenLaunches and run with -update", name)
			continue
		}
		a := apps.App{Org: "acme", Name: "bot", Release: 4, SHA256: strings.Repeat("9f", 32)}
		var launch apps.Launch
		if file != "" {
			if launch, err = apps.ParseLaunch([]byte(file), runtimes.Names()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			a.Launch = &launch
		}
		l, err := h.launch(a, "bot-r4-0a1b2c3d", "https://sources.example/acme/bot/4.tar.gz?X-Amz-Signature=0f0f", "htk_fixture_token", map[string]string{"GREETING": "hi"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pod, err := podspec.Pod(l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		image := cmp.Or(runtimes[name], podspec.DefaultImage)
		app := pod.Spec.Containers[0]
		if app.Image != image || pod.Spec.InitContainers[0].Image != image {
			t.Errorf("%s: images %s and %s, want the runtime's %s", name, pod.Spec.InitContainers[0].Image, app.Image, image)
		}
		if !slices.Equal(app.Command[len(app.Command)-len(launch.Start):], launch.Start) {
			t.Errorf("%s: app command %q does not end with the start command %q", name, app.Command, launch.Start)
		}
		if (launch.Ready != nil) != (app.ReadinessProbe != nil) {
			t.Errorf("%s: readiness probe %+v for check %+v", name, app.ReadinessProbe, launch.Ready)
		}
		compareGolden(t, filepath.Join("testdata", "pod-"+cmp.Or(name, "default")+".golden.yaml"), pod)
	}
}

// compareGolden diffs got with the pod in the golden file at path, whole; with -update it writes
// got there instead.
func compareGolden(t *testing.T, path string, got *corev1.Pod) {
	t.Helper()
	if *update {
		out, err := yaml.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		header := "# The pod the beat starts for goldenLaunches' app on this runtime; rewrite with go test ./shared/hosting -run Golden -update\n"
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append([]byte(header), out...), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	var want corev1.Pod
	if err := yaml.UnmarshalStrict(raw, &want); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	if diff := gocmp.Diff(&want, got); diff != "" {
		t.Errorf("the pod differs from %s (-golden +built); if the change is meant, rerun with -update:\n%s", path, diff)
	}
}
