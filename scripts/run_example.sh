#!/usr/bin/env bash
# The README's main command: installs dependencies, builds kiln, compiles
# examples/mlp.hlo once into a .bef artifact and runs the artifact with
# bef-run (the runtime alone, no compiler): results checked against values
# worked out by hand (derivation in examples/README.md), then the per-HLO
# profile. When the CUDA emulator is built (CUDA headers present), the same
# artifact then runs on the emulated H100 (--device=cuda), checked against
# the same values, with the emulator's per-thunk counters.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh bef-compile bef-run
EMULATOR=""
if [ -d /usr/local/cuda/include ]; then
  bash scripts/build.sh kiln_cuda_emulator
  EMULATOR="$PWD/${KILN_BUILD_DIR:-build}/cuda_emulator/libkiln_cuda_emulator.so"
fi
BUILD="${KILN_BUILD_DIR:-build}"
OUT="$BUILD/examples"
mkdir -p "$OUT"
# --device=auto: CUDA when a GPU is usable (then compile for it too).
TARGETS=host
if command -v ptxas >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/ptxas ]; then TARGETS=host,cuda; fi
"$BUILD/tools/bef-compile/bef-compile" examples/mlp.hlo -o "$OUT/mlp.bef" --targets=$TARGETS
row="[0.1015363 0.1674051 0.2760043 0.4550542]"
run() {
  "$BUILD/tools/bef-run/bef-run" "$OUT/mlp.bef" "$@" \
    --input=4x8xf32=1 --input=8x16xf32=0.125 \
    --input="16xf32=-0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5" \
    --input=16x4xf32=0.25 --input="4xf32=0 1 2 3" \
    --output=- --output=- \
    --expected_output="4x4xf32=$row$row$row$row" \
    --expected_output="4x4xf32=[1 2 3 4][1 2 3 4][1 2 3 4][1 2 3 4]" \
    --profile
}
run --device=auto --iterations=20 --warmup=3
if [ -n "$EMULATOR" ] && [ -f "$EMULATOR" ]; then
  echo
  echo "== the same artifact on kiln's CUDA emulator (KILN_CUDA_EMULATOR) =="
  KILN_CUDA_EMULATOR="$EMULATOR" run --device=cuda
fi
