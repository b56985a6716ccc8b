# The two commands a newcomer needs: `make dev` runs Tidegate here, `make test` tests it. Both
# install what is missing first (scripts/tools.sh; cached outside the clone, so only once).

GO ?= go

.PHONY: dev test tools build bench bench-scale fuzz vet

dev: tools build
	./bin/tidegate dev

test: tools
	bash scripts/test.sh

tools:
	bash scripts/tools.sh

build:
	@command -v $(GO) >/dev/null || { echo "make: Go 1.26 is required and not on PATH" >&2; exit 1; }
	$(GO) build -o bin/tidegate ./cmd/tidegate

vet:
	$(GO) vet ./...

bench: tools build
	bash scripts/bench.sh

# What a drain, a beat, a hosting beat and a webhook fan-out cost as the queue, the running jobs,
# the apps and a tenant's webhooks grow (bench/scale): not in `make test` or `make bench`;
# ARGS=-large adds 100,000 queued and 10,000 and 20,000 active jobs and 10,000 apps.
bench-scale: tools
	$(GO) run ./bench/scale $(ARGS)

fuzz:
	bash scripts/fuzz.sh

include build/sam.mk
