#!/usr/bin/env bash
# ThreadSanitizer run of the load tests: 8 threads x 1,000 executions of the
# README example on one loaded executable, on the host, and a multi-stream
# program's streams on the host's thread pool from two threads, then, when the
# ordinary build has the CUDA emulator, the same on the emulated device
# (about 30 s under TSan) and the device-fault tests (injected faults, also
# under 4 concurrent threads). The runtime's CUDA backend is instrumented,
# the emulator library it loads is not.
#
# Builds only the runtime and tests/load's binaries with
# -fsanitize=thread in build-tsan/ (no LLVM/MLIR code is compiled there),
# and runs them on the .bef files that the ordinary build's bef-compile
# makes (build/tests/load/*.bef, built first if missing). Not part of the
# default test run (it takes minutes on 2 cores); exits non-zero when TSan
# reports a race or a result is wrong.
#
# Usage: scripts/tsan.sh [iterations per thread, default 1000]
set -euo pipefail
cd "$(dirname "$0")/.."
ITERATIONS=${1:-1000}
BUILD_DIR=${KILN_BUILD_DIR:-build}
TSAN_DIR=${KILN_TSAN_BUILD_DIR:-build-tsan}
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true

# The .bef (and the emulator, when this build has one) from the ordinary build.
KILN_BUILD_DIR=$BUILD_DIR bash scripts/build.sh load_test_artifact
EMULATOR=$PWD/$BUILD_DIR/cuda_emulator/libkiln_cuda_emulator.so
if grep -q "^build cuda_emulator/libkiln_cuda_emulator.so" "$BUILD_DIR/build.ninja"; then
  KILN_BUILD_DIR=$BUILD_DIR bash scripts/build.sh kiln_cuda_emulator
fi
if [ ! -f "$TSAN_DIR/build.ninja" ]; then
  cmake -S . -B "$TSAN_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_CXX_FLAGS=-fsanitize=thread \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
fi
cmake --build "$TSAN_DIR" -- concurrency_load_test program_streams_load_test $([ -f "$EMULATOR" ] && echo device_fault_test)

# halt_on_error: the first race fails the run; second_deadlock_stack for
# lock-order reports; the suppressions cover what the uninstrumented
# emulator hides from TSan (see the file).
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan_suppressions.txt ${TSAN_OPTIONS:-}"
export KILN_LOAD_BEF="$PWD/$BUILD_DIR/tests/load/mlp.bef" KILN_LOAD_ITERATIONS="$ITERATIONS"
KILN_LOAD_DEVICE=host "$TSAN_DIR/tests/load/concurrency_load_test"
"$TSAN_DIR/tests/load/program_streams_load_test"
if [ -f "$EMULATOR" ]; then
  KILN_LOAD_DEVICE=cuda KILN_CUDA_EMULATOR="$EMULATOR" "$TSAN_DIR/tests/load/concurrency_load_test"
  KILN_LOAD_LIBRARY_BEF="$PWD/$BUILD_DIR/tests/load/library_calls.bef" KILN_CUDA_EMULATOR="$EMULATOR" \
    "$TSAN_DIR/tests/load/device_fault_test"
fi
