#!/usr/bin/env bash
# End-to-end tests of bef-run on hand-built .bef files (see
# bef_run_test_artifacts.cc): results for hand-computed inputs,
# --expected_output, .npy round trips, --profile, --trace, --export_profile,
# --print_memory, timing, and one-line errors.
#
#   tests/tools/bef_run_test.sh path/to/bef-run path/to/bef_run_test_artifacts path/to/kernels.so
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

BEF_RUN=${1:?usage: bef_run_test.sh bef-run bef_run_test_artifacts kernels.so}
GEN=${2:?missing bef_run_test_artifacts}
KERNELS=${3:?missing the kernels shared object}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

CLI_TOOL=bef-run
# shellcheck source=cli_test_lib.sh
source "$HERE/cli_test_lib.sh"

"$GEN" "$TMP" "$KERNELS" || { echo "FAIL: cannot generate the artifacts"; exit 1; }

A="--input=2x3xf32=1 2 3 4 5 6"
B="--input=3x2xf32=7 8 9 10 11 12"

# --- results -------------------------------------------------------------------
# [[1 2 3][4 5 6]] x [[7 8][9 10][11 12]] = [[1*7+2*9+3*11 1*8+2*10+3*12][..]]
# = [[58 64][139 154]]; the second result is the constant {10 20 30 40}.
run "$BEF_RUN" gemm.bef "$A" "$B"
expect_code 0 "gemm"
expect_out "2x2xf32=[58 64][139 154]
2x2xf32=[10 20][30 40]" "gemm"

# a + b = [11 22 33 44]; the while loop adds a three times: [3 6 9 12];
# sel = 1 picks branch 1, the 2.0 splat.
K=(kernels.bef "--input=4xf32=1 2 3 4" "--input=4xf32=10 20 30 40")
run "$BEF_RUN" "${K[@]}" --input=s32=1 --device=host
expect_code 0 "kernels"
expect_out "4xf32=11 22 33 44
4xf32=3 6 9 12
4xf32=2 2 2 2" "kernels"

run "$BEF_RUN" "${K[@]}" --input=s32=0 --output= --output= --output=-
expect_code 0 "conditional branch 0"
expect_out "4xf32=1 1 1 1" "conditional branch 0"

# An out-of-range index runs the last branch (XLA semantics).
run "$BEF_RUN" "${K[@]}" --input=s32=7 --output= --output= --output=-
expect_code 0 "conditional out of range"
expect_out "4xf32=2 2 2 2" "conditional out of range"

# Column-major f32[2,3]{0,1} [[1 2 3][4 5 6]] is 1 4 2 5 3 6 in memory; the
# program copies the bytes into an f32[6].
run "$BEF_RUN" layout.bef "$A"
expect_code 0 "column-major input"
expect_out "6xf32=1 4 2 5 3 6" "column-major input"

# --- --expected_output --------------------------------------------------------
run "$BEF_RUN" gemm.bef "$A" "$B" "--expected_output=2x2xf32=58 64 139 154" \
  "--expected_output=2x2xf32=[10 20][30 40]"
expect_code 0 "expected outputs match"
expect_out "[OK] result[0] matched
[OK] result[1] matched
[SUCCESS] 2 results matched the expected outputs" "expected outputs match"

run "$BEF_RUN" gemm.bef "$A" "$B" "--expected_output=2x2xf32=58 64 140 154" "--expected_output=(ignored)"
expect_code 1 "expected output mismatch"
expect_out "[FAILED] result[0]: element at index [1, 0] (139) does not match the expected (140)
[SKIPPED] result[1]" "expected output mismatch"

# |139 - 140| = 1 <= atol 1.5.
run "$BEF_RUN" gemm.bef "$A" "$B" "--expected_output=2x2xf32=58 64 140 154" "--expected_output=" --atol=1.5
expect_code 0 "mismatch within --atol"

run "$BEF_RUN" gemm.bef "$A" "$B" --expected_output=f32=1
expect_code 1 "wrong expected_output count"
expect_err_line "the module has 2 results, got 1 --expected_output flags" "wrong expected_output count"

# --- .npy round trip ------------------------------------------------------------
run "$BEF_RUN" gemm.bef "$A" "$B" --output=@dot.npy --output=-
expect_code 0 "npy output"
expect_out "2x2xf32=[10 20][30 40]" "npy output"
checks=$((checks + 1))
# 128-byte .npy header + 4 x 4 bytes.
[[ $(stat -c %s dot.npy 2>/dev/null) == 144 ]] || fail "dot.npy size $(stat -c %s dot.npy 2>/dev/null)"
run "$BEF_RUN" kernels.bef --input=@a.npy --input=@a.npy --input=s32=0 2>/dev/null
expect_code 1 "missing npy input"
expect_err_line "cannot open 'a.npy'" "missing npy input"
# Feed [58 64 139 154] (the dot result, reshaped by value syntax) as a and b.
run "$BEF_RUN" kernels.bef "--input=4xf32=@dot.npy" "--input=4xf32=@dot.npy" --input=s32=0 --output=-
expect_code 1 "npy input of the wrong shape"
expect_err_line "does not match the expected 4xf32" "npy input of the wrong shape"

# --- random inputs ---------------------------------------------------------------
run "$BEF_RUN" gemm.bef --seed=3
expect_code 0 "random inputs"
first=$out
run "$BEF_RUN" gemm.bef --seed=3
checks=$((checks + 1))
[[ -n $first && $out == "$first" ]] || fail "same seed, different outputs"
run "$BEF_RUN" gemm.bef --seed=4
checks=$((checks + 1))
[[ $out != "$first" ]] || fail "different seeds, same outputs"

# --- timing ----------------------------------------------------------------------------
run "$BEF_RUN" gemm.bef "$A" "$B" --output= --output= --iterations=7 --warmup=2
expect_code 0 "timing"
# The reports start with the device they ran on.
checks=$((checks + 1))
[[ $(printf '%s\n' "$out" | head -1) == "device: host: x86-64, "*" thread"* ]] || fail "device line: [$out]"
checks=$((checks + 1))
[[ $out == *$'\n'"transfers: 0 bytes to the device in 0.0 us, 0 bytes back in 0.0 us; execution "*" us (latency of the execution alone, inputs on the device)"* ]] ||
  fail "transfers line (the host reads its inputs where they are): [$out]"
out=$(printf '%s\n' "$out" | grep -v '^device: ' | grep -v '^transfers: ')
checks=$((checks + 1))
[[ $out =~ ^latency\ \(µs\)\ over\ 7\ iterations:\ min\ [0-9.]+\ \ median\ [0-9.]+\ \ mean\ [0-9.]+\ \ p90\ [0-9.]+\ \ max\ [0-9.]+$ ]] ||
  fail "timing line: [$out]"

# --- --profile ---------------------------------------------------------------------------
run "$BEF_RUN" "${K[@]}" --input=s32=1 --output= --output= --output= --profile --iterations=2
expect_code 0 "profile"
profile=$(printf '%s\n' "$out" | grep -v '^latency' | grep -v '^device: ' | grep -v '^transfers: ')
checks=$((checks + 1))
[[ $(printf '%s\n' "$profile" | head -1) == *"% time"*"count"*"total µs"*"median µs"*"GFLOP/s"*"GB/s"*"optimal µs"*"% roofline"*"HLO ops"* ]] ||
  fail "profile header: [$profile]"
# 2 runs: add.1 twice, the loop body 3 x 2 = 6 times, the while 2 times.
row() { printf '%s\n' "$profile" | grep -E " $1( |$)"; }
checks=$((checks + 6))
[[ $(row add.1 | awk '{print $3}') == 2 ]] || fail "add.1 row: [$(row add.1)]"
[[ $(row fusion.3 | awk '{print $3}') == 6 ]] || fail "fusion.3 row: [$(row fusion.3)]"
[[ $(row fusion.3) == *"add.3, get-tuple-element.4, acc=parameter"* ]] || fail "fusion.3 HLO ops: [$(row fusion.3)]"
[[ $(row while.5) == "       -        -        2 "* ]] || fail "while row excluded from %: [$(row while.5)]"
[[ $(row broadcast.7 | awk '{print $3}') == 2 ]] || fail "branch row: [$(row broadcast.7)]"
[[ -z $(row broadcast.6) ]] || fail "the branch not taken has a row"
# The total line closes the report; its count is the leaf executions
# (2 add + 6 body + 2 memset + 2 branch memset = 12) and its total is the sum
# of the leaf rows' totals.
last=$(printf '%s\n' "$profile" | tail -1)
checks=$((checks + 3))
[[ $last == " 100.00%"*" total "*"2 runs"* ]] || fail "total line: [$last]"
[[ $(awk '{print $2}' <<<"$last") == 12 ]] || fail "total count: [$last]"
sum=$(printf '%s\n' "$profile" | awk 'NR > 1 && $1 ~ /%$/ && $0 !~ / total / {s += $4} END {printf "%.2f", s}')
total=$(awk '{printf "%.2f", $3}' <<<"$last")
awk -v a="$sum" -v b="$total" 'BEGIN {exit !(a - b < 0.05 && b - a < 0.05)}' ||
  fail "leaf rows sum to $sum, total line says $total"

# --- --trace -----------------------------------------------------------------------------
run "$BEF_RUN" "${K[@]}" --input=s32=1 --output= --output= --output= --trace=trace.json
expect_code 0 "trace"
checks=$((checks + 1))
python3 - trace.json <<'PY' || fail "trace.json is not the expected Chrome trace"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in events if e["ph"] == "X"]
meta = {e["name"] for e in events if e["ph"] == "M"}
assert {"process_name", "thread_name"} <= meta, meta
names = [e["name"] for e in x if e["cat"] == "thunk"]
# One profiled run: add.1, memset.2, fusion.3 x 3, while.5, broadcast.7, conditional.8.
assert sorted(names) == sorted(["add.1", "memset.2", "fusion.3", "fusion.3", "fusion.3",
                                "while.5", "broadcast.7", "conditional.8"]), names
for e in x:
    assert e["dur"] >= 0 and e["ts"] >= 0 and e["pid"] == 0 and e["tid"] == 0, e
add = next(e for e in x if e["name"] == "add.1")
assert add["args"]["kind"] == "kernel" and add["args"]["flops"] == 4, add
assert add["args"]["bytes_read"] == 32 and add["args"]["hlo"][0]["opcode"] == "add", add
loop = next(e for e in x if e["name"] == "while.5")
for body in (e for e in x if e["name"] == "fusion.3"):
    assert loop["ts"] <= body["ts"] + 1e-3 and body["ts"] + body["dur"] <= loop["ts"] + loop["dur"] + 1e-3
PY

run "$BEF_RUN" gemm.bef "$A" "$B" --trace=no_such_dir/t.json
expect_code 1 "unwritable trace"
expect_err_line "--trace: cannot open 'no_such_dir/t.json'" "unwritable trace"

# --- --export_profile --------------------------------------------------------------------
run "$BEF_RUN" "${K[@]}" --input=s32=1 --output= --output= --output= --export_profile=profile.json \
  --iterations=2
expect_code 0 "export_profile"
checks=$((checks + 1))
python3 - profile.json <<'PY' || fail "profile.json is not the expected profile"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["device"].startswith("host: ") and p["time_source"] == "measured", p
assert p["modeled"] is False and p["results_computed"] is True and "note" not in p, p
assert p["runs"] == 2, p
t = {e["name"]: e for e in p["thunks"]}
# 2 runs: add.1, memset.2, while.5, broadcast.7 and conditional.8 twice each,
# the loop body 3 x 2 = 6 times; the branch not taken (broadcast.6) never.
counts = {name: e["count"] for name, e in t.items()}
assert counts == {"add.1": 2, "memset.2": 2, "fusion.3": 6, "while.5": 2, "broadcast.7": 2,
                  "conditional.8": 2}, counts
for e in p["thunks"]:
    # Host times are measured: no model, no counters.
    assert e["modeled"] is False and e["optimal_us"] is None and "dram_bytes" not in e, e
add = t["add.1"]
assert add["kind"] == "kernel" and add["flops"] == 4 and add["hlo"] == ["add.1"], add
assert t["while.5"]["control_flow"] and t["conditional.8"]["control_flow"], t
assert not add["control_flow"] and t["fusion.3"]["depth"] == 2, t
# total_us: the leaf thunks per run, control flow excluded.
leaf = sum(e["total_us"] for e in p["thunks"] if not e["control_flow"]) / 2
assert abs(leaf - p["total_us"]) < 0.01, (leaf, p["total_us"])
PY

run "$BEF_RUN" gemm.bef "$A" "$B" --export_profile=no_such_dir/p.json
expect_code 1 "unwritable profile"
expect_out "" "unwritable profile fails before the run"
expect_err_line "--export_profile: cannot open 'no_such_dir/p.json' for writing" "unwritable profile"

# --- --print_memory ---------------------------------------------------------------------
run "$BEF_RUN" gemm.bef "$A" "$B" --output= --output= --print_memory
expect_code 0 "print_memory"
expect_out " alloc  kind              bytes  align  role
     0  parameter            24     64  parameter 0 {}
     1  parameter            24     64  parameter 1 {}
     2  output               16     64  output {0}
     3  output               16     64  output {1}
     4  constant             16     64  constant 0 'constant.3'
     5  temp                 64     64
parameters     2 allocations           48 bytes (48 B)
outputs        2 allocations           32 bytes (32 B)
constants      1 allocation            16 bytes (16 B)
temps          1 allocation            64 bytes (64 B)
total          6 allocations          160 bytes (160 B)" "print_memory"

# --- errors are one line ----------------------------------------------------------------
run "$BEF_RUN" missing.bef
expect_code 1 "missing file"
expect_err_line "cannot open missing.bef" "missing file"

head -c 300 gemm.bef >truncated.bef
run "$BEF_RUN" truncated.bef
expect_code 1 "truncated file"
expect_err_line "truncated.bef: truncated" "truncated file"

printf 'not a bef file at all, just text\n' >text.bef
run "$BEF_RUN" text.bef
expect_code 1 "not a .bef file"
expect_err_line "not a .bef file" "not a .bef file"

run "$BEF_RUN" gemm.bef "$A"
expect_code 1 "wrong input count"
expect_err_line "the module takes 2 inputs (2x3xf32, 3x2xf32), got 1 --input flags" "wrong input count"

run "$BEF_RUN" gemm.bef "--input=3x2xf32=1 2 3 4 5 6" "$B"
expect_code 1 "wrong input shape"
expect_err_line "--input 0: value 3x2xf32 does not match the expected 2x3xf32" "wrong input shape"

run "$BEF_RUN" gemm.bef "--input=2x3xi32=1 2 3 4 5 6" "$B"
expect_code 1 "wrong input type"
expect_err_line "value 2x3xs32 does not match the expected 2x3xf32" "wrong input type"

run "$BEF_RUN" cuda_only.bef
expect_code 1 "no kernels for the device"
expect_err_line "cuda_only.bef: the artifact has no host kernel image but launches kernel 'k0'" \
  "no kernels for the device"

run "$BEF_RUN" gemm.bef --frobnicate
expect_code 1 "unknown flag"
expect_err_line "unknown flag --frobnicate" "unknown flag"

run "$BEF_RUN" gemm.bef --device=tpu
expect_code 1 "unknown device"
expect_err_line "unknown --device 'tpu'" "unknown device"

run "$BEF_RUN"
expect_code 1 "no file"
expect_err_line "expected exactly one MODULE.bef, got 0" "no file"

run "$BEF_RUN" gemm.bef --iterations=-1
expect_code 1 "negative iterations"
expect_err_line "must not be negative" "negative iterations"

# --device=cuda where the runtime has no usable CUDA device: the runtime's
# one-line reason. With a GPU, the gemm must give the same result there.
if run "$BEF_RUN" gemm.bef "$A" "$B" --device=cuda && [[ $code == 0 ]]; then
  expect_out "2x2xf32=[58 64][139 154]
2x2xf32=[10 20][30 40]" "gemm on cuda"
else
  expect_code 1 "--device=cuda without CUDA"
  expect_err_line "CUDA" "--device=cuda without CUDA"
fi

run "$BEF_RUN" --help
expect_code 0 "help"
expect_out_has "--print_memory" "help"

report bef_run_test
