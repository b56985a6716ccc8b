package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckNamespaces(t *testing.T) {
	c := mustChecker(t, Config{})
	configMap := func(metadata any) map[string]any {
		m := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "b"}}
		if metadata != nil {
			m["metadata"] = metadata
		}
		return m
	}
	tests := []struct {
		name       string
		doc        map[string]any
		defaultNS  string
		want       []located
		wantNS     any
		wantCopied bool
	}{
		{"its own namespace", configMap(map[string]any{"name": "c", "namespace": "team-b"}), "team-a", nil, "team-b", false},
		{"another namespace", configMap(map[string]any{"name": "c", "namespace": "kube-system"}), "team-a", []located{{0, "metadata.namespace"}}, "kube-system", false},
		{"none, so the default", configMap(map[string]any{"name": "c"}), "team-a", nil, "team-a", true},
		{"empty, so the default", configMap(map[string]any{"name": "c", "namespace": ""}), "team-b", nil, "team-b", true},
		{"no metadata at all", configMap(nil), "team-a", []located{{0, "metadata.name"}}, "team-a", true},
		{"none, and a default not the tenant's", configMap(map[string]any{"name": "c"}), "kube-system", []located{{0, "metadata.namespace"}}, "kube-system", true},
		{"none, and no default", configMap(map[string]any{"name": "c"}), "", []located{{0, "metadata.namespace"}}, nil, false},
		{"not a string", configMap(map[string]any{"name": "c", "namespace": 7.0}), "team-a", []located{{0, "metadata.namespace"}}, 7.0, false},
		{"metadata not an object", configMap("c"), "team-a", []located{{0, "metadata"}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tenantRequest(tt.doc)
			req.DefaultNamespace = tt.defaultNS
			res := c.Check(req)
			if diff := cmp.Diff(tt.want, fieldsOf(res.Violations)); diff != "" {
				t.Errorf("Check(ConfigMap, %s) fields (-want +got):\n%s\nviolations: %v", tt.name, diff, res.Violations)
			}
			got, _ := res.Manifests[0]["metadata"].(map[string]any)
			if got["namespace"] != tt.wantNS {
				t.Errorf("Check(ConfigMap, %s) normalised namespace = %v, want %v", tt.name, got["namespace"], tt.wantNS)
			}
			// Filling in the namespace must not write into the caller's maps.
			in, _ := tt.doc["metadata"].(map[string]any)
			if tt.wantCopied && in["namespace"] == tt.wantNS && tt.wantNS != "" {
				t.Errorf("Check(ConfigMap, %s) wrote the namespace into the request's manifest", tt.name)
			}
		})
	}
}
