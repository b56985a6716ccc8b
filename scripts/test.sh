#!/usr/bin/env bash
# Runs every test against one shared set of stand-ins (DynamoDB Local, fauxqs, the Kubernetes
# sandbox), started here and stopped on exit. Called by `make test`, after scripts/tools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'tidegate test: %s\n' "$*" >&2; }

say "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
  say "these files need gofmt -w: $unformatted"
  exit 1
fi

say "go vet"
go vet ./...

say "every package says what it provides"
missing=$(go list -f '{{if and .GoFiles (not .Doc)}}{{.ImportPath}}{{end}}' ./... | grep -v '^$' || true)
if [ -n "$missing" ]; then
  say "these packages have no doc comment: $missing"
  exit 1
fi

say "OpenAPI lint of the served contract (shared/httpapi/redocly.yaml)"
# openapi.go serves openapi.json's bytes as they are, so the file is what clients read. Both
# programs come from scripts/tools.sh, which `make test` runs first; the run stays on this machine.
cache="${TIDEGATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tidegate}"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_NOTIFICATIONS=true "$cache/bin/node22" \
  "$cache/redocly/node_modules/@redocly/cli/bin/cli.js" lint --config shared/httpapi/redocly.yaml >&2 ||
  { say "the contract has lint errors (above); fix shared/httpapi/openapi.json"; exit 1; }

say "cfn-lint on template.yaml, as written and with EdgeProtection on (shared/dev/samcheck's tests keep the project's own rules)"
# The machine image has cfn-lint with the SAM translator; a template error fails the run, a
# warning is printed and let through.
cfnlint=$(command -v cfn-lint || ls "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/cfn-lint 2>/dev/null | head -n 1 || true)
[ -n "$cfnlint" ] || { say "cfn-lint is not installed: pip install cfn-lint (it brings the SAM translator)"; exit 1; }
"$cfnlint" --non-zero-exit-code error template.yaml >&2 ||
  { say "template.yaml has cfn-lint errors (above)"; exit 1; }
# cfn-lint's --parameters does not reach a SAM template's resolved values (1.51 let a copy with
# EdgeRateLimit=5 through that it warns about as a default), so the optional CloudFront and WAF
# are linted on a copy whose EdgeProtection defaults to "true".
edge_dir=$(mktemp -d)
edge_on="$edge_dir/template-edge.yaml"
awk '/^  EdgeProtection:$/ { block = 1 }
     block && /^    Default: "false"$/ { sub(/"false"/, "\"true\""); block = 0; turned = 1 }
     { print }
     END { exit !turned }' template.yaml >"$edge_on" ||
  { rm -rf "$edge_dir"; say "could not turn EdgeProtection on in a copy of template.yaml: its Default is no longer the line '    Default: \"false\"' under '  EdgeProtection:'; change this script with it"; exit 1; }
if ! "$cfnlint" --non-zero-exit-code error "$edge_on" >&2; then
  rm -rf "$edge_dir"
  say "template.yaml with EdgeProtection true has cfn-lint errors (above; the line numbers are template.yaml's)"
  exit 1
fi
rm -rf "$edge_dir"

say "go.mod and go.sum are tidy"
if ! diff=$(go mod tidy -diff); then
  printf '%s\n' "$diff" >&2
  say "go.mod or go.sum is not tidy (above); run go mod tidy"
  exit 1
fi

say "building bin/tidegate"
go build -o bin/tidegate ./cmd/tidegate

work=$(mktemp -d)
sandbox_pid=""
cleanup() {
  if [ -n "$sandbox_pid" ]; then kill "$sandbox_pid" 2>/dev/null || true; wait "$sandbox_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

say "starting the stand-ins"
./bin/tidegate sandbox --kube --state "$work/state.json" --dir "$work/sandbox" 2>"$work/sandbox.log" &
sandbox_pid=$!
# Two minutes covers a cold JVM and apiserver on a loaded 2-core machine (≈10 s measured).
for _ in $(seq 1 240); do
  [ -f "$work/state.json" ] && break
  if ! kill -0 "$sandbox_pid" 2>/dev/null; then
    say "the stand-ins did not start:"; cat "$work/sandbox.log" >&2; exit 1
  fi
  sleep 0.5
done
[ -f "$work/state.json" ] || { say "the stand-ins were not ready after 2 minutes:"; cat "$work/sandbox.log" >&2; exit 1; }
export TIDEGATE_SANDBOX_STATE="$work/state.json"

say "go test"
go test -count=1 -timeout 25m "$@" ./...
