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

say "admission over 100,000 and 200,000 queued jobs (linear: t(2N)/t(N) ≤ 2.3)"
go test -run '^$' -bench Decide -benchmem ./shared/admission/

say "dispatch against raw client-go creates of the same Jobs; a no-op beat over 5,000 jobs against one raw LIST"
go test -run '^$' -bench 'DispatchVsRaw' -benchtime 1x ./shared/dispatch/
go test -run '^$' -bench 'NoopBeatVsRawList' -benchtime 1x -timeout 20m ./shared/reconcile/

say "webhook signing of 1 KB against a bare HMAC-SHA256 of the same bytes"
go test -run '^$' -bench SignVsRawHMAC -benchmem ./shared/signing/

say "webhook fan-out and signed delivery of 20 events to a loopback receiver, against bare POSTs of the same bodies"
go test -run '^$' -bench FanOutVsRawPost -benchtime 5x ./shared/delivery/

say "host plan over 10,000 and 20,000 apps of 5 pods, against grouping the pods alone (x-index ≤ 3) and linear (t20k/t10k ≤ 2.3)"
go test -run '^$' -bench . -benchmem ./shared/hostplan/

say "host plan against the seed runner's Python planned() on the same 10,000 apps (≥ 100× faster; the seed takes minutes)"
go run ./bench/hostplan -n 10000

say "a no-op hosting beat over 2,000 live apps, against one raw LIST of their pods (≤ 1.3×)"
go test -run '^$' -bench 'NoopBeatVsRawList' -benchtime 1x -timeout 20m ./shared/hosting/
