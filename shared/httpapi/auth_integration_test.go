package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestKeyAuthOnDynamoDB runs the API against DynamoDB Local: a stored key lists its tenant's jobs,
// an unknown key is a 401, an IAM caller maps to its tenant or is refused.
func TestKeyAuthOnDynamoDB(t *testing.T) {
	tables, db := testenv.Tables(t)
	store := dynamo.NewTenantStore(db, tables.Control)
	ctx := context.Background()
	now := time.Now()
	if err := store.PutTenant(ctx, tenancy.Tenant{Name: "ml", Org: "acme", Namespaces: []string{"ml-train"}, Role: tenancy.RoleViewer, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	key, _ := tenancy.NewKey()
	if err := store.AddKey(ctx, "ml", key, now); err != nil {
		t.Fatal(err)
	}
	if err := store.AddIAM(ctx, "ml", "arn:aws:iam::123456789012:role/ci/ml-ci", now); err != nil {
		t.Fatal(err)
	}
	// A session's ARN cannot be mapped: its session name is the caller's to choose.
	if err := store.AddIAM(ctx, "ml", "arn:aws:sts::123456789012:assumed-role/other/ml", now); err == nil || !strings.Contains(err.Error(), "arn:aws:iam::123456789012:role/other") {
		t.Errorf("mapping a session ARN = %v; want it refused, naming the role's ARN", err)
	}
	h := served(t, httpapi.Deps{
		Principals: store,
		Jobs:       dynamo.NewJobStore(db, tables),
		IAMCaller: func(r *http.Request) (string, bool) {
			arn := r.Header.Get("X-Test-IAM")
			return arn, arn != ""
		},
	})
	tests := []struct {
		name       string
		header     map[string]string
		wantStatus int
		wantCode   string
	}{
		{"stored key", map[string]string{"Authorization": "Bearer " + key}, 200, ""},
		{"lowercase scheme", map[string]string{"Authorization": "bearer " + key}, 200, ""},
		{"unknown key", map[string]string{"Authorization": "Bearer tg_nope"}, 401, "unauthenticated"},
		{"mapped IAM caller", map[string]string{"X-Test-IAM": "arn:aws:iam::123456789012:role/ml-ci"}, 200, ""},
		{"unmapped IAM caller", map[string]string{"X-Test-IAM": "arn:aws:iam::123456789012:role/other"}, 403, "forbidden"},
		{"a session of the mapped role", map[string]string{"X-Test-IAM": "arn:aws:sts::123456789012:assumed-role/ml-ci/alice"}, 200, ""},
		{"another role's session named like the mapped one", map[string]string{"X-Test-IAM": "arn:aws:sts::123456789012:assumed-role/other/ml-ci"}, 403, "forbidden"},
		{"the refused session ARN itself", map[string]string{"X-Test-IAM": "arn:aws:sts::123456789012:assumed-role/other/ml"}, 403, "forbidden"},
		{"the mapped role in another account", map[string]string{"X-Test-IAM": "arn:aws:sts::210987654321:assumed-role/ml-ci/alice"}, 403, "forbidden"},
		{"a federated user", map[string]string{"X-Test-IAM": "arn:aws:sts::123456789012:federated-user/ml-ci"}, 403, "forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/api/v1/jobs", nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body is not JSON: %s", rec.Body)
			}
			if rec.Code != tt.wantStatus {
				t.Fatalf("GET /api/v1/jobs = %d %s, want %d", rec.Code, rec.Body, tt.wantStatus)
			}
			if tt.wantCode != "" && body["error"] != tt.wantCode {
				t.Errorf("error = %v, want %s", body["error"], tt.wantCode)
			}
			if tt.wantStatus == 200 {
				items, ok := body["items"].([]any)
				if !ok || len(items) != 0 || body["next_cursor"] != nil {
					t.Errorf("empty tenant's list = %s, want {\"items\":[],\"next_cursor\":null}", rec.Body)
				}
			}
		})
	}
}
