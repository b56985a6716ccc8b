#!/usr/bin/env bash
# `make fuzz`: runs every fuzz target for a bounded time each (FUZZTIME, default 30s). Their seed
# corpora already run in `make test`; this searches for new inputs. Finds land in the package's
# testdata/fuzz folder, where `make test` then replays them.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
grep -rl --include='*_test.go' '^func Fuzz' shared cmd functions 2>/dev/null | sort | while read -r file; do
  pkg=./$(dirname "$file")
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
    printf 'tidegate fuzz: %s %s for %s\n' "$pkg" "$target" "$fuzztime" >&2
    # Minimizing a new input can take the whole run on this machine; two seconds is enough.
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s "$pkg"
  done
done
