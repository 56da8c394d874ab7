#!/usr/bin/env bash
# Modeled overlap of an async all-reduce with compute on 2 emulated CUDA
# devices (runtime/cuda_comm_stream.h): compiles
# bench/streams/allreduce_overlap.hlo (a 16 MiB all-reduce-start, an
# independent 512x512x512 f32 GEMM, the done) and allreduce_sync.hlo (the
# same with a synchronous all-reduce) for CUDA and runs each with
# bef-run --num_devices=2 under kiln's CUDA emulator and its NCCL double,
# --profile, CUDA graphs off and on (three executions each). Prints device
# 0's profile rows and the execution's total. The times are modeled (the
# emulator's H100 timing model and the NCCL double's NVLink figures), not
# measured.
#
# Usage: bench/streams/cuda_collective_overlap_modeled.sh
#   Env: KILN_BUILD_DIR (build).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${KILN_BUILD_DIR:-build}
emulator=$(find "$BUILD/cuda_emulator" -name 'libkiln_cuda_emulator.so' | head -1)
[ -n "$emulator" ] || { echo "no libkiln_cuda_emulator.so under $BUILD/cuda_emulator" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for name in allreduce_sync allreduce_overlap; do
  "$BUILD/tools/bef-compile/bef-compile" "bench/streams/$name.hlo" -o "$work/$name.bef" --targets=cuda --tf32=off \
    --no-cache --quiet
  for graphs in off on; do
    echo "== $name --cuda_graphs=$graphs (modeled, device 0)"
    KILN_CUDA_EMULATOR="$emulator" "$BUILD/tools/bef-run/bef-run" "$work/$name.bef" --device=cuda --num_devices=2 \
      --cuda_graphs="$graphs" --profile --iterations=3 --output= --output= 2>&1 |
      grep -E "^ .*(total|all-reduce|gemm|copy|collective-done) " | cut -c1-160 || true
  done
done
