// Command webhook is the Lambda function on the webhook SQS queue: each message names an outbox
// event, which it delivers, signed, to the endpoints subscribed to it.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tidegate/tidegate/shared/handlers"
)

func main() {
	cfg, clients, log := handlers.FromLambdaEnv(context.Background(), "webhook")
	lambda.Start(handlers.Webhook(cfg, clients, log).HandleSQS)
}
