#!/usr/bin/env bash
# bef-compile from the command line: artifacts, dumps, stats, the
# middle-end-only mode, deterministic output, a must-alias module run with
# bef-run --donate, an SPMD module on 2 host devices (bef-run --num_devices,
# per-device inputs and outputs), and one-line errors.
#
#   tests/tools/bef_compile_test.sh path/to/bef-compile path/to/bef-run [repo root]
set -u
BEF_COMPILE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
BEF_RUN=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
ROOT=${3:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
# The compile cache's default place is $XDG_CACHE_HOME/kiln: a private one,
# never the user's.
export XDG_CACHE_HOME="$TMP/xdg-cache"

failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { checks=$((checks + 1)); eval "$1" || fail "$2"; }
run() {
  "$@" >"$TMP/out" 2>"$TMP/err"
  code=$?
  out=$(cat "$TMP/out")
  err=$(cat "$TMP/err")
}
expect_error() {  # exit 1 and exactly one line "bef-compile: error: ...<text>..."
  checks=$((checks + 1))
  local lines
  lines=$(printf '%s' "$err" | grep -c '')
  [[ $code == 1 && $lines == 1 && $err == "bef-compile: error: "* && $err == *"$1"* ]] ||
    fail "$2: exit $code, stderr [$err], expected one error line containing [$1]"
}

MLP="$ROOT/examples/mlp.hlo"

# --- compile, dumps, stats -----------------------------------------------------
run "$BEF_COMPILE" "$MLP" -o mlp.bef --dump-dir=dump --stats=stats.json --time-passes
check '[[ $code == 0 && -s mlp.bef ]]' "compile: exit $code, $err"
for f in module.before_optimizations.hlo module.after_optimizations.hlo fusion_report.txt \
         buffer_assignment.txt kernels.mlir thunk_program.txt; do
  check "[[ -s dump/$f ]]" "dump file $f missing"
done
check 'ls dump | grep -q "^module\.[0-9][0-9]\.kernel-fusion\.hlo$"' "no per-pass dump of kernel-fusion"
check '[[ $out == *"kernel-fusion"* && $out == *"total"* ]]' "--time-passes table: [$out]"
check 'grep -q "^total: [0-9]* fusions" dump/fusion_report.txt' "fusion report total line"
check 'python3 - <<PY
import json
s = json.load(open("stats.json"))
need = ["instructions", "instructions_after_passes", "fusions", "kernels", "distinct_kernels", "thunks", "bytes_accessed_unfused",
        "bytes_accessed_fused", "temp_peak_bytes", "temp_lower_bound_bytes", "compile_seconds", "pass_seconds"]
assert all(k in s for k in need), s
assert s["instructions"] == 33 and s["kernels"] >= 1 and s["thunks"] >= s["kernels"], s
assert 1 <= s["distinct_kernels"] <= s["kernels"], s
assert s["bytes_accessed_fused"] <= s["bytes_accessed_unfused"], s
assert s["temp_peak_bytes"] >= s["temp_lower_bound_bytes"], s
assert "kernel-fusion" in s["pass_seconds"], s
PY' "stats.json fields"

# --dump-passes selects the per-pass dumps.
run "$BEF_COMPILE" "$MLP" -o mlp2.bef --dump-dir=dump2 --dump-passes='^dot-'
check '[[ $code == 0 ]]' "dump-passes: $err"
check '[[ $(ls dump2 | grep -c "^module\.[0-9]") == 1 ]] && ls dump2 | grep -q "dot-canonicalization"' \
  "--dump-passes=^dot- dumped: $(ls dump2 | tr '\n' ' ')"

# The same input gives the same bytes, and the artifact runs.
check 'cmp -s mlp.bef mlp2.bef' "two compilations differ"
run "$BEF_RUN" mlp.bef --device=host --output= --output=
check '[[ $code == 0 ]]' "bef-run on the compiled artifact: $err"

# A must-alias result runs in its donated parameter's buffer: bef-run needs
# --donate (the result run gives (1 2 3 4) + 1; the timed runs donate their
# own copies).
cat >inc.hlo <<'HLO'
HloModule inc, input_output_alias={ {}: (0, {}, must-alias) }
ENTRY main {
  p0 = f32[4] parameter(0)
  one = f32[] constant(1)
  ob = f32[4] broadcast(one), dimensions={}
  ROOT y = f32[4] add(p0, ob)
}
HLO
run "$BEF_COMPILE" inc.hlo -o inc.bef
check '[[ $code == 0 ]]' "compile a must-alias module: $err"
run "$BEF_RUN" inc.bef "--input=4xf32=1 2 3 4"
check '[[ $code == 1 && $err == "bef-run: error: "*"must be donated: it must alias output {}" ]]' \
  "must-alias without --donate: exit $code, stderr [$err]"
run "$BEF_RUN" inc.bef "--input=4xf32=1 2 3 4" --donate --iterations=2 --warmup=2 \
  "--expected_output=4xf32=2 3 4 5"
check '[[ $code == 0 && $out == *"[SUCCESS]"* ]]' "--donate: exit $code, stdout [$out], stderr [$err]"

# --- compile cache ---------------------------------------------------------------------
# By default bef-compile caches in $XDG_CACHE_HOME/kiln; a second compile is
# an artifact hit and writes the same bytes as the uncached compile above.
run "$BEF_COMPILE" "$MLP" -o cold.bef --stats=cold.json
check '[[ $code == 0 ]] && ls "$XDG_CACHE_HOME/kiln" | grep -q "\.kce$"' "default cache dir: exit $code, $err"
run "$BEF_COMPILE" "$MLP" -o warm.bef --stats=warm.json
check 'cmp -s cold.bef mlp.bef && cmp -s warm.bef mlp.bef' "cached compiles differ from the uncached one"
check 'python3 -c "import json,sys; c,w=(json.load(open(f)) for f in (\"cold.json\",\"warm.json\")); sys.exit(not (c[\"artifact_cache_misses\"]==1 and w[\"artifact_cache_hits\"]==1 and c[\"kernels_compiled\"]+c[\"host_objects_shared\"]==3*c[\"distinct_kernels\"]>0 and c[\"kernels_from_cache\"]==0))"' \
  "artifact cache miss then hit, every kernel compiled cold (once per host CPU level, or shared from the lowest), in --stats"
run "$BEF_COMPILE" "$MLP" -o own.bef --cache-dir=own-cache
check '[[ $code == 0 ]] && ls own-cache | grep -q "\.kce$" && cmp -s own.bef mlp.bef' "--cache-dir: exit $code, $err"
# Two processes compiling into one fresh cache at once.
"$BEF_COMPILE" "$MLP" -o par1.bef --cache-dir=shared-cache --targets=host,cuda 2>par1.err &
pid1=$!
"$BEF_COMPILE" "$MLP" -o par2.bef --cache-dir=shared-cache --targets=host,cuda 2>par2.err &
pid2=$!
wait $pid1; code1=$?
wait $pid2; code2=$?
run "$BEF_COMPILE" "$MLP" -o par0.bef --no-cache --targets=host,cuda
check '[[ $code1 == 0 && $code2 == 0 ]] && cmp -s par1.bef par0.bef && cmp -s par2.bef par0.bef' \
  "concurrent compiles into one cache: exit $code1/$code2, $(cat par1.err par2.err)"
rm -rf "$XDG_CACHE_HOME"
run "$BEF_COMPILE" "$MLP" -o none.bef --no-cache --stats=none.json
check '[[ $code == 0 && ! -e $XDG_CACHE_HOME/kiln ]] && cmp -s none.bef mlp.bef' "--no-cache wrote a cache: $err"
run "$BEF_COMPILE" "$MLP" -o x.bef --cache-max-bytes=0
expect_error "--cache-max-bytes must be positive" "zero cache bound"
run "$BEF_COMPILE" "$MLP" -o x.bef --no-cache --cache-dir=own-cache
expect_error "--no-cache and --cache-dir contradict" "no-cache with a cache dir"
printf 'x' >not-a-dir
run "$BEF_COMPILE" "$MLP" -o x.bef --cache-dir=not-a-dir/sub
expect_error "cannot create compile cache directory not-a-dir/sub" "unusable --cache-dir"
# --- progress line -------------------------------------------------------------------
# Shown only on a terminal: stderr of the compiles above (a file) is empty;
# under a pseudo-terminal (script) the passes and codegen lines appear,
# and --quiet hides them.
run "$BEF_COMPILE" "$MLP" -o quiet.bef --no-cache
check '[[ $code == 0 && -z $err ]]' "progress written to a non-terminal stderr: [$err]"
if command -v script >/dev/null; then
  tty_out=$(script -qec "'$BEF_COMPILE' '$MLP' -o tty.bef --no-cache" /dev/null 2>&1)
  check '[[ $tty_out == *"[passes 1/"* && $tty_out == *"[codegen 1/"*"distinct kernels of"* ]]' \
    "no progress line on a terminal: [$tty_out]"
  tty_out=$(script -qec "'$BEF_COMPILE' '$MLP' -o tty.bef --quiet --no-cache" /dev/null 2>&1)
  check '[[ $tty_out != *"[passes"* && $tty_out != *"[codegen"* ]]' "--quiet still shows progress: [$tty_out]"
fi

# --- middle-end only -----------------------------------------------------------------
cat >unsupported.hlo <<'HLO'
HloModule s
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[4,4] parameter(0)
  ROOT u = f32[4,4] custom-call(x), custom_call_target="kiln_test_unsupported"
}
HLO
run "$BEF_COMPILE" unsupported.hlo --stop-after=buffer-assignment --stats=- --dump-dir=mid
check '[[ $code == 0 && $out == *"\"temp_peak_bytes\""* && -s mid/buffer_assignment.txt && ! -e mid/thunk_program.txt ]]' \
  "--stop-after on an op without kernels: exit $code, $err"

# --- one-line errors -------------------------------------------------------------------
run "$BEF_COMPILE" unsupported.hlo -o s.bef
expect_error "bef-compile does not support custom-call target 'kiln_test_unsupported'" "unsupported op"
check '[[ ! -e s.bef ]]' "a failed compilation left an output file"
run "$BEF_COMPILE" missing.hlo -o x.bef
expect_error "missing.hlo" "missing input"
run "$BEF_COMPILE" "$MLP"
expect_error "missing -o" "no output"
run "$BEF_COMPILE" "$MLP" -o x.bef --targets=tpu
expect_error "unknown target 'tpu'" "unknown target"
run "$BEF_COMPILE" "$MLP" -o x.bef --cuda-arch=ampere --targets=cuda
expect_error "invalid CUDA arch 'ampere'" "bad arch"
run "$BEF_COMPILE" "$MLP" -o x.bef --dump-dir=d3 --dump-passes='('
expect_error "invalid --dump-passes regex" "bad regex"
run "$BEF_COMPILE" "$MLP" --stop-after=codegen
expect_error "unknown --stop-after 'codegen'" "bad stop-after"
printf 'HloModule m\nENTRY e {\n  ROOT x = f32[2] add(\n}\n' >bad.hlo
run "$BEF_COMPILE" bad.hlo -o x.bef
expect_error "bad.hlo:" "malformed HLO"

# An SPMD module on 2 host devices: device d adds its replica id to its own
# input, then the all-reduce sums both: (1+0 + 10+1, 2+0 + 20+1) = (12, 23)
# on each; the all-gather concatenates the two inputs plus ids.
cp "$ROOT/tests/tools/spmd_two_replicas.hlo" spmd.hlo
run "$BEF_COMPILE" spmd.hlo -o spmd.bef
check '[[ $code == 0 ]]' "spmd compiles: $err"
run "$BEF_RUN" spmd.bef --num_devices=2 "--input=2xf32=1 2" "--input=2xf32=10 20"
check '[[ $code == 0 && $out == "device 0:
2xf32=12 23
4xf32=1 2 11 21
device 1:
2xf32=12 23
4xf32=1 2 11 21" ]]' "spmd on 2 devices: exit $code [$out] [$err]"
run "$BEF_RUN" spmd.bef --num_devices=2 "--input=2xf32=5 5" "--expected_output=2xf32=11 11" \
  "--expected_output=4xf32=5 5 6 6"
check '[[ $code == 0 ]]' "spmd with shared inputs and expected outputs: exit $code [$out] [$err]"
# --profile: device 0's table, then its collectives' bytes (f32[2] = 8; the
# all-gather's result 16) and bus factors for 2 devices (all-reduce 2 (n-1)/n
# = 1, all-gather (n-1)/n = 0.5).
run "$BEF_RUN" spmd.bef --num_devices=2 --profile "--input=2xf32=1 2"
check '[[ $code == 0 && $out == *"device 0 profile:"*"collectives (nccl-tests"* &&
         $out =~ \ 8\ +2\ +1\.000\ .*all-reduce && $out =~ \ 16\ +2\ +0\.500\ .*all-gather ]]' \
  "spmd --profile shows the collectives' traffic: exit $code [$out] [$err]"
run "$BEF_RUN" spmd.bef --num_devices=3
check '[[ $code == 1 && $err == "bef-run: error: the module runs on 2 devices (2 replicas x 1 partitions), not --num_devices=3" ]]' \
  "spmd device count: [$err]"
run "$BEF_RUN" spmd.bef
check '[[ $code == 1 && $err == *"load it once per device"*"--num_devices=2"* ]]' "spmd on one device: [$err]"

echo "bef_compile_test: $((checks - failures)) of $checks checks passed"
[[ $failures == 0 ]]
