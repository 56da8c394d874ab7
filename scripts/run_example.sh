#!/usr/bin/env bash
# The README's main command: installs dependencies, builds kiln, then parses,
# verifies and evaluates examples/mlp.hlo with the reference evaluator,
# printing the results and checking them against values computed by hand
# (derivation in examples/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh hlo-run
HLO_RUN="${KILN_BUILD_DIR:-build}/tools/hlo-run/hlo-run"
"$HLO_RUN" --check examples/mlp.hlo
row="[0.1015363 0.1674051 0.2760043 0.4550542]"
"$HLO_RUN" --reference examples/mlp.hlo --print_timing \
  --input=4x8xf32=1 --input=8x16xf32=0.1 \
  --input="16xf32=-0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1" \
  --input=16x4xf32=0.25 --input="4xf32=0 1 2 3" \
  --output=- --output=- \
  --expected_output="4x4xf32=$row$row$row$row" \
  --expected_output="4x4xf32=[1 2 3 4][1 2 3 4][1 2 3 4][1 2 3 4]"
