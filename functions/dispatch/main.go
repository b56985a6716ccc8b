// Command dispatch is the Lambda function on the dispatch SQS queue: each message wakes it for a
// region, and it drains that region's spot-gated job queue onto the region's cluster.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tidegate/tidegate/shared/handlers"
)

func main() {
	cfg, clients, log := handlers.FromLambdaEnv(context.Background(), "dispatch")
	lambda.Start(handlers.Dispatch(cfg, clients, log).HandleSQS)
}
