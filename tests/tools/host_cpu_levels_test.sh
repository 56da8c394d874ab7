#!/usr/bin/env bash
# Host kernels per x86-64 level from the command line: bef-compile writes
# one host image per level (--host-cpu restricts or adds levels), bef-dump
# lists them and marks the one this machine runs, bef-run's device line
# names that level, and KILN_HOST_CPU_LEVEL=x86-64-v2 runs the baseline code
# to the same results.
#
#   tests/tools/host_cpu_levels_test.sh bef-compile bef-dump bef-run [repo root]
set -u
BEF_COMPILE=${1:?usage: host_cpu_levels_test.sh bef-compile bef-dump bef-run [root]}
BEF_DUMP=${2:?missing bef-dump}
BEF_RUN=${3:?missing bef-run}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${4:-$(cd "$HERE/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME="$TMP/xdg-cache"
unset KILN_HOST_CPU_LEVEL
# shellcheck source=cli_test_lib.sh
source "$HERE/cli_test_lib.sh"
MLP="$ROOT/examples/mlp.hlo"

# --- the default levels --------------------------------------------------------
CLI_TOOL=bef-compile
run "$BEF_COMPILE" "$MLP" -o "$TMP/mlp.bef" --quiet
expect_code 0 "compile"
run "$BEF_DUMP" "$TMP/mlp.bef"
expect_code 0 "bef-dump"
host_lines=$(printf '%s\n' "$out" | grep '^  host-x86_64 (host ')
checks=$((checks + 1))
[[ $(printf '%s\n' "$host_lines" | sed 's/^  host-x86_64 (host \(x86-64-v[0-9]\).*/\1/' | tr '\n' ' ') == \
   "x86-64-v2 x86-64-v3 x86-64-v4 " ]] || fail "one host image per level, lowest first: [$host_lines]"
checks=$((checks + 1))
[[ $(printf '%s\n' "$host_lines" | grep -c ', runs here)') == 1 ]] || fail "one image runs here: [$host_lines]"
here=$(printf '%s\n' "$host_lines" | grep ', runs here)' | sed 's/^  host-x86_64 (host \(x86-64-v[0-9]\).*/\1/')

run "$BEF_RUN" "$TMP/mlp.bef" --device=host --iterations=1
expect_code 0 "bef-run"
device_line=$(printf '%s\n' "$out" | grep '^device: ')
checks=$((checks + 1))
[[ $device_line == "device: host: x86-64, "*" thread"*", $here kernels" ]] ||
  fail "device line names the level bef-dump marks ($here): [$device_line]"
results=$(printf '%s\n' "$out" | grep -v '^device: \|^transfers: \|^latency')

KILN_HOST_CPU_LEVEL=x86-64-v2 run "$BEF_RUN" "$TMP/mlp.bef" --device=host --iterations=1
expect_code 0 "bef-run at x86-64-v2"
expect_out_has ", x86-64-v2 kernels" "forced level on the device line"
checks=$((checks + 1))
[[ $(printf '%s\n' "$out" | grep -v '^device: \|^transfers: \|^latency') == "$results" ]] ||
  fail "x86-64-v2 results differ from $here's"

# --- --host-cpu ------------------------------------------------------------------
run "$BEF_COMPILE" "$MLP" -o "$TMP/v2.bef" --quiet --host-cpu=x86-64-v2
expect_code 0 "compile x86-64-v2 only"
run "$BEF_DUMP" "$TMP/v2.bef"
checks=$((checks + 1))
[[ $(printf '%s\n' "$out" | grep -c '^  host-x86_64 (host ') == 1 ]] || fail "--host-cpu=x86-64-v2: [$out]"
CLI_TOOL=bef-run
KILN_HOST_CPU_LEVEL=x86-64-v4 run "$BEF_RUN" "$TMP/v2.bef" --device=host
expect_code 1 "forced level the artifact lacks"
expect_err_line "KILN_HOST_CPU_LEVEL=x86-64-v4: the artifact has host kernels for x86-64-v2 only" "missing level"

CLI_TOOL=bef-compile
run "$BEF_COMPILE" "$MLP" -o "$TMP/native.bef" --quiet --host-cpu=native,x86-64-v3
expect_code 0 "compile x86-64-v3 and native"
run "$BEF_DUMP" "$TMP/native.bef"
expect_out_has "  host-x86_64 (host x86-64-v3)" "x86-64-v3 image"
expect_out_has "  host-x86_64 (host native: $here" "native image names this machine's level"
checks=$((checks + 1))
[[ $(printf '%s\n' "$out" | grep '(host native: ') == *", runs here)"* ]] || fail "the native image runs here: [$out]"

run "$BEF_COMPILE" "$MLP" -o "$TMP/bad.bef" --host-cpu=x86-64-v2,pentium
expect_code 1 "unknown level"
expect_err_line "--host-cpu: unknown host CPU level 'pentium'" "unknown level"

report host_cpu_levels_test
