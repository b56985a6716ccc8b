#!/usr/bin/env bash
# `make bench`: every benchmark reports a ratio against a floor measured in the same run.
# Figures go to stdout as markdown rows for BENCHMARKS.md; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'tidegate bench: %s\n' "$*" >&2; }

say "Lambda cold start under the runtime interface emulator, against hello-world"
go run ./bench/coldstart

say "make dev to a healthy API, against starting the stand-ins alone"
bash scripts/bench-devstart.sh 3

say "admission policy against the upstream Pod Security evaluator on the same pods"
go test -run '^$' -bench . -benchmem ./shared/policy/

say "POST /api/v1/jobs end to end, against a raw TransactWriteItems + SendMessage of the same items"
go test -run '^$' -bench SubmitVsRaw -benchtime 200x ./shared/httpapi/
