# Targets `sam build` runs for template.yaml's functions. Each function there has
# `Metadata: BuildMethod: makefile` and `CodeUri: .`, so SAM runs `make build-<LogicalId>` at the
# repository root with ARTIFACTS_DIR set; the root Makefile includes this file.
#
# Lambda's provided.al2023 runtime on arm64 runs a static linux/arm64 binary named bootstrap.
# lambda.norpc drops aws-lambda-go's net/rpc path, which only the retired go1.x runtime used.
# shared/dev/samcheck checks that every function in template.yaml has a target here that builds its
# Metadata.SourceFolder for its architecture.

SAM_GO_BUILD = GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags "-s -w"

.PHONY: build-ApiFunction build-DispatchFunction build-ReconcileFunction build-WebhookFunction build-AuthorizerFunction

build-ApiFunction:
	$(SAM_GO_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/api

build-DispatchFunction:
	$(SAM_GO_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/dispatch

build-ReconcileFunction:
	$(SAM_GO_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/reconcile

build-WebhookFunction:
	$(SAM_GO_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/webhook

build-AuthorizerFunction:
	$(SAM_GO_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/authorizer
