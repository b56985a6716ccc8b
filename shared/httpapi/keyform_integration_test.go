package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestMalformedKeyCostsNoRead: a key with Tidegate's prefix whose checksum does not match, cut
// short or outside base64url is answered 401 like an unknown key, and the principal store makes no
// DynamoDB call for it (the calls meter on the store's client sees none). A key made before
// checksums, a checked key and a key without the prefix (a dev stack's own) are looked up.
func TestMalformedKeyCostsNoRead(t *testing.T) {
	tables, db := testenv.Tables(t)
	meter := &testenv.Meter{}
	metered := dynamodb.New(db.Options(), func(o *dynamodb.Options) {
		next := o.HTTPClient
		if next == nil {
			next = http.DefaultClient
		}
		o.HTTPClient = meter.DynamoDB(next)
	})
	store := dynamo.NewTenantStore(metered, tables.Control)
	ctx := context.Background()
	now := time.Now()
	if err := store.PutTenant(ctx, tenancy.Tenant{Name: "ml", Org: "acme", Namespaces: []string{"ml-train"}, Role: tenancy.RoleViewer, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	checked, err := tenancy.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	// A key as NewKey made them before checksums: the prefix and base64url of 32 random bytes.
	random := make([]byte, 32)
	rand.Read(random)
	legacy := "tg_" + base64.RawURLEncoding.EncodeToString(random)
	const own = "a-dev-stack-operators-own-key"
	for _, k := range []string{checked, legacy, own} {
		if err := store.AddKey(ctx, "ml", k, now); err != nil {
			t.Fatal(err)
		}
	}
	unknown, _ := tenancy.NewKey()
	last := checked[len(checked)-1]
	flipped := checked[:len(checked)-1] + map[bool]string{true: "B", false: "A"}[last == 'A'] // the checksum's last character
	if tenancy.FormOf(flipped) != tenancy.KeyMalformed || tenancy.FormOf(legacy) != tenancy.KeyLegacy {
		t.Fatalf("the test's keys are not of the forms it means: FormOf(flipped) = %d, FormOf(legacy) = %d", tenancy.FormOf(flipped), tenancy.FormOf(legacy))
	}
	h := served(t, httpapi.Deps{Principals: store, Jobs: dynamo.NewJobStore(db, tables)})

	get := func(key string) (status int, body map[string]any, reads int) {
		meter.Reset()
		req := httptest.NewRequest("GET", "/api/v1/jobs", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET /api/v1/jobs: body is not JSON: %s", rec.Body)
		}
		return rec.Code, body, len(meter.Snapshot())
	}
	_, unknownBody, _ := get(unknown)
	tests := []struct {
		name, key  string
		wantStatus int
		wantReads  int // the tenant store's DynamoDB calls: a credential, then its tenant
	}{
		{"a checked key", checked, 200, 2},
		{"a key made before checksums", legacy, 200, 2},
		{"a key without Tidegate's prefix", own, 200, 2},
		{"a checked key never stored", unknown, 401, 1},
		{"the checksum's last character flipped", flipped, 401, 0},
		{"cut short", checked[:len(checked)-4], 401, 0},
		{"the prefix and no base64url", "tg_" + strings.Repeat("!", 48), 401, 0},
		{"the prefix alone", "tg_", 401, 0},
	}
	for _, tt := range tests {
		status, body, reads := get(tt.key)
		if status != tt.wantStatus || reads != tt.wantReads {
			t.Errorf("GET /api/v1/jobs with %s = %d after %d DynamoDB calls of the tenant store; want %d after %d", tt.name, status, reads, tt.wantStatus, tt.wantReads)
		}
		if status == 401 && (body["error"] != unknownBody["error"] || body["detail"] != unknownBody["detail"]) {
			t.Errorf("GET /api/v1/jobs with %s answered %v: %v; want what an unknown key gets, %v: %v", tt.name, body["error"], body["detail"], unknownBody["error"], unknownBody["detail"])
		}
	}
}
