#!/usr/bin/env bash
# The README's test command: installs every dependency, builds kiln and runs
# the whole test suite with ctest. CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup_python.sh || echo "test: jax setup failed; XLA cross-check tests will be SKIPPED"
bash scripts/build.sh
ctest --test-dir "${KILN_BUILD_DIR:-build}" --output-on-failure -j2 --timeout 1200
