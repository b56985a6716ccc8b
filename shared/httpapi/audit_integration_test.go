package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestEveryChangeIsAudited: every route by which a principal changes anything (every route of
// the contract but the reads, the open ones, the dry run and a host's own registration) leaves exactly one audit record per request, with
// its outcome, whether the change was made or refused; a read leaves none. A tenant reads only
// its own records, whatever it asks; the operator reads every tenant's.
func TestEveryChangeIsAudited(t *testing.T) {
	tables, db := testenv.Tables(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	audit := dynamo.NewAuditStore(db, tables.Control, time.Hour)
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	api := served(t, httpapi.Deps{
		Principals: tenants, Jobs: dynamo.NewJobStore(db, tables), Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Regions: []string{"us-east-1"}, Audit: audit,
	})
	key := func(name string, role tenancy.Role, operator bool) string {
		t.Helper()
		if err := tenants.PutTenant(context.Background(), tenancy.Tenant{Name: name, Org: name, Namespaces: []string{"ns-" + name}, Role: role, Operator: operator, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		k, _ := tenancy.NewKey()
		if err := tenants.AddKey(context.Background(), name, k, time.Now()); err != nil {
			t.Fatal(err)
		}
		return k
	}
	admin, other, operator := key("a", tenancy.RoleAdmin, false), key("b", tenancy.RoleAdmin, false), key("ops", tenancy.RoleAdmin, true)
	do := func(k, method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+k)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	wildcard := regexp.MustCompile(`\{[^}]+\}`)
	want := map[string]int{} // action → status answered
	for _, r := range httpapi.Routes() {
		// A host registering itself is a host, with its release's own token, not a principal.
		if r.Open || r.Method == "GET" || r.Path == "/api/v1/manifests/validate" || r.Path == "/api/v1/hosts/{host}/register" {
			continue
		}
		action := r.Method + " " + r.Path
		code, _ := do(admin, r.Method, wildcard.ReplaceAllString(r.Path, "x1"), "{}")
		want[action] = code
	}
	if len(want) < 20 {
		t.Fatalf("%d changing routes exercised, want every one of the contract's (more than 20)", len(want))
	}
	do(admin, "GET", "/api/v1/jobs", "")
	status, body := do(admin, "GET", "/api/v1/audit?limit=1000", "")
	if status != 200 {
		t.Fatalf("GET /api/v1/audit = %d %s", status, body)
	}
	got := map[string][]string{}
	for _, m := range regexp.MustCompile(`"action":"([^"]+)","path":"[^"]*","status":(\d+)`).FindAllStringSubmatch(body, -1) {
		got[m[1]] = append(got[m[1]], m[2])
	}
	for action, code := range want {
		if recs := got[action]; len(recs) != 1 || recs[0] != fmt.Sprint(code) {
			t.Errorf("%s (answered %d): audit records %v, want exactly one with status %d", action, code, recs, code)
		}
	}
	for action := range got {
		if _, ok := want[action]; !ok {
			t.Errorf("%s is audited, but is not a change", action)
		}
	}
	// Hostile: b sees none of a's, however it asks; the operator sees a's.
	if status, body := do(other, "GET", "/api/v1/audit?limit=1000", ""); status != 200 || strings.Contains(body, `"tenant":"a"`) {
		t.Errorf("b's audit log = %d %.300s, want none of a's records", status, body)
	}
	if status, _ := do(other, "GET", "/api/v1/audit?tenant=a", ""); status != 400 {
		t.Errorf("b asking for a's audit log = %d, want 400", status)
	}
	_, page := do(admin, "GET", "/api/v1/audit?limit=1", "")
	cursor := regexp.MustCompile(`"next_cursor":"([^"]+)"`).FindStringSubmatch(page)
	if cursor == nil {
		t.Fatalf("a's first page of one = %s, want a next_cursor", page)
	}
	if status, body := do(other, "GET", "/api/v1/audit?cursor="+cursor[1], ""); status != 400 {
		t.Errorf("b replaying a's cursor = %d %.200s, want 400, never a's records", status, body)
	}
	if status, body := do(operator, "GET", "/api/v1/audit?tenant=a&action="+strings.ReplaceAll("POST /api/v1/jobs", " ", "%20"), ""); status != 200 || !strings.Contains(body, `"tenant":"a"`) {
		t.Errorf("the operator reading a's submissions = %d %.200s, want them", status, body)
	}
	// order=newest reads the same records the other way round, a page at a time.
	ats := func(order string) []string {
		var out []string
		for cursor := ""; ; {
			status, body := do(admin, "GET", "/api/v1/audit?limit=7&order="+order+"&cursor="+url.QueryEscape(cursor), "")
			if status != 200 {
				t.Fatalf("GET /api/v1/audit order=%s = %d %s", order, status, body)
			}
			for _, m := range regexp.MustCompile(`"at":"([^"]+)"`).FindAllStringSubmatch(body, -1) {
				out = append(out, m[1])
			}
			next := regexp.MustCompile(`"next_cursor":"([^"]+)"`).FindStringSubmatch(body)
			if next == nil {
				return out
			}
			cursor = next[1]
		}
	}
	oldest, newest := ats("oldest"), ats("newest")
	slices.Reverse(newest)
	if len(oldest) < 20 || !slices.Equal(oldest, newest) {
		t.Errorf("a's log newest first, turned round = %v; want it oldest first, %v", newest, oldest)
	}
	if status, _ := do(admin, "GET", "/api/v1/audit?order=sideways", ""); status != 400 {
		t.Errorf("order=sideways = %d, want 400", status)
	}
}
