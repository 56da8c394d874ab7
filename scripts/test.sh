#!/usr/bin/env bash
# The README's test command: installs every dependency, builds kiln and runs
# the whole test suite with ctest. CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup_python.sh || echo "test: jax setup failed; XLA cross-check tests will be SKIPPED"
bash scripts/build.sh
# Tests that run bef-compile pass --no-cache or a cache of their own; should
# one not, its compile cache ($XDG_CACHE_HOME/kiln) is a private temporary
# one, never the user's ~/.cache.
XDG_CACHE_HOME=$(mktemp -d)
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
ctest --test-dir "${KILN_BUILD_DIR:-build}" --output-on-failure -j2 --timeout 1200
