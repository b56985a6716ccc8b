// Command reconcile is the Lambda function on the EventBridge schedule: each beat follows
// dispatched jobs, runs the host plan and sweeps up what lost messages left behind.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/reconcilehandler"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/kube/typed"
)

func main() {
	cfg, clients, log := handlers.FromLambdaEnv(context.Background(), "reconcile")
	kc, err := kube.New(cfg, clients.AWS)
	if err != nil {
		handlers.InitFailed("reconcile", err)
	}
	h, err := reconcilehandler.New(cfg, clients, typed.New(kc), log)
	if err != nil {
		handlers.InitFailed("reconcile", err)
	}
	lambda.Start(h.HandleBeat)
}
