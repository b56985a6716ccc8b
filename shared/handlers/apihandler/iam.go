package apihandler

import (
	"net/http"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/tidegate/tidegate/shared/httpapi"
)

var _ httpapi.IAMCaller = GatewayIAMCaller

// GatewayIAMCaller is the IAM caller API Gateway (HTTP API, IAM auth) authenticated, read from the
// request context the api-proxy adapter puts on each request. It reports ok=false for a request
// that did not come through the adapter or carries no IAM identity, so the API falls back to API
// keys.
//
// Which API a request came through is told by what API Gateway wrote into requestContext.authorizer,
// never by a header: the IAM API's routes carry "iam" (the SigV4 signer API Gateway verified), the
// key API's carry "lambda" (the key authorizer's answer). A request bearing the key authorizer's
// answer is a key caller whatever else it holds, so a key can never pose as an IAM identity.
func GatewayIAMCaller(r *http.Request) (arn string, ok bool) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.Lambda != nil || rc.Authorizer.IAM == nil || rc.Authorizer.IAM.UserARN == "" {
		return "", false
	}
	return rc.Authorizer.IAM.UserARN, true
}
