#!/usr/bin/env bash
# Times `tidegate dev` from start to a healthy API, against the floor of starting the same
# stand-ins alone (`tidegate sandbox --kube`, ready when its state file appears), over N runs each.
# Needs bin/tidegate and the tools installed (make bench does both).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
now() { date +%s.%N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

floor=() dev=()
for i in $(seq 1 "$runs"); do
  work=$(mktemp -d)
  t0=$(now)
  ./bin/tidegate sandbox --kube --state "$work/state.json" --dir "$work/sb" 2>"$work/sb.log" & pid=$!
  until [ -f "$work/state.json" ]; do kill -0 $pid 2>/dev/null || { cat "$work/sb.log"; exit 1; }; sleep 0.05; done
  floor+=("$(awk -v a="$(now)" -v b="$t0" 'BEGIN{print a-b}')")
  kill $pid; wait $pid 2>/dev/null || true

  port=$(free_port)
  t0=$(now)
  ./bin/tidegate dev --addr "127.0.0.1:$port" --dir "$work/dev" --api-key bench 2>"$work/dev.log" & pid=$!
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do kill -0 $pid 2>/dev/null || { cat "$work/dev.log"; exit 1; }; sleep 0.05; done
  dev+=("$(awk -v a="$(now)" -v b="$t0" 'BEGIN{print a-b}')")
  kill -INT $pid; wait $pid 2>/dev/null || true
  rm -rf "$work"
  printf 'bench devstart: run %d: stand-ins alone %.2fs, tidegate dev to healthy %.2fs\n' "$i" "${floor[-1]}" "${dev[-1]}" >&2
done
f=$(printf '%s\n' "${floor[@]}" | median)
d=$(printf '%s\n' "${dev[@]}" | median)
printf '| make dev to healthy API (tools cached) | %.2f s | stand-ins alone %.2f s | %.2f× |\n' "$d" "$f" "$(awk -v a="$d" -v b="$f" 'BEGIN{print a/b}')"
