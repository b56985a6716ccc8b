package tenancy

import (
	"strings"
	"testing"
)

func TestCheckNamespaces(t *testing.T) {
	a := Tenant{Name: "team-a", Namespaces: []string{"ml-train", "ml-eval"}}
	c := Tenant{Name: "team-c", Namespaces: []string{"shared"}}
	rules := NamespaceRules{AppsNamespace: "tidegate-apps"}
	tests := []struct {
		name    string
		t       Tenant
		rules   NamespaceRules
		wantErr []string // what the error must say, each; none for no error
	}{
		{"namespaces of its own", Tenant{Name: "team-b", Namespaces: []string{"b-train"}}, rules, nil},
		{"kube-system", Tenant{Name: "team-b", Namespaces: []string{"kube-system"}}, rules, []string{`"kube-system"`, "kube-*", "choose"}},
		{"any kube- namespace", Tenant{Name: "team-b", Namespaces: []string{"kube-node-lease"}}, rules, []string{`"kube-node-lease"`}},
		{"default", Tenant{Name: "team-b", Namespaces: []string{"default"}}, rules, []string{`"default"`, "belongs to no tenant"}},
		{"the hosted apps' namespace", Tenant{Name: "team-b", Namespaces: []string{"tidegate-apps"}}, rules, []string{`"tidegate-apps"`, "TIDEGATE_APPS_NAMESPACE"}},
		{"the apps' namespace as configured", Tenant{Name: "team-b", Namespaces: []string{"hosts"}}, NamespaceRules{AppsNamespace: "hosts"}, []string{`"hosts"`}},
		{"tenant B takes tenant A's namespace", Tenant{Name: "team-b", Namespaces: []string{"b-train", "ml-train"}}, rules,
			[]string{`"ml-train"`, "tenant team-a", "--share-namespace"}},
		{"tenant B shares tenant A's namespace, saying so", Tenant{Name: "team-b", Namespaces: []string{"ml-train"}}, NamespaceRules{AppsNamespace: "tidegate-apps", Share: true}, nil},
		{"sharing never opens a reserved namespace", Tenant{Name: "team-b", Namespaces: []string{"kube-system"}}, NamespaceRules{Share: true}, []string{`"kube-system"`}},
		{"a tenant's own earlier record holds nothing against it", Tenant{Name: "team-a", Namespaces: []string{"ml-train", "ml-new"}}, rules, nil},
		{"every problem at once", Tenant{Name: "team-b", Namespaces: []string{"default", "ml-eval", "shared"}}, rules,
			[]string{`"default"`, `"ml-eval"`, "tenant team-a", `"shared"`, "tenant team-c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckNamespaces(tt.t, []Tenant{a, c}, tt.rules)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("CheckNamespaces(%v) = %v, want nil", tt.t.Namespaces, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckNamespaces(%v) = nil, want an error saying %q", tt.t.Namespaces, tt.wantErr)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("CheckNamespaces(%v) = %q, want it to say %q", tt.t.Namespaces, err, s)
				}
			}
		})
	}
}
