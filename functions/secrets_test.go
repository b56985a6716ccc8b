package functions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/deliveryplan"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/outbox"
	"github.com/tidegate/tidegate/shared/signing"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// TestAPISealsAndOpensThroughKMS: the API function, built as AWS builds it and given only the KMS
// key's ARN, opens a webhook's signing secret another process sealed and seals an org's secret
// that another process opens, each through data keys that local-kms makes and unwraps.
func TestAPISealsAndOpensThroughKMS(t *testing.T) {
	rie := emulator(t)
	env, tables, db := functionEnv(t)
	st := testenv.AWS(t)
	ring, err := keyring.New(st.KMS(), db, tables.Control, envValue(env, config.EnvKMSKey))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const caller = "arn:aws:iam::123456789012:user/kms-admin"
	now := time.Now().UTC()
	tenants := dynamo.NewTenantStore(db, tables.Control)
	if err := tenants.PutTenant(ctx, tenancy.Tenant{Name: "kms", Org: "acme", Namespaces: []string{"team-a"}, Role: tenancy.RoleAdmin, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := tenants.AddIAM(ctx, "kms", caller, now); err != nil {
		t.Fatal(err)
	}
	key, err := signing.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	hook := deliveryplan.Webhook{ID: "wh_kms", Tenant: "kms", URL: "https://hooks.example.com/kms", Events: []outbox.Type{outbox.JobQueued},
		CreatedAt: now, UpdatedAt: now, Secrets: []deliveryplan.Secret{{Key: key}}}
	if err := dynamo.NewWebhookStore(db, tables, ring).CreateWebhook(ctx, hook, 10); err != nil {
		t.Fatal(err)
	}

	addr := startFunction(t, rie, build(t, "api"), env)
	// Listing webhooks opens each one's sealed secret: a data key the API cannot unwrap is a 500.
	if status, body := apiAnswer(t, invoke(t, addr, httpEvent("GET", "/api/v1/webhooks", caller))); status != http.StatusOK || !strings.Contains(body, "wh_kms") {
		t.Errorf("GET /api/v1/webhooks = %d %s, want 200 listing wh_kms", status, body)
	}
	put := httpEvent("PUT", "/api/v1/secrets/API_KEY", caller)
	put.Headers["content-type"] = "application/json"
	put.Body = `{"value":"s3cr3t-through-kms"}`
	if status, body := apiAnswer(t, invoke(t, addr, put)); status != http.StatusCreated {
		t.Fatalf("PUT /api/v1/secrets/API_KEY = %d %s, want 201", status, body)
	}
	sealed, err := dynamo.NewSecretStore(db, tables.Control).Sealed(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed["API_KEY"], "s3cr3t") {
		t.Fatalf("the stored secret holds its value: %s", sealed["API_KEY"])
	}
	if got, err := ring.Open(ctx, keyring.Org("acme"), sealed["API_KEY"], apps.SecretBinding("acme", "API_KEY")); err != nil || got != "s3cr3t-through-kms" {
		t.Errorf("opening what the API sealed = %q, %v; want the value", got, err)
	}
}

// apiAnswer is an API answer's status and body.
func apiAnswer(t *testing.T, raw []byte) (int, string) {
	t.Helper()
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatalf("not an API Gateway v2 response: %s", raw)
	}
	return resp.StatusCode, resp.Body
}

// envValue is name's value in env, a list of NAME=value.
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
