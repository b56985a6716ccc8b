package httpapi_test

import (
	"slices"
	"strings"
	"testing"
)

// TestStrictEnvelopeManifests sends POST /api/v1/manifests bodies whose keys encoding/json alone
// would have let through: one in the wrong case, and duplicates whose second value names a
// namespace that is not the tenant's. Each is a 400 naming the key, and nothing is stored.
func TestStrictEnvelopeManifests(t *testing.T) {
	st := newStack(t)
	job := mustJSON(restrictedJob(nil))
	// The member's namespaces are team-a and team-b; team-z stands for another tenant's.
	jobIn := func(ns string) string {
		return strings.Replace(job, `"metadata":{`, `"metadata":{"namespace":`+ns+`,`, 1)
	}
	tests := []struct {
		name, body, field string
	}{
		{"Manifests for manifests", `{"Manifests":[` + job + `],"namespace":"team-a"}`, "Manifests"},
		{"Namespace for namespace", `{"manifests":[` + job + `],"Namespace":"team-a"}`, "Namespace"},
		{"duplicate namespace, the second another tenant's", `{"manifests":[` + job + `],"namespace":"team-a","namespace":"team-z"}`, "namespace"},
		{"duplicate namespace, the first another tenant's", `{"manifests":[` + job + `],"namespace":"team-z","namespace":"team-a"}`, "namespace"},
		{"duplicate namespace, the second escaped", `{"manifests":[` + job + `],"namespace":"team-a","n\u0061mespace":"team-z"}`, "namespace"},
		{"duplicate manifests, the second in another tenant's namespace", `{"manifests":[` + job + `],"manifests":[` + jobIn(`"team-z"`) + `],"namespace":"team-a"}`, "manifests"},
		{"duplicate namespace inside a manifest", `{"manifests":[` + jobIn(`"team-a","namespace":"team-z"`) + `]}`, "manifests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/manifests", "/api/v1/manifests/validate"} {
				status, out := st.do(t, 0, "POST", path, st.member, "application/json", tt.body, nil)
				fields, _ := out["fields"].([]any)
				named := slices.ContainsFunc(fields, func(f any) bool { return strings.HasPrefix(f.(map[string]any)["field"].(string), tt.field) })
				if status != 400 || out["error"] != "invalid_request" || !named {
					t.Errorf("POST %s %s = %d %v, want 400 invalid_request naming %s", path, tt.body, status, out, tt.field)
				}
			}
		})
	}
	status, out := st.do(t, 0, "GET", "/api/v1/jobs", st.member, "", "", nil)
	if items, _ := out["items"].([]any); status != 200 || len(items) != 0 {
		t.Errorf("GET /api/v1/jobs after the refused bodies = %d %v, want 200 and no jobs", status, out)
	}
	// The same body with its keys given once and spelt right is taken.
	status, out = st.do(t, 0, "POST", "/api/v1/manifests", st.member, "application/json", `{"manifests":[`+job+`],"namespace":"team-a"}`, nil)
	if status != 202 {
		t.Errorf("POST /api/v1/manifests with exact keys = %d %v, want 202", status, out)
	}
}
