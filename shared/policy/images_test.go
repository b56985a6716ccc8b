package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQualifyImage(t *testing.T) {
	tests := map[string]string{
		"nginx":                                 "docker.io/library/nginx",
		"nginx:1.27":                            "docker.io/library/nginx:1.27",
		"nginx@sha256:abc":                      "docker.io/library/nginx@sha256:abc",
		"bitnami/redis:7":                       "docker.io/bitnami/redis:7",
		"docker.io/nginx":                       "docker.io/library/nginx",
		"index.docker.io/library/nginx":         "docker.io/library/nginx",
		"ghcr.io/acme/train:1":                  "ghcr.io/acme/train:1",
		"localhost/x":                           "localhost/x",
		"localhost:5000/x":                      "localhost:5000/x",
		"registry:5000/x":                       "registry:5000/x",
		"Registry/x":                            "Registry/x",
		"123.dkr.ecr.us-east-1.amazonaws.com/x": "123.dkr.ecr.us-east-1.amazonaws.com/x",
	}
	for in, want := range tests {
		if got := qualifyImage(in); got != want {
			t.Errorf("qualifyImage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnderPrefix(t *testing.T) {
	tests := []struct {
		image, prefix string
		want          bool
	}{
		{"ghcr.io/acme/train:1", "ghcr.io/acme", true},
		{"ghcr.io/acme/train:1", "ghcr.io/acme/", true},
		{"ghcr.io/acme-evil/train:1", "ghcr.io/acme", false},
		{"ghcr.io.evil.com/acme/train", "ghcr.io", false},
		{"ghcr.io/acme/train:1", "ghcr.io/acme/train", true},
		{"ghcr.io/acme/train@sha256:abc", "ghcr.io/acme/train", true},
		{"ghcr.io/acme/trainer", "ghcr.io/acme/train", false},
		{"docker.io/library/nginx:1", "docker.io/library/nginx", true},
		{"ghcr.io/acme", "ghcr.io/acme", true},
	}
	for _, tt := range tests {
		if got := underPrefix(tt.image, tt.prefix); got != tt.want {
			t.Errorf("underPrefix(%q, %q) = %v, want %v", tt.image, tt.prefix, got, tt.want)
		}
	}
}

func TestCheckTrustedRegistries(t *testing.T) {
	c := mustChecker(t, Config{TrustedRegistries: []string{"ghcr.io/acme", "docker.io/library/nginx"}})
	tests := []struct {
		name   string
		mutate func(s map[string]any)
		want   []located
	}{
		{"trusted", func(map[string]any) {}, nil},
		{"bare nginx is docker.io/library/nginx", func(s map[string]any) { at(s, "containers", 0)["image"] = "nginx:1.27" }, nil},
		{"bare redis is not", func(s map[string]any) { at(s, "containers", 0)["image"] = "redis" },
			[]located{{0, "spec.containers[0].image"}}},
		{"a look-alike organisation", func(s map[string]any) { at(s, "containers", 0)["image"] = "ghcr.io/acme-evil/x" },
			[]located{{0, "spec.containers[0].image"}}},
		{"empty image", func(s map[string]any) { at(s, "containers", 0)["image"] = "" },
			[]located{{0, "spec.containers[0].image"}}},
		{"init and ephemeral containers", func(s map[string]any) {
			s["initContainers"] = []any{map[string]any{"name": "i", "image": "quay.io/x/y"}}
			s["ephemeralContainers"] = []any{map[string]any{"name": "e", "image": "busybox"}}
			// Compliant otherwise, so that only the registries speak.
			for _, p := range []string{"initContainers", "ephemeralContainers"} {
				at(s, p, 0)["securityContext"] = map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}
			}
		}, []located{{0, "spec.initContainers[0].image"}, {0, "spec.ephemeralContainers[0].image"}}},
		{"image volume", func(s map[string]any) {
			s["volumes"] = []any{map[string]any{"name": "model", "image": map[string]any{"reference": "huggingface.co/x"}}}
		}, []located{{0, "spec.volumes[0].image.reference"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := fromYAML(t, goodPodSpec)
			tt.mutate(spec)
			res := c.Check(tenantRequest(workloads[0].wrap(spec)))
			if diff := cmp.Diff(tt.want, fieldsOf(res.Violations)); diff != "" {
				t.Errorf("Check(Pod, %s) fields (-want +got):\n%s\nviolations: %v", tt.name, diff, res.Violations)
			}
		})
	}
}
