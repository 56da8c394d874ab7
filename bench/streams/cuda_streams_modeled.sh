#!/usr/bin/env bash
# Modeled overlap of program streams on the emulated CUDA device: compiles
# bench/streams/two_gemms.hlo (two independent 512x512x512 f32 GEMMs) for
# CUDA with --streams=1 and --streams=2 and runs each under kiln's CUDA
# emulator with --profile, CUDA graphs off and on (three executions, the
# third a graph replay). Prints the profile's GEMM rows (start, duration,
# program stream) and the execution's total. The times are modeled: the
# emulator's H100 timing model (docs/gpu_timing_model.md), which gives each
# stream the whole device, so the overlap is an upper bound on the gain.
#
# Usage: bench/streams/cuda_streams_modeled.sh [MODULE.hlo]
#   Env: KILN_BUILD_DIR (build).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${KILN_BUILD_DIR:-build}
module=${1:-bench/streams/two_gemms.hlo}
emulator=$(find "$BUILD/cuda_emulator" -name 'libkiln_cuda_emulator.so' | head -1)
[ -n "$emulator" ] || { echo "no libkiln_cuda_emulator.so under $BUILD/cuda_emulator" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
name=$(basename "$module" .hlo)
for s in 1 2; do
  "$BUILD/tools/bef-compile/bef-compile" "$module" -o "$work/$name.$s.bef" --targets=cuda --tf32=off \
    --streams="$s" --no-cache --quiet
  for graphs in off on; do
    echo "== $name --streams=$s --cuda_graphs=$graphs (modeled)"
    KILN_CUDA_EMULATOR="$emulator" "$BUILD/tools/bef-run/bef-run" "$work/$name.$s.bef" --device=cuda \
      --cuda_graphs="$graphs" --profile --iterations=3 2>&1 | grep -E "^ .*(gemm|total) " | cut -c1-220 || true
  done
done
