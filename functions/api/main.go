// Command api is Tidegate's HTTPS API as a Lambda function behind API Gateway (HTTP API, IAM
// auth): the same http.Handler `tidegate dev` serves, wrapped by the api-proxy adapter.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/apihandler"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/kube/typed"
)

func main() {
	cfg, clients, log := handlers.FromLambdaEnv(context.Background(), "api")
	kc, err := kube.New(cfg, clients.AWS)
	if err != nil {
		handlers.InitFailed("api", err)
	}
	clusters := typed.New(kc)
	api, err := apihandler.New(cfg, clients, clusters, log, apihandler.GatewayIAMCaller)
	if err != nil {
		handlers.InitFailed("api", err)
	}
	lambda.Start(httpadapter.NewV2(api).ProxyWithContext)
}
