#!/usr/bin/env bash
# Host latency of multi-stream programs: compiles each module with
# --streams=1 and --streams=N (default 4), prints the streams, events and
# allocation bytes bef-dump reports and bef-run's latency line over
# --iterations runs, alternating the two builds $REPEATS times (default 2)
# so that load on the machine affects both alike.
#
# Usage: bench/streams/streams_bench.sh [MODULE.hlo...]
#   (default: bench/streams/parallel_chains.hlo and the corpus's
#   xnn.parallel_dots.optimized.hlo). Env: KILN_BUILD_DIR (build),
#   STREAMS (4), ITERATIONS (100), REPEATS (2).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${KILN_BUILD_DIR:-build}
STREAMS=${STREAMS:-4}
ITERATIONS=${ITERATIONS:-100}
REPEATS=${REPEATS:-2}
if [ $# -eq 0 ]; then
  set -- bench/streams/parallel_chains.hlo ../shared/hlo-corpus/openxla_benchmarks/cpu_bench/xnn.parallel_dots.optimized.hlo
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for module in "$@"; do
  name=$(basename "$module" .hlo)
  for s in 1 "$STREAMS"; do
    "$BUILD/tools/bef-compile/bef-compile" "$module" -o "$work/$name.$s.bef" --streams="$s" --no-cache --quiet
    echo "$name --streams=$s: $("$BUILD/tools/bef-dump/bef-dump" "$work/$name.$s.bef" | grep -E '^(program|allocations):' | tr '\n' ';')"
  done
  for _ in $(seq "$REPEATS"); do
    for s in 1 "$STREAMS"; do
      line=$("$BUILD/tools/bef-run/bef-run" "$work/$name.$s.bef" --iterations="$ITERATIONS" --output= 2>&1 | grep '^latency')
      echo "  --streams=$s $line"
    done
  done
done
