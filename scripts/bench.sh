#!/usr/bin/env bash
# `make bench`: every benchmark reports a ratio against a floor measured in the same run.
#
#   scripts/bench.sh [name…]   run the named benchmarks only (all when none), e.g. `signing`
#
# The benchmarks, their commands, goals and where each prints its ratio are listed once, in
# bench/table. After each one runs, bench/table finds its ratios in what it printed and rewrites
# its rows of the current table at the top of BENCHMARKS.md; the rows of benchmarks not run keep
# their figures and dates. Each benchmark's own output goes to stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'tidegate bench: %s\n' "$*" >&2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/table" ./bench/table
steps=$("$work/table" steps "$@")

failed=()
while IFS=$'\t' read -r name about command <&3; do
  say "$name: $about"
  at=$(date '+%Y-%m-%d %H:%M')
  load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)
  status=0
  # stdout to the terminal and $name.out; stderr to the terminal and $name.err, for why it failed.
  { bash -c "$command" </dev/null 2>&1 >&4 4>&- 3<&- | tee "$work/$name.err" >&2; } 4>&1 | tee "$work/$name.out" || status=$?
  "$work/table" write -doc BENCHMARKS.md -step "$name" -out "$work/$name.out" -err "$work/$name.err" \
    -status "$status" -at "$at" -load "$load"
  if [ "$status" != 0 ]; then
    say "$name: exit status $status"
    failed+=("$name")
  fi
done 3<<<"$steps"

if [ ${#failed[@]} -gt 0 ]; then
  say "failed: ${failed[*]} (their rows of BENCHMARKS.md say not measured where no ratio was printed)"
  exit 1
fi
