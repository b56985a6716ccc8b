package httpapi_test

import (
	"net/url"
	"testing"
)

// TestReadyTimeoutBounds: a job's ready_timeout is how long half a gang may hold room another
// tenant is waiting for, so a tenant may not name one past the operator's ceiling (30m by
// default), nor one too short or malformed; each is a 400 naming ready_timeout, and nothing is
// stored. A job that names none gets 5m, and one within the bounds keeps its own, by the jobs
// route and by the manifests route's query for a YAML body alike.
func TestReadyTimeoutBounds(t *testing.T) {
	st := newStack(t)
	for _, tt := range []struct{ given, want string }{
		{"", "5m0s"},
		{"90s", "1m30s"},
		{"30m", "30m0s"},
		{"31m", ""},
		{"720h", ""},
		{"0s", ""},
		{"-5m", ""},
		{"soon", ""},
	} {
		body := map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": "team-a"}
		if tt.given != "" {
			body["ready_timeout"] = tt.given
		}
		status, out := st.do(t, 0, "POST", "/api/v1/jobs", st.member, "application/json", mustJSON(body), nil)
		switch {
		case tt.want == "" && (status != 400 || !mentions(out, "ready_timeout")):
			t.Errorf("POST /api/v1/jobs with ready_timeout %q = %d %v, want 400 naming ready_timeout", tt.given, status, out)
		case tt.want != "" && (status != 202 || out["job"].(map[string]any)["ready_timeout"] != tt.want):
			t.Errorf("POST /api/v1/jobs with ready_timeout %q = %d %v, want 202 with ready_timeout %s", tt.given, status, out, tt.want)
		}
	}
	yaml := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  restartPolicy: Never\n" +
		"  securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}\n" +
		"  containers:\n  - name: main\n    image: busybox:1.36\n" +
		"    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n"
	for given, want := range map[string]int{"2h": 400, "10m": 202} {
		q := url.Values{"namespace": {"team-a"}, "region": {"us-east-1"}, "ready_timeout": {given}}
		if status, out := st.do(t, 0, "POST", "/api/v1/manifests?"+q.Encode(), st.member, "application/yaml", yaml, nil); status != want {
			t.Errorf("POST /api/v1/manifests?ready_timeout=%s with a YAML body = %d %v, want %d", given, status, out, want)
		}
	}
}
