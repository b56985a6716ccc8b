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
		{"another namespace", configMap(map[string]any{"name": "c", "namespace": "team-z"}), "team-a", []located{{0, "metadata.namespace"}}, "team-z", false},
		{"none, so the default", configMap(map[string]any{"name": "c"}), "team-a", nil, "team-a", true},
		{"empty, so the default", configMap(map[string]any{"name": "c", "namespace": ""}), "team-b", nil, "team-b", true},
		{"no metadata at all", configMap(nil), "team-a", []located{{0, "metadata.name"}}, "team-a", true},
		{"none, and a default not the tenant's", configMap(map[string]any{"name": "c"}), "team-z", []located{{0, "metadata.namespace"}}, "team-z", true},
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

// A reserved namespace is refused even to a tenant whose record holds it: the cluster's own
// (kube-*), default, and the hosted apps'. The message is tenancy's, and names the tenant's
// other namespaces.
func TestCheckReservedNamespaces(t *testing.T) {
	c := mustChecker(t, Config{AppsNamespace: "tidegate-apps"})
	configMap := func(ns string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": ns}}
	}
	held := []string{"team-a", "kube-system", "kube-public", "default", "tidegate-apps"}
	tests := []struct {
		name      string
		doc       map[string]any
		defaultNS string
		want      string // the message; "" when allowed
	}{
		{"kube-system", configMap("kube-system"), "team-a", `namespace "kube-system" belongs to the cluster itself (kube-*); choose a namespace of the tenant's own, whatever the tenant's record says: use one of ["team-a"]`},
		{"kube-public", configMap("kube-public"), "team-a", `namespace "kube-public" belongs to the cluster itself (kube-*); choose a namespace of the tenant's own, whatever the tenant's record says: use one of ["team-a"]`},
		{"default", configMap("default"), "team-a", `namespace "default" is where unnamed objects land and belongs to no tenant; choose a namespace of the tenant's own, whatever the tenant's record says: use one of ["team-a"]`},
		{"the apps' namespace", configMap("tidegate-apps"), "team-a", `namespace "tidegate-apps" holds the hosted apps (TIDEGATE_APPS_NAMESPACE); choose a namespace of the tenant's own, whatever the tenant's record says: use one of ["team-a"]`},
		{"kube-system as the request's namespace", configMap(""), "kube-system", `namespace "kube-system" belongs to the cluster itself (kube-*); choose a namespace of the tenant's own, whatever the tenant's record says: use one of ["team-a"]`},
		{"the tenant's own", configMap("team-a"), "kube-system", ""},
		// kube-ish is not kube-*: only the prefix with its dash is the cluster's.
		{"a namespace only starting like kube", configMap("kubeflow"), "team-a", `namespace "kubeflow" is not one of this tenant's: use one of ["team-a" "kube-system" "kube-public" "default" "tidegate-apps"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Check(Request{Manifests: []map[string]any{tt.doc}, Namespaces: held, DefaultNamespace: tt.defaultNS})
			var want []Violation
			if tt.want != "" {
				want = []Violation{{Document: 0, Kind: "ConfigMap", Name: "c", Field: "metadata.namespace", Message: tt.want}}
			}
			if diff := cmp.Diff(want, res.Violations); diff != "" {
				t.Errorf("Check(ConfigMap in %s, tenant holding %v) violations (-want +got):\n%s", tt.name, held, diff)
			}
		})
	}
	// A tenant holding nothing but reserved namespaces hears only why.
	res := c.Check(Request{Manifests: []map[string]any{configMap("kube-system")}, Namespaces: []string{"kube-system"}})
	want := []Violation{{Document: 0, Kind: "ConfigMap", Name: "c", Field: "metadata.namespace",
		Message: `namespace "kube-system" belongs to the cluster itself (kube-*); choose a namespace of the tenant's own`}}
	if diff := cmp.Diff(want, res.Violations); diff != "" {
		t.Errorf("Check(ConfigMap in kube-system, tenant holding only kube-system) violations (-want +got):\n%s", diff)
	}
}
