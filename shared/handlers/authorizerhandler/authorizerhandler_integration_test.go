package authorizerhandler_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/testenv"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/authorizerhandler"
	"github.com/tidegate/tidegate/shared/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newKey stores a fresh key for tenant and returns it.
func newKey(t *testing.T, store *dynamo.TenantStore, tenant string) string {
	t.Helper()
	key, err := tenancy.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.AddKey(context.Background(), tenant, key, time.Now()); err != nil {
		t.Fatal(err)
	}
	return key
}

// event is a REQUEST authorizer event (payload 2.0) with these headers, as API Gateway sends it.
func event(headers map[string]string) events.APIGatewayV2CustomAuthorizerV2Request {
	return events.APIGatewayV2CustomAuthorizerV2Request{
		Version: "2.0", Type: "REQUEST", RouteKey: "ANY /{proxy+}", RawPath: "/api/v1/jobs",
		RouteArn: "arn:aws:execute-api:us-east-1:123456789012:abc123/$default/GET/api/v1/jobs",
		Headers:  headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			APIID: "abc123", RequestID: "gw-1", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/api/v1/jobs"},
		},
	}
}

func TestHandle(t *testing.T) {
	tables, db := testenv.Tables(t)
	store := dynamo.NewTenantStore(db, tables.Control)
	ctx := context.Background()
	for _, name := range []string{"ml", "gone"} {
		if err := store.PutTenant(ctx, tenancy.Tenant{Name: name, Org: "acme", Namespaces: []string{name + "-ns"}, Role: tenancy.RoleMember}); err != nil {
			t.Fatal(err)
		}
	}
	valid, revoked, orphan := newKey(t, store, "ml"), newKey(t, store, "ml"), newKey(t, store, "gone")
	forged, err := tenancy.NewKey() // well formed, never stored
	if err != nil {
		t.Fatal(err)
	}
	for pk, sk := range map[string]string{"apikey#" + tenancy.HashKey(revoked): "credential", "tenant#gone": "tenant"} {
		if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &tables.Control, Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := authorizerhandler.New(config.Config{ControlTable: tables.Control}, handlers.Clients{DynamoDB: db}, log)
	allowed := events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: true, Context: map[string]any{
		authorizerhandler.ContextTenant: "ml", authorizerhandler.ContextSubject: "key:" + tenancy.KeyID(valid),
	}}
	denied := events.APIGatewayV2CustomAuthorizerSimpleResponse{}
	tests := []struct {
		name    string
		headers map[string]string
		want    events.APIGatewayV2CustomAuthorizerSimpleResponse
	}{
		{"a stored key", map[string]string{"authorization": "Bearer " + valid}, allowed},
		{"a stored key, scheme and header name in other cases", map[string]string{"Authorization": "bearer " + valid}, allowed},
		{"a forged key", map[string]string{"authorization": "Bearer " + forged}, denied},
		{"a revoked key", map[string]string{"authorization": "Bearer " + revoked}, denied},
		{"the key of a deleted tenant", map[string]string{"authorization": "Bearer " + orphan}, denied},
		{"no Authorization header", map[string]string{"user-agent": "curl"}, denied},
		{"an empty bearer", map[string]string{"authorization": "Bearer "}, denied},
		{"a key's hash instead of the key", map[string]string{"authorization": "Bearer " + tenancy.HashKey(valid)}, denied},
		{"a SigV4 signature", map[string]string{"authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261201/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=00"}, denied},
		{"the key in another header", map[string]string{"x-api-key": valid}, denied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.Handle(ctx, event(tt.headers))
			if err != nil {
				t.Fatalf("Handle(%s) = %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Handle(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	// Hostile: a flood of made-up keys. One whose checksum does not match, or that is no key's
	// shape at all, is refused without a DynamoDB call (the calls meter sees none); a well-formed
	// key is looked up.
	t.Run("a malformed key costs no read", func(t *testing.T) {
		meter := &testenv.Meter{}
		metered := dynamodb.New(db.Options(), func(o *dynamodb.Options) { o.HTTPClient = meter.DynamoDB(o.HTTPClient) })
		ma := authorizerhandler.New(config.Config{ControlTable: tables.Control}, handlers.Clients{DynamoDB: metered}, log)
		wrongSum := valid[:len(valid)-1] + map[bool]string{true: "B", false: "A"}[valid[len(valid)-1] == 'A']
		for _, key := range []string{wrongSum, valid[:len(valid)-6], "tg_" + strings.Repeat("x", 43) + "!", "random-garbage"} {
			meter.Reset()
			got, err := ma.Handle(ctx, event(map[string]string{"authorization": "Bearer " + key}))
			if err != nil || got.IsAuthorized {
				t.Errorf("Handle(malformed key %q) = %+v, %v; want a denial", key, got, err)
			}
			if calls := meter.Snapshot(); len(calls) != 0 {
				t.Errorf("Handle(malformed key %q) made %d DynamoDB calls (%v), want none", key, len(calls), calls)
			}
		}
		meter.Reset()
		if got, err := ma.Handle(ctx, event(map[string]string{"authorization": "Bearer " + forged})); err != nil || got.IsAuthorized {
			t.Errorf("Handle(a well-formed key never stored) = %+v, %v; want a denial", got, err)
		}
		if calls := meter.Snapshot(); len(calls) == 0 {
			t.Errorf("Handle(a well-formed key) made no DynamoDB call; the meter sees nothing")
		}
	})
	t.Run("a store it cannot read", func(t *testing.T) {
		broken := authorizerhandler.New(config.Config{ControlTable: tables.Control + "-missing"}, handlers.Clients{DynamoDB: db}, log)
		got, err := broken.Handle(ctx, event(map[string]string{"authorization": "Bearer " + valid}))
		if err == nil || got.IsAuthorized {
			t.Errorf("Handle with an unreadable store = %+v, %v; want a denial and an error", got, err)
		}
	})
}
