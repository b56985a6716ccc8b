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
func GatewayIAMCaller(r *http.Request) (arn string, ok bool) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.IAM == nil || rc.Authorizer.IAM.UserARN == "" {
		return "", false
	}
	return rc.Authorizer.IAM.UserARN, true
}
