#!/usr/bin/env bash
# tools.sh installs everything the sandbox (shared/dev/sandbox) starts, into the cache outside the
# clone: the AWS stand-ins (tools-aws.sh), the OpenAPI linter `make test` runs (tools-redocly.sh),
# the accessibility checker the console's browser test injects (tools-axe.sh), the Kubernetes
# binaries (tools-kube.sh), then bwrap, which `tidegate dev` runs hosted apps under
# (tools-hostrun.sh), and the browser the console's tests drive (tools-browser.sh, a system
# package). Each step is idempotent and pinned, so a warm run only checks version stamps. The
# make targets call this.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Both steps read TIDEGATE_CACHE; settling it here keeps them on one folder.
export TIDEGATE_CACHE="${TIDEGATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tidegate}"

began=$(date +%s%N)
done_steps=()
run() {
	local name=$1 script="$here/$2"
	bash "$script" || {
		printf 'tools: %s failed (%s)\n' "$name" "$script" >&2
		exit 1
	}
	done_steps+=("$name")
}

run "AWS stand-ins" tools-aws.sh
# After the AWS step: the linter and the checker install with its npm; the linter runs on its
# Node 22, the checker in the browser.
run "OpenAPI linter" tools-redocly.sh
run "accessibility checker" tools-axe.sh
if [[ -f "$here/tools-kube.sh" ]]; then
	run "Kubernetes" tools-kube.sh
else
	printf 'tools: %s is missing; skipping the Kubernetes binaries\n' "$here/tools-kube.sh" >&2
fi
run "process sandbox" tools-hostrun.sh
run "Chromium" tools-browser.sh

elapsed_ms=$((($(date +%s%N) - began) / 1000000))
steps=$(IFS=,; echo "${done_steps[*]}")
printf 'tools: %s ready in %s (%d.%03d s)\n' "${steps//,/ and }" \
	"$TIDEGATE_CACHE" $((elapsed_ms / 1000)) $((elapsed_ms % 1000))
