// Command reconcile is the Lambda function on the EventBridge schedule: each beat follows
// dispatched jobs, runs the host plan and sweeps up what lost messages left behind.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tidegate/tidegate/shared/handlers"
)

func main() {
	cfg, clients, log := handlers.FromLambdaEnv(context.Background(), "reconcile")
	lambda.Start(handlers.Reconcile(cfg, clients, log).HandleBeat)
}
