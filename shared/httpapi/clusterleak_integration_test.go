package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/jobs"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/outbox"
)

// refusal is what EKS answers a role its access entries do not cover: it names the functions'
// role, its session and the cluster's endpoint.
const refusal = `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods is forbidden: User \"arn:aws:sts::123456789012:assumed-role/tidegate-ApiRole-1AB2C3/tidegate-api\" cannot list resource \"pods\" in API group \"\" at https://0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com","reason":"Forbidden","code":403}`

// TestClusterErrorsDoNotLeak: when the cluster refuses the API's reads, a tenant's logs, events,
// pods and job view say that the cluster did not answer and give the request id; nothing of the
// refusal's text (the role's ARN, the cluster's host) reaches it. The log keeps the cause.
func TestClusterErrorsDoNotLeak(t *testing.T) {
	ctx := context.Background()
	tables, db := testenv.Tables(t)
	tenants := dynamo.NewTenantStore(db, tables.Control)
	store := dynamo.NewJobStore(db, tables)
	now := time.Now()
	key := memberKey(t, tenants, "ml", "acme", "ml-train")
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(refusal))
	}))
	defer refusing.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "+refusing.URL+"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := regionCluster(t, kubeconfig)
	var logged strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))
	api := served(t, httpapi.Deps{Principals: tenants, Jobs: store, Clusters: typed.New(kc), Regions: []string{"us-east-1"}, Log: log})

	j := jobs.New("job-refused", "ml", "ml-train", "us-east-1", 50, nil, []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "refused"}},
	}, now)
	if _, _, err := store.Create(ctx, j, jobs.Event(outbox.JobQueued, j, "", j.CreatedAt), nil, j.CreatedAt); err != nil {
		t.Fatal(err)
	}
	// Claimed: the job is active, so its view reads its placement live.
	if _, err := store.Claim(ctx, j.ID, "us-east-1", "drainer", now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string, map[string]any) {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET %s: body is not JSON: %s", path, rec.Body)
		}
		return rec.Code, rec.Body.String(), body
	}
	leaks := func(body string) bool {
		return strings.Contains(body, "arn:") || strings.Contains(body, "ApiRole") || strings.Contains(body, "eks.amazonaws.com") || strings.Contains(body, "forbidden")
	}
	for _, path := range []string{"/api/v1/jobs/" + j.ID + "/logs", "/api/v1/jobs/" + j.ID + "/events", "/api/v1/jobs/" + j.ID + "/pods"} {
		code, raw, body := get(path)
		id, _ := body["request_id"].(string)
		detail, _ := body["detail"].(string)
		if code != http.StatusServiceUnavailable || id == "" || !strings.Contains(detail, id) || leaks(raw) {
			t.Errorf("GET %s = %d %s; want a 503 that gives the request id and nothing of the cluster's refusal", path, code, raw)
		}
	}
	code, raw, body := get("/api/v1/jobs/" + j.ID)
	placement, _ := body["placement"].(map[string]any)
	if code != http.StatusOK || placement["node_lookup_error"] == nil || leaks(raw) {
		t.Errorf("GET the job = %d %s; want 200 with a node_lookup_error that gives nothing of the cluster's refusal", code, raw)
	}
	if !strings.Contains(logged.String(), "assumed-role/tidegate-ApiRole-1AB2C3") {
		t.Errorf("the log lost the cluster's refusal; it has:\n%s", logged.String())
	}
}
