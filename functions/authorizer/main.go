// Command authorizer is the key API's Lambda authorizer: API Gateway asks it, before the API
// function runs, whether a request's bearer API key is a stored one. It reaches no cluster, and
// links no Kubernetes package and not the API.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/authorizerhandler"
)

func main() {
	cfg, clients, log := handlers.FromLambdaEnv(context.Background(), "authorizer")
	lambda.Start(authorizerhandler.New(cfg, clients, log).Handle)
}
