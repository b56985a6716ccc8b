package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidegate/tidegate/shared/delivery"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/egress"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/policy"
	"github.com/tidegate/tidegate/shared/signing"
	"github.com/tidegate/tidegate/shared/tenancy"
	"github.com/tidegate/tidegate/shared/wake"
)

// hookStack is the API with webhooks on, the webhook worker on the same tables and queue, and
// keys for an admin, a member and a viewer of tenant ml, and an admin of tenant web.
type hookStack struct {
	api                   http.Handler
	worker                *delivery.Handler
	admin, member, viewer string
	webAdmin              string
	hookQueueURL          string
	sqs                   *sqs.Client
}

func newHookStack(t *testing.T, allowPrivate bool) *hookStack {
	t.Helper()
	tables, db := testenv.Tables(t)
	dispatchURL, q := testenv.Queue(t, "dispatch")
	hookURL, _ := testenv.Queue(t, "webhook")
	ctx := context.Background()
	tenants := dynamo.NewTenantStore(db, tables.Control)
	st := &hookStack{hookQueueURL: hookURL, sqs: q}
	now := time.Now()
	for _, k := range []struct {
		tenant string
		role   tenancy.Role
		key    *string
	}{{"ml", tenancy.RoleAdmin, &st.admin}, {"ml-members", tenancy.RoleMember, &st.member}, {"ml-viewers", tenancy.RoleViewer, &st.viewer}, {"web", tenancy.RoleAdmin, &st.webAdmin}} {
		if err := tenants.PutTenant(ctx, tenancy.Tenant{Name: k.tenant, Org: "acme", Namespaces: []string{"team-a", "team-b"}, Role: k.role, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		*k.key, _ = tenancy.NewKey()
		if err := tenants.AddKey(ctx, k.tenant, *k.key, now); err != nil {
			t.Fatal(err)
		}
	}
	checker, err := policy.NewChecker(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	hooks := dynamo.NewWebhookStore(db, tables, nil)
	queue := delivery.NewQueue(q, hookURL)
	st.api = served(t, httpapi.Deps{
		Principals: tenants, Jobs: dynamo.NewJobStore(db, tables), Templates: dynamo.NewTemplateStore(db, tables.Control),
		Policy: checker, Ringer: wake.New(q, dispatchURL), Regions: []string{"us-east-1"},
		Webhooks: hooks, WebhookQueue: queue, WebhooksAllowPrivate: allowPrivate,
	})
	st.worker = &delivery.Handler{
		Outbox: dynamo.NewOutboxStore(db, tables), Store: hooks, Queue: queue,
		Client: egress.NewClient(egress.Options{AllowPrivate: allowPrivate}), Log: slog.New(slog.DiscardHandler),
	}
	return st
}

func (st *hookStack) do(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = strings.NewReader(mustJSON(body))
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	st.api.ServeHTTP(rec, req)
	var out map[string]any
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", method, path, rec.Body)
		}
	}
	return rec.Code, out
}

// pump runs the webhook queue through the worker, as the event source mapping does, until done.
func (st *hookStack) pump(t *testing.T, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !done(); {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook queue did not get there within a minute")
		}
		testenv.Pump(t, st.sqs, st.hookQueueURL, st.worker.HandleSQS)
	}
}

// hookReceiver records what reaches it and answers 200.
type hookReceiver struct {
	mu  sync.Mutex
	got []http.Header
	bod [][]byte
	srv *httptest.Server
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.bod = append(r.got, req.Header.Clone()), append(r.bod, b)
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) n() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.got) }

func (r *hookReceiver) req(i int) (http.Header, []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[i], r.bod[i]
}

func verifyWith(t *testing.T, h http.Header, body []byte, secrets ...string) {
	t.Helper()
	var keys []signing.Secret
	for _, s := range secrets {
		k, err := signing.ParseSecret(s)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	err := signing.Verify(keys, h.Get(signing.HeaderID), h.Get(signing.HeaderTimestamp), h.Get(signing.HeaderSignature), body, time.Now())
	if err != nil {
		t.Errorf("signing.Verify with %d secret(s) refused %s: %v", len(keys), h.Get(signing.HeaderSignature), err)
	}
}

func TestWebhookRegistrationRefusals(t *testing.T) {
	st := newHookStack(t, false)
	good := map[string]any{"url": "https://hooks.example.com/tidegate", "events": []string{"job.queued"}}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range good {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"http", with("url", "http://hooks.example.com/"), "url"},
		{"no scheme", with("url", "hooks.example.com/x"), "url"},
		{"user info", with("url", "https://user:pw@hooks.example.com/"), "url"},
		{"fragment", with("url", "https://hooks.example.com/#x"), "url"},
		{"localhost", with("url", "https://localhost:8443/"), "url"},
		{"loopback", with("url", "https://127.0.0.1/"), "url"},
		{"metadata", with("url", "https://169.254.169.254/latest/"), "url"},
		{"private", with("url", "https://10.1.2.3/"), "url"},
		{"mapped loopback", with("url", "https://[::ffff:127.0.0.1]/"), "url"},
		{"unknown event", with("events", []string{"job.exploded"}), "events[0]"},
		{"no events", with("events", []string{}), "events"},
		{"another's namespace", with("namespace", "team-z"), "namespace"},
		{"short secret", with("secret", "whsec_c2hvcnQ="), "secret"},
		{"secret without prefix", with("secret", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"), "secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := st.do(t, "POST", "/api/v1/webhooks", st.admin, tt.body)
			if status != 400 {
				t.Fatalf("= %d %v, want 400", status, out)
			}
			fields, _ := out["fields"].([]any)
			var named []string
			for _, f := range fields {
				named = append(named, f.(map[string]any)["field"].(string))
			}
			if len(named) != 1 || named[0] != tt.field {
				t.Errorf("fields %v (%v), want exactly %s", named, out, tt.field)
			}
		})
	}
	for _, who := range []struct{ name, key string }{{"member", st.member}, {"viewer", st.viewer}} {
		if status, out := st.do(t, "POST", "/api/v1/webhooks", who.key, good); status != 403 {
			t.Errorf("a %s registering = %d %v, want 403", who.name, status, out)
		}
	}
	status, out := st.do(t, "POST", "/api/v1/webhooks", st.admin, with("secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
	if status != 201 || out["secret"] != "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" {
		t.Errorf("registering with the spec's example secret = %d %v, want 201 showing it", status, out)
	}
}

func TestWebhooksEndToEnd(t *testing.T) {
	st := newHookStack(t, true)
	rcv := newHookReceiver(t)
	status, created := st.do(t, "POST", "/api/v1/webhooks", st.admin, map[string]any{
		"url": rcv.srv.URL + "/hooks", "events": []string{"job.queued", "webhook.test"}, "namespace": "team-a",
	})
	if status != 201 {
		t.Fatalf("POST /api/v1/webhooks = %d %v, want 201", status, created)
	}
	id, secret := created["id"].(string), created["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the create answer's secret is %q, want whsec_…", secret)
	}
	status, got := st.do(t, "GET", "/api/v1/webhooks/"+id, st.viewer, nil)
	if status != 404 {
		t.Errorf("another tenant's viewer GET = %d %v, want 404", status, got)
	}
	status, got = st.do(t, "GET", "/api/v1/webhooks/"+id, st.admin, nil)
	if _, shown := got["secret"]; status != 200 || shown {
		t.Errorf("GET = %d %v, want 200 without the secret", status, got)
	}
	for _, path := range []string{"/api/v1/webhooks/" + id, "/api/v1/webhooks/" + id + "/deliveries"} {
		if status, out := st.do(t, "GET", path, st.webAdmin, nil); status != 404 {
			t.Errorf("tenant web GET %s = %d %v, want 404", path, status, out)
		}
	}
	for _, path := range []string{"/api/v1/webhooks/" + id + "/test", "/api/v1/webhooks/" + id + "/rotate-secret"} {
		if status, out := st.do(t, "POST", path, st.webAdmin, nil); status != 404 {
			t.Errorf("tenant web POST %s = %d %v, want 404", path, status, out)
		}
	}
	if status, out := st.do(t, "DELETE", "/api/v1/webhooks/"+id, st.webAdmin, nil); status != 404 {
		t.Errorf("tenant web DELETE = %d %v, want 404", status, out)
	}
	if status, list := st.do(t, "GET", "/api/v1/webhooks", st.webAdmin, nil); status != 200 || len(list["items"].([]any)) != 0 {
		t.Errorf("tenant web's list = %d %v, want none", status, list)
	}

	// A job submitted in the webhook's namespace reaches it signed; one in another namespace does not.
	for _, ns := range []string{"team-b", "team-a"} {
		job := map[string]any{"manifest": restrictedJob(nil), "region": "us-east-1", "namespace": ns}
		if status, out := st.do(t, "POST", "/api/v1/jobs", st.admin, job); status != 202 {
			t.Fatalf("POST /api/v1/jobs = %d %v", status, out)
		}
	}
	st.pump(t, func() bool { return rcv.n() >= 1 })
	h, body := rcv.req(0)
	verifyWith(t, h, body, secret)
	var ev struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Type != "job.queued" || ev.Data["namespace"] != "team-a" {
		t.Errorf("delivered %s (%v), want job.queued in team-a", body, err)
	}

	// Rotation: the new secret is shown once, and for 24 h both sign.
	status, rotated := st.do(t, "POST", "/api/v1/webhooks/"+id+"/rotate-secret", st.admin, nil)
	if status != 200 || rotated["secret"] == secret {
		t.Fatalf("rotate-secret = %d %v, want 200 with a new secret", status, rotated)
	}
	status, tested := st.do(t, "POST", "/api/v1/webhooks/"+id+"/test", st.admin, nil)
	if status != 202 {
		t.Fatalf("test = %d %v, want 202", status, tested)
	}
	st.pump(t, func() bool { return rcv.n() >= 2 })
	h, body = rcv.req(1)
	if sigs := strings.Fields(h.Get(signing.HeaderSignature)); len(sigs) != 2 || !strings.HasPrefix(sigs[0], "v1,") || !strings.HasPrefix(sigs[1], "v1,") {
		t.Errorf("after a rotation webhook-signature = %q, want two v1 entries", h.Get(signing.HeaderSignature))
	}
	verifyWith(t, h, body, secret)
	verifyWith(t, h, body, rotated["secret"].(string))
	if !bytes.Contains(body, []byte(`"type":"webhook.test"`)) {
		t.Errorf("the test delivery's body is %s, want a webhook.test event", body)
	}

	// The log shows both deliveries with their attempts; a redelivery keeps the webhook-id.
	status, log := st.do(t, "GET", "/api/v1/webhooks/"+id+"/deliveries?limit=1", st.viewer, nil)
	if status != 404 {
		t.Errorf("another tenant's deliveries = %d %v, want 404", status, log)
	}
	status, log = st.do(t, "GET", "/api/v1/webhooks/"+id+"/deliveries?limit=1", st.admin, nil)
	items, _ := log["items"].([]any)
	if status != 200 || len(items) != 1 || log["next_cursor"] == nil {
		t.Fatalf("deliveries?limit=1 = %d %v, want one and a cursor", status, log)
	}
	newest := items[0].(map[string]any)
	attempts := newest["attempts"].([]any)
	first := attempts[0].(map[string]any)
	if newest["event_type"] != "webhook.test" || newest["status"] != "succeeded" || newest["attempt_count"] != float64(1) ||
		first["status_code"] != float64(200) || first["at"] == nil || first["latency_ms"] == nil || newest["next_attempt_at"] != nil {
		t.Errorf("newest delivery = %v, want the test, succeeded on attempt 1 with a 200", newest)
	}
	status, rest := st.do(t, "GET", "/api/v1/webhooks/"+id+"/deliveries?cursor="+log["next_cursor"].(string), st.admin, nil)
	if items, _ := rest["items"].([]any); status != 200 || len(items) != 1 || items[0].(map[string]any)["event_type"] != "job.queued" {
		t.Errorf("the next page = %d %v, want the job.queued delivery", status, rest)
	}
	deliveryID := newest["id"].(string)
	if status, out := st.do(t, "POST", "/api/v1/webhooks/"+id+"/deliveries/"+deliveryID+"/redeliver", st.admin, nil); status != 202 {
		t.Fatalf("redeliver = %d %v, want 202", status, out)
	}
	if status, out := st.do(t, "POST", "/api/v1/webhooks/"+id+"/deliveries/msg_nothing/redeliver", st.admin, nil); status != 404 {
		t.Errorf("redelivering an unknown delivery = %d %v, want 404", status, out)
	}
	st.pump(t, func() bool { return rcv.n() >= 3 })
	if h, _ := rcv.req(2); h.Get(signing.HeaderID) != deliveryID {
		t.Errorf("the redelivery's webhook-id = %s, want %s", h.Get(signing.HeaderID), deliveryID)
	}
	_, log = st.do(t, "GET", "/api/v1/webhooks/"+id+"/deliveries?limit=1", st.admin, nil)
	if n := log["items"].([]any)[0].(map[string]any)["attempt_count"]; n != float64(2) {
		t.Errorf("after a redelivery attempt_count = %v, want 2", n)
	}

	if status, _ := st.do(t, "DELETE", "/api/v1/webhooks/"+id, st.admin, nil); status != 204 {
		t.Errorf("DELETE = %d, want 204", status)
	}
	if status, _ := st.do(t, "GET", "/api/v1/webhooks/"+id, st.admin, nil); status != 404 {
		t.Errorf("GET after DELETE = %d, want 404", status)
	}
}
