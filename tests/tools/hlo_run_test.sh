#!/usr/bin/env bash
# End-to-end tests of hlo-run: --check, --reference with inline, .npy and
# random inputs, --output and --expected_output, --device with
# --export_profile, and one-line errors.
#
#   tests/tools/hlo_run_test.sh path/to/hlo-run [path/to/repo]
#
# Expected values are worked out by hand next to each case (the tiny module
# computes a+b and a*b of 2x2 values; the MLP's splat inputs are derived in
# examples/README.md).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

HLO_RUN=${1:?usage: hlo_run_test.sh path/to/hlo-run [repo root]}
HLO_RUN=$(cd "$(dirname "$HLO_RUN")" && pwd)/$(basename "$HLO_RUN")
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

CLI_TOOL=hlo-run
# shellcheck source=cli_test_lib.sh
source "$HERE/cli_test_lib.sh"

cat >add_mul.hlo <<'EOF'
HloModule add_mul, entry_computation_layout={(f32[2,2]{1,0}, f32[2,2]{1,0})->(f32[2,2]{1,0}, f32[2,2]{1,0})}

ENTRY main {
  a = f32[2,2]{1,0} parameter(0)
  b = f32[2,2]{1,0} parameter(1)
  sum = f32[2,2]{1,0} add(a, b)
  prod = f32[2,2]{1,0} multiply(a, b)
  ROOT result = (f32[2,2]{1,0}, f32[2,2]{1,0}) tuple(sum, prod)
}
EOF

cat >unsupported.hlo <<'EOF'
HloModule unsupported
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[4,4] parameter(0)
  ROOT u = f32[4,4] custom-call(x), custom_call_target="kiln_test_unsupported"
}
EOF

cat >bad.hlo <<'EOF'
HloModule bad

ENTRY main {
  a = f32[2] parameter(0)
  ROOT b = f32[2] add(a, missing_operand)
}
EOF

cat >mismatch.hlo <<'EOF'
HloModule mismatch

ENTRY main {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT c = f32[2] add(a, b)
}
EOF

cat >identity_s32.hlo <<'EOF'
HloModule identity

ENTRY main {
  ROOT a = s32[2,3] parameter(0)
}
EOF

# --- --check ---------------------------------------------------------------
run "$HLO_RUN" --check add_mul.hlo "$ROOT/examples/mlp.hlo"
expect_code 0 "check good files"
expect_out "OK add_mul.hlo
OK $ROOT/examples/mlp.hlo" "check good files"

run "$HLO_RUN" --check add_mul.hlo bad.hlo
expect_code 1 "check with a bad file"
[[ $out == "OK add_mul.hlo" ]] || fail "check with a bad file: stdout [$out]"
[[ $err == "hlo-run: error: "*bad.hlo* ]] || fail "check with a bad file: stderr [$err]"
checks=$((checks + 2))

run "$HLO_RUN" --check mismatch.hlo
expect_code 1 "check a module that does not verify"
[[ $err == "hlo-run: error: "* ]] || fail "verifier error: stderr [$err]"

run "$HLO_RUN" --check no_such_file.hlo
expect_code 1 "check a missing file"

# --- --reference with inline inputs ----------------------------------------
# a = [[1 2][3 4]], b = [[5 6][7 8]]: a+b = [[6 8][10 12]], a*b = [[5 12][21 32]].
run "$HLO_RUN" --reference add_mul.hlo "--input=2x2xf32=1 2 3 4" "--input=2x2xf32=5 6 7 8"
expect_code 0 "reference add_mul"
expect_out "2x2xf32=[6 8][10 12]
2x2xf32=[5 12][21 32]" "reference add_mul"

run "$HLO_RUN" --reference add_mul.hlo "--input=2x2xf32=1 2 3 4" "--input=2x2xf32=5 6 7 8" \
  "--expected_output=2x2xf32=6 8 10 12" "--expected_output=2x2xf32=[5 12][21 32]"
expect_code 0 "expected outputs match"
expect_out "[SUCCESS] 2 results matched the expected outputs" "expected outputs match"

# 21 at index [1, 0] of the product does not match 20.
run "$HLO_RUN" --reference add_mul.hlo "--input=2x2xf32=1 2 3 4" "--input=2x2xf32=5 6 7 8" \
  "--expected_output=2x2xf32=6 8 10 12" "--expected_output=2x2xf32=5 12 20 32"
expect_code 1 "expected output mismatch"
expect_out "[FAILED] result[1]: element at index [1, 0] (21) does not match the expected (20)" \
  "expected output mismatch"

# Within --atol the same difference passes (|21 - 20| = 1 <= 1.5).
run "$HLO_RUN" --reference add_mul.hlo "--input=2x2xf32=1 2 3 4" "--input=2x2xf32=5 6 7 8" \
  "--expected_output=(ignored)" "--expected_output=2x2xf32=5 12 20 32" --atol=1.5
expect_code 0 "mismatch within --atol"

# --- errors are one line ---------------------------------------------------
run "$HLO_RUN" --reference add_mul.hlo "--input=3xf32=1 2 3" "--input=2x2xf32=5 6 7 8"
expect_code 1 "wrong input shape"
expect_err_line "--input 0: value 3xf32 does not match the expected 2x2xf32" "wrong input shape"

run "$HLO_RUN" --reference add_mul.hlo "--input=2x2xs32=1 2 3 4" "--input=2x2xf32=5 6 7 8"
expect_code 1 "wrong input type"
expect_err_line "value 2x2xs32 does not match the expected 2x2xf32" "wrong input type"

run "$HLO_RUN" --reference add_mul.hlo "--input=2x2xf32=1 2 3 4"
expect_code 1 "wrong input count"
expect_err_line "takes 2 inputs (2x2xf32, 2x2xf32), got 1 --input flags" "wrong input count"

run "$HLO_RUN" --reference add_mul.hlo "--input=2x2xf32=1 2 3" "--input=2x2xf32=5 6 7 8"
expect_code 1 "too few elements"
expect_err_line "2x2xf32 needs 4 elements, got 3" "too few elements"

run "$HLO_RUN" --reference add_mul.hlo --input=@missing.npy "--input=2x2xf32=5 6 7 8"
expect_code 1 "missing input file"
expect_err_line "cannot open 'missing.npy'" "missing input file"

run "$HLO_RUN" --reference add_mul.hlo --expected_output=f32=1
expect_code 1 "wrong expected_output count"
expect_err_line "the module has 2 results, got 1 --expected_output flags" "wrong expected_output count"

run "$HLO_RUN" --reference bad.hlo
expect_code 1 "reference on a bad file"
expect_err_line "bad.hlo" "reference on a bad file"

run "$HLO_RUN" --frobnicate add_mul.hlo
expect_code 1 "unknown flag"
expect_err_line "unknown flag --frobnicate" "unknown flag"

run "$HLO_RUN" add_mul.hlo
expect_code 1 "no mode"
expect_err_line "give exactly one of --check, --reference and --device" "no mode"

run "$HLO_RUN" --help
expect_code 0 "help"

# --- .npy output and input -------------------------------------------------
run "$HLO_RUN" --reference add_mul.hlo "--input=2x2xf32=1 2 3 4" "--input=2x2xf32=5 6 7 8" \
  --output=@sum.npy --output=-
expect_code 0 "npy output"
expect_out "2x2xf32=[5 12][21 32]" "npy output prints the second result"
checks=$((checks + 1))
# Header: magic \x93NUMPY, version 1.0, header length 0x76 = 118 (see npy_test).
[[ $(head -c 10 sum.npy | od -An -tx1 | tr -d ' \n') == 934e554d505901007600 ]] ||
  fail "npy output header bytes: $(head -c 10 sum.npy | od -An -tx1)"
checks=$((checks + 1))
[[ $(stat -c %s sum.npy) == 144 ]] || fail "npy output size $(stat -c %s sum.npy), expected 128 + 16"

# Reading it back: sum + sum = [[12 16][20 24]], sum * sum = [[36 64][100 144]].
run "$HLO_RUN" --reference add_mul.hlo --input=@sum.npy --input=@sum.npy
expect_code 0 "npy input"
expect_out "2x2xf32=[12 16][20 24]
2x2xf32=[36 64][100 144]" "npy input"

run "$HLO_RUN" --reference identity_s32.hlo --input=@sum.npy
expect_code 1 "npy input of the wrong type"
expect_err_line "value 2x2xf32 (from sum.npy) does not match the expected 2x3xs32" "npy input of the wrong type"

# --- tuple parameters are flattened into leaves -----------------------------
cat >tuple_param.hlo <<'EOF'
HloModule tuple_param

ENTRY main {
  p = (f32[2], (s32[], f32[2])) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  inner = (s32[], f32[2]) get-tuple-element(p), index=1
  b = f32[2] get-tuple-element(inner), index=1
  n = s32[] get-tuple-element(inner), index=0
  s = f32[2] add(a, b)
  ROOT t = (f32[2], s32[]) tuple(s, n)
}
EOF
# a = [1 2], n = 5, b = [10 20]: a + b = [11 22], n = 5. "--flag value" form.
run "$HLO_RUN" --reference tuple_param.hlo --input "2xf32=1 2" --input s32=5 --input "2xf32=10 20"
expect_code 0 "tuple parameter"
expect_out "2xf32=11 22
s32=5" "tuple parameter"

# --- bf16 through .npy ('<V2' typed by the parameter shape) ------------------
cat >square_bf16.hlo <<'EOF'
HloModule square_bf16

ENTRY main {
  a = bf16[3] parameter(0)
  ROOT r = bf16[3] multiply(a, a)
}
EOF
# [1.5 -2 3]^2 = [2.25 4 9]; squared again [5.0625 16 81], all exact in bf16
# (5.0625 = 1.010001b * 2^2 and 81 = 1.010001b * 2^6 need 6 mantissa bits).
run "$HLO_RUN" --reference square_bf16.hlo "--input=3xbf16=1.5 -2 3" --output=@sq.npy
expect_code 0 "bf16 npy output"
checks=$((checks + 1))
grep -q "'descr': '<V2'" sq.npy || fail "bf16 npy descr is not <V2"
run "$HLO_RUN" --reference square_bf16.hlo --input=@sq.npy
expect_code 0 "bf16 npy input"
expect_out "3xbf16=5.0625 16 81" "bf16 npy input"

run "$HLO_RUN" --reference add_mul.hlo --seed=abc
expect_code 1 "bad --seed"
expect_err_line "invalid value 'abc' for --seed" "bad --seed"

# --- simulated devices --------------------------------------------------------
cat >all_gather.hlo <<'EOF'
HloModule all_gather

ENTRY main {
  id = u32[] replica-id()
  id2 = u32[2,1] broadcast(id), dimensions={}
  a0 = u32[2,1] constant({{10}, {15}})
  a1 = u32[2,1] add(id2, a0)
  gathered = u32[2,2] all-gather(a1), dimensions={1}
  ROOT out = u32[4] reshape(gathered)
}
EOF
# Replica r holds [[10+r] [15+r]]; gathering along dimension 1 over two
# replicas gives [[10 11] [15 16]], reshaped to 10 11 15 16.
run "$HLO_RUN" --reference all_gather.hlo --num_replicas=2
expect_code 0 "two replicas"
expect_out "4xu32=10 11 15 16" "two replicas"

# --- random inputs are deterministic per seed -------------------------------
run "$HLO_RUN" --reference add_mul.hlo --seed=7
first=$out
run "$HLO_RUN" --reference add_mul.hlo --seed=7
checks=$((checks + 1))
[[ -n $first && $out == "$first" ]] || fail "same seed, different outputs"
run "$HLO_RUN" --reference add_mul.hlo --seed=8
checks=$((checks + 1))
[[ $out != "$first" ]] || fail "different seeds, same outputs"

# --- the example MLP with hand-derived values (examples/README.md) ----------
row="0.1015363 0.1674051 0.2760043 0.4550542"
run "$HLO_RUN" --reference "$ROOT/examples/mlp.hlo" \
  --input=4x8xf32=1 --input=8x16xf32=0.125 \
  "--input=16xf32=-0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5" \
  --input=16x4xf32=0.25 "--input=4xf32=0 1 2 3" \
  "--expected_output=4x4xf32=[$row][$row][$row][$row]" \
  "--expected_output=4x4xf32=[1 2 3 4][1 2 3 4][1 2 3 4][1 2 3 4]"
expect_code 0 "mlp example"
expect_out "[SUCCESS] 2 results matched the expected outputs" "mlp example"

run "$HLO_RUN" --reference "$ROOT/examples/mlp.hlo" --seed=1
expect_code 0 "mlp with random inputs"

# --- --device: compile in memory, run, compare with the evaluator -----------
if "$HLO_RUN" --help | grep -q -- '--device'; then
  run "$HLO_RUN" add_mul.hlo --device=host --input="2x2xf32=1 2 3 4" --input="2x2xf32=10 20 30 40"
  expect_code 0 "device host"
  expect_out "2x2xf32=[11 22][33 44]
2x2xf32=[10 40][90 160]
[OK] 2 results match the reference evaluator on host" "device host"
  run "$HLO_RUN" add_mul.hlo --device=host --input="2x2xf32=1 2 3 4" --input="2x2xf32=10 20 30 40" \
    --output= --output= "--expected_output=2x2xf32=[11 22][33 44]" "--expected_output=2x2xf32=[10 40][90 161]"
  expect_code 1 "device host, expected output mismatch"
  checks=$((checks + 1))
  [[ $out == *"[FAILED] result[1]: element at index [1, 1] (160) does not match the expected (161)"* ]] ||
    fail "device mismatch line: [$out]"
  row="0.1015363 0.1674051 0.2760043 0.4550542"
  run "$HLO_RUN" "$ROOT/examples/mlp.hlo" --device=host \
    --input=4x8xf32=1 --input=8x16xf32=0.125 \
    "--input=16xf32=-0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5" \
    --input=16x4xf32=0.25 "--input=4xf32=0 1 2 3" --output= --output= \
    "--expected_output=4x4xf32=[$row][$row][$row][$row]" \
    "--expected_output=4x4xf32=[1 2 3 4][1 2 3 4][1 2 3 4][1 2 3 4]"
  expect_code 0 "mlp on the host device"
  # The profile as JSON: a + b and a * b of 2x2 f32 are two kernels of 4
  # flops and 16 + 16 bytes read, 16 written each, run once; host times are
  # measured, so nothing is modeled and no optimal time is known.
  run "$HLO_RUN" add_mul.hlo --device=host --output= --output= --export_profile=profile.json
  expect_code 0 "export_profile on the host device"
  checks=$((checks + 1))
  python3 - profile.json <<'PY' || fail "hlo-run profile.json is not the expected profile"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["device"].startswith("host: ") and p["time_source"] == "measured", p
assert p["modeled"] is False and p["results_computed"] is True and p["runs"] == 1, p
t = {e["name"]: e for e in p["thunks"]}
assert sorted(t) == ["prod.fusion", "sum.fusion"], sorted(t)
for name, e in t.items():
    assert e["kind"] == "kernel" and e["count"] == 1 and e["flops"] == 4 and e["bytes"] == 48, e
    assert e["modeled"] is False and e["optimal_us"] is None and "launches" not in e, e
PY
  run "$HLO_RUN" add_mul.hlo --device=host --export_profile=no_such_dir/p.json
  expect_code 1 "unwritable profile"
  expect_out "" "unwritable profile fails before the run"
  expect_err_line "--export_profile: cannot open 'no_such_dir/p.json' for writing" "unwritable profile"
  run "$HLO_RUN" --reference add_mul.hlo --export_profile=p.json
  expect_code 1 "export_profile without a device"
  expect_err_line "--profile and --export_profile need --device" "export_profile without a device"
  run "$HLO_RUN" unsupported.hlo --device=host
  expect_code 1 "unsupported op"
  expect_err_line "bef-compile does not support custom-call target 'kiln_test_unsupported'" "unsupported op"
  run "$HLO_RUN" add_mul.hlo --device=tpu
  expect_code 1 "unknown device"
  expect_err_line "unknown --device 'tpu'" "unknown device"
  if ! ls /dev/nvidia0 >/dev/null 2>&1; then
    run "$HLO_RUN" add_mul.hlo --device=cuda
    expect_code 1 "no GPU"
    expect_err_line "CUDA" "no GPU"
  fi
fi

report hlo_run_test
