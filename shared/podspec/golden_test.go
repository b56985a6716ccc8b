package podspec

import (
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from what Pod and Secret build")

const goldenHeader = "# What Pod/Secret build from fixture(); rewrite with go test ./shared/podspec -run Golden -update\n"

func TestPodGolden(t *testing.T) {
	got, err := Pod(fixture())
	if err != nil {
		t.Fatalf("Pod(fixture()): %v", err)
	}
	compareGolden(t, "testdata/pod.golden.yaml", got, &corev1.Pod{})
}

func TestSecretGolden(t *testing.T) {
	got, err := Secret(fixture())
	if err != nil {
		t.Fatalf("Secret(fixture()): %v", err)
	}
	compareGolden(t, "testdata/secret.golden.yaml", got, &corev1.Secret{})
}

// compareGolden decodes the golden file at path into want and diffs it with got, whole; with
// -update it writes got there instead.
func compareGolden[T any](t *testing.T, path string, got, want *T) {
	t.Helper()
	if *update {
		out, err := yaml.Marshal(got)
		if err != nil {
			t.Fatalf("marshalling %T: %v", got, err)
		}
		if err := os.WriteFile(path, append([]byte(goldenHeader), out...), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if err := yaml.UnmarshalStrict(raw, want); err != nil {
		t.Fatalf("decoding %s into %T: %v", path, want, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%T differs from %s (-golden +built); if the change is meant, rerun with -update:\n%s", got, path, diff)
	}
}
