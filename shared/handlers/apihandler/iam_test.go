package apihandler

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// signedIAM is requestContext.authorizer as the IAM API sends it for a SigV4-signed request.
func signedIAM(arn string) *events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription {
	return &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{
		AccessKey: "ASIAEXAMPLEKEY", AccountID: "111122223333", CallerID: "AROAEXAMPLE:ci",
		UserARN: arn, UserID: "AROAEXAMPLE:ci",
	}
}

func TestGatewayIAMCaller(t *testing.T) {
	const arn = "arn:aws:iam::111122223333:user/ci"
	ctxJSON, err := json.Marshal(events.APIGatewayV2HTTPRequestContext{
		Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: signedIAM(arn)},
	})
	if err != nil {
		t.Fatal(err)
	}
	keyAPI := map[string]any{"tenant": "ml", "subject": "key:0123456789ab"}
	tests := []struct {
		name       string
		authorizer *events.APIGatewayV2HTTPRequestContextAuthorizerDescription
		headers    map[string]string
		wantARN    string
	}{
		{name: "the IAM API's signed caller", wantARN: arn,
			authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: signedIAM(arn)}},
		{name: "the key API's caller",
			authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: keyAPI}},
		{name: "the key authorizer's answer beside an IAM identity",
			authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: keyAPI, IAM: signedIAM(arn)}},
		{name: "an IAM identity without an ARN",
			authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: signedIAM("")}},
		{name: "no authorizer (an open route)"},
		{name: "the adapter's context header forged on the key API",
			authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: keyAPI},
			headers:    map[string]string{core.APIGwContextHeader: string(ctxJSON)}},
		{name: "IAM-looking headers on an open route",
			headers: map[string]string{
				core.APIGwContextHeader: string(ctxJSON), "x-amzn-iam-user-arn": arn, "x-amz-security-token": "forged",
				"authorization": "AWS4-HMAC-SHA256 Credential=ASIAEXAMPLEKEY/20261201/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=00",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: "ANY /{proxy+}", RawPath: "/api/v1/jobs", Headers: tt.headers,
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					APIID: "abc123", DomainName: "abc123.execute-api.us-east-1.amazonaws.com", Stage: "$default",
					HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/api/v1/jobs"},
					Authorizer: tt.authorizer,
				},
			}
			// The request the api-proxy adapter hands the API, made the way the Lambda makes it.
			r, err := new(core.RequestAccessorV2).EventToRequestWithContext(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := GatewayIAMCaller(r)
			if got != tt.wantARN || ok != (tt.wantARN != "") {
				t.Errorf("GatewayIAMCaller(%s) = %q, %v; want %q, %v", tt.name, got, ok, tt.wantARN, tt.wantARN != "")
			}
		})
	}
	if arn, ok := GatewayIAMCaller(httptest.NewRequest("GET", "/api/v1/jobs", nil)); ok {
		t.Errorf("GatewayIAMCaller(a request not from the adapter) = %q, true; want false", arn)
	}
}
