package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// This file is the two ways into the deployed API (template.yaml): an IAM caller through HttpApi,
// whose signature API Gateway verifies and whose signer it writes into
// requestContext.authorizer.iam, and an API key through KeyApi, whose authorizer function checks
// the key and whose answer API Gateway writes into requestContext.authorizer.lambda. The events are
// shaped as API Gateway sends them.

// credentials are what seedCredentials stores: one tenant, reached by an IAM user and by a key,
// and a key that was revoked.
type credentials struct {
	tenant, iamARN, key, revoked string
}

func seedCredentials(t *testing.T, tables dynamo.Tables, db *dynamodb.Client) credentials {
	t.Helper()
	ctx := context.Background()
	store := dynamo.NewTenantStore(db, tables.Control)
	c := credentials{tenant: "ml", iamARN: "arn:aws:iam::111122223333:user/ci"}
	if err := store.PutTenant(ctx, tenancy.Tenant{Name: c.tenant, Org: "acme", Namespaces: []string{"team-a"}, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	if err := store.AddIAM(ctx, c.tenant, c.iamARN, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []*string{&c.key, &c.revoked} {
		key, err := tenancy.NewKey()
		if err != nil {
			t.Fatal(err)
		}
		if err := store.AddKey(ctx, c.tenant, key, time.Now()); err != nil {
			t.Fatal(err)
		}
		*k = key
	}
	// Revoked as an operator does it: the key's credential item is deleted.
	if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &tables.Control, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "apikey#" + tenancy.HashKey(c.revoked)},
		"sk": &types.AttributeValueMemberS{Value: "credential"},
	}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// sigV4 is the Authorization header of a SigV4-signed request, as the CLI's --profile sends it.
const sigV4 = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261201/us-east-1/execute-api/aws4_request, " +
	"SignedHeaders=accept;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"

// signedRequest is what HttpApi hands the API function for a SigV4-signed GET /api/v1/jobs: the
// signature's headers, and the signer API Gateway verified (ARN_HERE) in requestContext.authorizer.iam.
const signedRequest = `{
  "version": "2.0",
  "routeKey": "ANY /{proxy+}",
  "rawPath": "/api/v1/jobs",
  "rawQueryString": "",
  "headers": {
    "accept": "application/json",
    "authorization": "SIGV4_HERE",
    "content-length": "0",
    "host": "iamapi1.execute-api.us-east-1.amazonaws.com",
    "user-agent": "tidegate-cli",
    "x-amz-date": "20261201T120000Z",
    "x-amzn-trace-id": "Root=1-674c5b40-0123456789abcdef01234567",
    "x-forwarded-for": "192.0.2.1",
    "x-forwarded-port": "443",
    "x-forwarded-proto": "https"
  },
  "requestContext": {
    "accountId": "123456789012",
    "apiId": "iamapi1",
    "authorizer": {
      "iam": {
        "accessKey": "AKIAIOSFODNN7EXAMPLE",
        "accountId": "111122223333",
        "callerId": "AIDACKCEVSQ6C2EXAMPLE",
        "cognitoIdentity": null,
        "principalOrgId": null,
        "userArn": "ARN_HERE",
        "userId": "AIDACKCEVSQ6C2EXAMPLE"
      }
    },
    "domainName": "iamapi1.execute-api.us-east-1.amazonaws.com",
    "domainPrefix": "iamapi1",
    "http": {"method": "GET", "path": "/api/v1/jobs", "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1", "userAgent": "tidegate-cli"},
    "requestId": "gw-signed-1",
    "routeKey": "ANY /{proxy+}",
    "stage": "$default",
    "time": "01/Dec/2026:12:00:00 +0000",
    "timeEpoch": 1796126400000
  },
  "pathParameters": {"proxy": "api/v1/jobs"},
  "isBase64Encoded": false
}`

// signedEvent is signedRequest signed by arn.
func signedEvent(t *testing.T, arn string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	var ev events.APIGatewayV2HTTPRequest
	raw := signedRequest
	for old, v := range map[string]string{`"SIGV4_HERE"`: sigV4, `"ARN_HERE"`: arn} {
		q, _ := json.Marshal(v)
		raw = strings.ReplaceAll(raw, old, string(q))
	}
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// throughKeyAPI is ev as KeyApi hands it on once its authorizer allowed it: no IAM identity, the
// authorizer's answer in requestContext.authorizer.lambda, and headers replaced by headers.
func throughKeyAPI(ev events.APIGatewayV2HTTPRequest, answer map[string]any, headers map[string]string) events.APIGatewayV2HTTPRequest {
	ev.RequestContext.APIID, ev.RequestContext.DomainPrefix = "keyapi1", "keyapi1"
	ev.RequestContext.DomainName = "keyapi1.execute-api.us-east-1.amazonaws.com"
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: answer}
	ev.Headers = maps.Clone(ev.Headers)
	maps.Copy(ev.Headers, headers)
	return ev
}

// principalInvocations are the API function's answers to each principal, by the way it came in.
func principalInvocations(t *testing.T, c credentials) []invocation {
	signed := signedEvent(t, c.iamARN)
	answer := map[string]any{"tenant": c.tenant, "subject": "key:" + tenancy.KeyID(c.key)}
	unsigned := signedEvent(t, c.iamARN)
	unsigned.RequestContext.Authorizer = nil // an open route's context: API Gateway vouched for no one
	ctxJSON, err := json.Marshal(signed.RequestContext)
	if err != nil {
		t.Fatal(err)
	}
	both := throughKeyAPI(signed, answer, nil)
	both.RequestContext.Authorizer.IAM = signed.RequestContext.Authorizer.IAM
	emptyList := map[string]any{"items": []any{}, "next_cursor": nil}
	unauthenticated := map[string]any{"error": "unauthenticated", "request_id": sameAsHeader}
	return []invocation{
		{"a SigV4-signed request through the IAM API reaches the mapped tenant", signed,
			wantAPI(http.StatusOK, emptyList)},
		{"a key through the key API reaches its tenant", throughKeyAPI(signed, answer, map[string]string{"authorization": "Bearer " + c.key}),
			wantAPI(http.StatusOK, emptyList)},
		{"a revoked key the authorizer let through (an answer API Gateway cached) is refused by the API's own check",
			throughKeyAPI(signed, map[string]any{"tenant": c.tenant, "subject": "key:" + tenancy.KeyID(c.revoked)}, map[string]string{"authorization": "Bearer " + c.revoked}),
			wantAPI(http.StatusUnauthorized, unauthenticated)},
		{"the signed request's shape through the key API claims no IAM identity", throughKeyAPI(signed, answer, nil),
			wantAPI(http.StatusUnauthorized, unauthenticated)},
		{"an IAM identity beside the key authorizer's answer is not taken", both,
			wantAPI(http.StatusUnauthorized, unauthenticated)},
		{"IAM identity forged in headers, with no authorizer's word",
			throughKeyAPI(unsigned, nil, map[string]string{"X-GoLambdaProxy-ApiGateway-Context": string(ctxJSON), "x-amzn-iam-user-arn": c.iamARN}),
			wantAPI(http.StatusUnauthorized, unauthenticated)},
	}
}

// authorizerRequest is what KeyApi sends its authorizer (payload format 2.0, REQUEST) before a GET
// /api/v1/jobs: the request's headers, with the identity source (Authorization) in identitySource.
func authorizerRequest(headers map[string]string) events.APIGatewayV2CustomAuthorizerV2Request {
	ev := events.APIGatewayV2CustomAuthorizerV2Request{
		Version: "2.0", Type: "REQUEST",
		RouteArn: "arn:aws:execute-api:us-east-1:123456789012:keyapi1/$default/GET/api/v1/jobs",
		RouteKey: "ANY /{proxy+}", RawPath: "/api/v1/jobs",
		Headers: map[string]string{
			"accept": "application/json", "host": "keyapi1.execute-api.us-east-1.amazonaws.com",
			"user-agent": "tidegate-cli", "x-forwarded-for": "192.0.2.1", "x-forwarded-proto": "https",
		},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID: "123456789012", APIID: "keyapi1", DomainName: "keyapi1.execute-api.us-east-1.amazonaws.com",
			DomainPrefix: "keyapi1", RequestID: "gw-key-1", RouteKey: "ANY /{proxy+}", Stage: "$default",
			Time: "01/Dec/2026:12:00:00 +0000", TimeEpoch: 1796126400000,
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: "GET", Path: "/api/v1/jobs", Protocol: "HTTP/1.1", SourceIP: "192.0.2.1", UserAgent: "tidegate-cli",
			},
		},
		PathParameters: map[string]string{"proxy": "api/v1/jobs"},
	}
	maps.Copy(ev.Headers, headers)
	if a, ok := headers["authorization"]; ok {
		ev.IdentitySource = []string{a}
	}
	return ev
}

// authorizerInvocations are the authorizer function's answers to a stored, a forged and a revoked
// key, and to requests with no key.
func authorizerInvocations(t *testing.T, c credentials) []invocation {
	forged, err := tenancy.NewKey() // well formed, never stored
	if err != nil {
		t.Fatal(err)
	}
	denied := wantAuthorizer(events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: false})
	return []invocation{
		{"a stored key", authorizerRequest(map[string]string{"authorization": "Bearer " + c.key}),
			wantAuthorizer(events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: true, Context: map[string]any{
				"tenant": c.tenant, "subject": "key:" + tenancy.KeyID(c.key),
			}})},
		{"a forged key", authorizerRequest(map[string]string{"authorization": "Bearer " + forged}), denied},
		{"a revoked key", authorizerRequest(map[string]string{"authorization": "Bearer " + c.revoked}), denied},
		{"no Authorization header", authorizerRequest(nil), denied},
		{"a SigV4 signature sent to the key API", authorizerRequest(map[string]string{"authorization": sigV4}), denied},
	}
}

// wantAuthorizer checks an authorizer's simple response is exactly want.
func wantAuthorizer(want events.APIGatewayV2CustomAuthorizerSimpleResponse) func([]byte) error {
	return func(body []byte) error {
		var got events.APIGatewayV2CustomAuthorizerSimpleResponse
		if err := json.Unmarshal(body, &got); err != nil {
			return fmt.Errorf("not a simple authorizer response: %w", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("answer (-want +got):\n%s", diff)
		}
		return nil
	}
}
