package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/ratelimit"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// throttleStack is one API process on DynamoDB Local with a clock the test moves, a default
// budget of one request a second in bursts of 10, and tenants with their credentials: ml has two
// keys and an IAM caller, ops one key, and slow and big set their own budgets.
type throttleStack struct {
	api  http.Handler
	now  time.Time
	keys map[string]string // by name: ml, ml2, ops, slow, big
}

const mlCaller = "arn:aws:iam::123456789012:role/ml-ci"

var defaultBudget = ratelimit.Limit{Rate: 1, Burst: 10}

func newThrottleStack(t *testing.T) *throttleStack {
	t.Helper()
	tables, db := testenv.Tables(t)
	store := dynamo.NewTenantStore(db, tables.Control)
	ctx := context.Background()
	st := &throttleStack{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), keys: map[string]string{}}
	for _, tn := range []struct {
		tenant tenancy.Tenant
		keys   []string
	}{
		{tenancy.Tenant{Name: "ml"}, []string{"ml", "ml2"}},
		{tenancy.Tenant{Name: "ops"}, []string{"ops"}},
		{tenancy.Tenant{Name: "slow", RateLimit: 0.5, RateBurst: 2}, []string{"slow"}},
		{tenancy.Tenant{Name: "big", RateBurst: 30}, []string{"big"}},
	} {
		tn.tenant.Org, tn.tenant.Namespaces, tn.tenant.Role, tn.tenant.CreatedAt = "acme", []string{"team-a", "team-b"}, tenancy.RoleMember, st.now
		if err := store.PutTenant(ctx, tn.tenant); err != nil {
			t.Fatal(err)
		}
		for _, name := range tn.keys {
			st.keys[name], _ = tenancy.NewKey()
			if err := store.AddKey(ctx, tn.tenant.Name, st.keys[name], st.now); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := store.AddIAM(ctx, "ml", mlCaller, st.now); err != nil {
		t.Fatal(err)
	}
	st.api = served(t, httpapi.Deps{
		Principals: store, Jobs: dynamo.NewJobStore(db, tables), Regions: []string{"us-east-1", "us-west-2"},
		Rate: defaultBudget, Now: func() time.Time { return st.now },
		IAMCaller: func(r *http.Request) (string, bool) {
			arn := r.Header.Get("X-Test-IAM")
			return arn, arn != ""
		},
	})
	return st
}

// sessions are two sessions of ml's mapped role, each a caller's own choice of name.
var sessions = map[string]string{
	"session1": "arn:aws:sts::123456789012:assumed-role/ml-ci/build-1",
	"session2": "arn:aws:sts::123456789012:assumed-role/ml-ci/build-2",
}

// get sends GET path with the named key (or, for "iam", as ml's IAM caller, and for "session1"
// and "session2" as a session of its role) and answers the response and its decoded body.
func (st *throttleStack) get(t *testing.T, who, path string) (*http.Response, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if who == "iam" {
		req.Header.Set("X-Test-IAM", mlCaller)
	} else if arn, ok := sessions[who]; ok {
		req.Header.Set("X-Test-IAM", arn)
	} else {
		req.Header.Set("Authorization", "Bearer "+st.keys[who])
	}
	rec := httptest.NewRecorder()
	st.api.ServeHTTP(rec, req)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("GET %s as %s: body is not JSON: %q", path, who, rec.Body)
	}
	return rec.Result(), body
}

// okTimes sends GET path as who n times in the same instant, each of which must answer 200.
func (st *throttleStack) okTimes(t *testing.T, n int, who, path string) {
	t.Helper()
	for i := range n {
		if resp, body := st.get(t, who, path); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s as %s, request %d of %d in one instant = %d %v, want 200", path, who, i+1, n, resp.StatusCode, body)
		}
	}
}

// throttled checks that GET path as who answers 429 in the API's error shape with Retry-After
// retryAfter.
func (st *throttleStack) throttled(t *testing.T, who, path, retryAfter string) {
	t.Helper()
	resp, body := st.get(t, who, path)
	if resp.StatusCode != http.StatusTooManyRequests || body["error"] != "throttled" {
		t.Fatalf("GET %s as %s over its budget = %d %v, want 429 throttled", path, who, resp.StatusCode, body)
	}
	if got := resp.Header.Get("Retry-After"); got != retryAfter {
		t.Errorf("GET %s as %s over its budget: Retry-After %q, want %q", path, who, got, retryAfter)
	}
	if d, _ := body["detail"].(string); d == "" {
		t.Errorf("GET %s as %s over its budget: no detail in %v", path, who, body)
	}
	if id := resp.Header.Get("X-Request-Id"); id == "" || body["request_id"] != id {
		t.Errorf("GET %s as %s over its budget: request_id %v, X-Request-Id %q; want the same id", path, who, body["request_id"], id)
	}
}

const oneNamespace = "/api/v1/jobs?namespace=team-a" // costs one token

// TestThrottlePerCredential: a key over its budget is answered 429 while the same tenant's other
// key and IAM caller, and another tenant, go through in the same instant; a second later it has
// one token again.
func TestThrottlePerCredential(t *testing.T) {
	st := newThrottleStack(t)
	st.okTimes(t, defaultBudget.Burst, "ml", oneNamespace)
	st.throttled(t, "ml", oneNamespace, "1")
	st.okTimes(t, defaultBudget.Burst, "ml2", oneNamespace) // the tenant's second key has its own
	st.okTimes(t, defaultBudget.Burst, "iam", oneNamespace) // and so has its IAM caller
	st.okTimes(t, defaultBudget.Burst, "ops", oneNamespace)
	st.throttled(t, "ml2", oneNamespace, "1")
	st.throttled(t, "ops", oneNamespace, "1")

	st.now = st.now.Add(time.Second)
	st.okTimes(t, 1, "ml", oneNamespace)
	st.throttled(t, "ml", oneNamespace, "1")
}

// TestThrottleSessionsShareTheirRole: a caller cannot buy budget by naming new sessions of its
// role: every session takes from the role's one bucket.
func TestThrottleSessionsShareTheirRole(t *testing.T) {
	st := newThrottleStack(t)
	st.okTimes(t, defaultBudget.Burst/2, "session1", oneNamespace)
	st.okTimes(t, defaultBudget.Burst/2, "session2", oneNamespace)
	st.throttled(t, "session1", oneNamespace, "1")
	st.throttled(t, "session2", oneNamespace, "1")
	st.throttled(t, "iam", oneNamespace, "1")
	st.okTimes(t, 1, "ml", oneNamespace) // the tenant's key is another credential
}

// TestThrottleTenantOverride: a tenant's own rate and burst replace the default's, each alone.
func TestThrottleTenantOverride(t *testing.T) {
	st := newThrottleStack(t)
	st.okTimes(t, 2, "slow", oneNamespace)
	st.throttled(t, "slow", oneNamespace, "2") // one token at half a token a second
	st.okTimes(t, 30, "big", oneNamespace)
	st.throttled(t, "big", oneNamespace, "1") // the default rate, its own burst
	st.now = st.now.Add(2 * time.Second)
	st.okTimes(t, 1, "slow", oneNamespace)
	st.okTimes(t, 2, "big", oneNamespace)
}

// TestThrottleCostlyRoutes: the queue's stats over two regions take ten tokens, a listing of both
// the tenant's namespaces two, one narrowed to a namespace one.
func TestThrottleCostlyRoutes(t *testing.T) {
	st := newThrottleStack(t)
	st.okTimes(t, 1, "ml", "/api/v1/queue/stats")
	st.throttled(t, "ml", oneNamespace, "1")
	st.throttled(t, "ml", "/api/v1/queue/stats", "10")

	st.okTimes(t, 5, "ops", "/api/v1/jobs")
	st.throttled(t, "ops", oneNamespace, "1")
	st.now = st.now.Add(time.Second)
	st.throttled(t, "ops", "/api/v1/jobs", "1") // one token, two wanted
	st.okTimes(t, 1, "ops", oneNamespace)
}
