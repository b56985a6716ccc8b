#!/usr/bin/env bash
# tools-hostrun.sh installs bubblewrap (bwrap), which `tidegate dev` runs hosted apps' processes
# under (shared/dev/hostrun): Debian's package, skipped when bwrap is already on PATH. Without it
# `tidegate dev` still runs, registering hosts on their apps' behalf and saying so. Node and
# Python are not installed here: the processes use the machine's own node and python3, as an app
# developer has them.
set -euo pipefail

say() { printf 'tools-hostrun: %s\n' "$*" >&2; }

if command -v bwrap >/dev/null 2>&1; then
	exit 0
fi
if [[ $EUID -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
	say "bwrap is missing: install bubblewrap (Debian and Ubuntu: sudo apt-get install -y bubblewrap) so 'tidegate dev' runs hosted apps for real; until then it registers their hosts on their behalf"
	exit 0
fi
say "apt-get install bubblewrap"
DEBIAN_FRONTEND=noninteractive apt-get update -qq || { say "apt-get update failed"; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null || { say "apt-get install bubblewrap failed"; exit 1; }
say "installed $(bwrap --version)"
