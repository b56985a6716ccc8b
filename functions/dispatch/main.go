// Command dispatch is the Lambda function on the dispatch SQS queue: each message wakes it for a
// region, and it drains that region's spot-gated job queue onto the region's cluster.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/dispatchhandler"
	"github.com/tidegate/tidegate/shared/kube"
)

func main() {
	cfg, clients, log := handlers.FromLambdaEnv(context.Background(), "dispatch")
	clusters, err := kube.New(cfg, clients.AWS)
	if err != nil {
		handlers.InitFailed("dispatch", err)
	}
	prices := dispatchhandler.Prices(cfg, clients)
	h, err := dispatchhandler.New(cfg, clients, clusters, prices, log)
	if err != nil {
		handlers.InitFailed("dispatch", err)
	}
	lambda.Start(h.HandleSQS)
}
