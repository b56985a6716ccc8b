// Command webhook is the Lambda function on the webhook SQS queue: each message names an outbox
// event, which it delivers, signed, to the endpoints subscribed to it. It reaches no cluster, and
// links no Kubernetes package.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/webhookhandler"
)

func main() {
	cfg, clients, log := handlers.FromLambdaEnv(context.Background(), "webhook")
	lambda.Start(webhookhandler.New(cfg, clients, log).HandleSQS)
}
