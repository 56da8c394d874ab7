#!/usr/bin/env bash
# bef-run and hlo-run on the CUDA emulator's H100 timing model: the profile
# says its times are modeled, --export_profile carries the model's
# roofline-optimal times, and in sampling mode (KILN_EMU_SAMPLE) the tools
# print "results not computed (sampled emulation: KILN_EMU_SAMPLE=N)"
# instead of values, and the report and the JSON say so.
#
# Needs an emulator that implements kiln_cuda_emulator.h API version 2
# (model_ns/optimal_ns/sampled_launches, kilnEmuResultsComputed); exits 77
# (skipped) with one that does not export kilnEmuResultsComputed.
#
#   tests/tools/timing_model_cli_test.sh bef-compile bef-run hlo-run libkiln_cuda_emulator.so SRC
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

BEF_COMPILE=${1:?usage: timing_model_cli_test.sh bef-compile bef-run hlo-run emulator.so src}
BEF_RUN=${2:?missing bef-run}
HLO_RUN=${3:?missing hlo-run}
EMULATOR=${4:?missing the emulator library}
SRC=${5:?missing the source directory}

if ! nm -D --defined-only "$EMULATOR" | grep -qw kilnEmuResultsComputed; then
  echo "SKIP: $EMULATOR has no timing model (no kilnEmuResultsComputed)"
  exit 77
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export KILN_CUDA_EMULATOR=$EMULATOR

CLI_TOOL=bef-run
# shellcheck source=cli_test_lib.sh
source "$HERE/cli_test_lib.sh"

run "$BEF_COMPILE" "$SRC/examples/mlp.hlo" -o "$TMP/mlp.bef" --targets=cuda --no-cache
expect_code 0 "compile mlp for cuda"
# a + b over f32[65536]: 2 x 256 KiB read and 256 KiB written, 786432 DRAM
# bytes, 0.262 µs at 3.0 TB/s; a grid of many blocks, so that a sample of
# one block per launch is a sample.
cat >"$TMP/add.hlo" <<'EOF'
HloModule add_65536
ENTRY main {
  a = f32[65536]{0} parameter(0)
  b = f32[65536]{0} parameter(1)
  ROOT s = f32[65536]{0} add(a, b)
}
EOF
run "$BEF_COMPILE" "$TMP/add.hlo" -o "$TMP/add.bef" --targets=cuda --no-cache
expect_code 0 "compile add for cuda"

# --- modeled times ---------------------------------------------------------------------
run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda --output= --output= --profile
expect_code 0 "modeled profile"
expect_out_has "
  times are modeled by the H100 timing model, not measured; " "modeled profile line"
expect_out_has "roofline H100 timing model, else cuda-h100" "total line names the model's roofline"

# The model's optimal time bounds its modeled time from below (1% for the
# float milliseconds of cuEventElapsedTime).
check_modeled_json() {  # FILE SAMPLED(True|False)
  python3 - "$1" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
sampled = sys.argv[2] == "True"
# The emulator's description may add its mode ("..., sampled N blocks/launch").
assert p["time_source"].startswith("modeled: H100 timing model on kiln emulator (sm_90, H100-class)"), p
assert p["modeled"] is True and p["results_computed"] is (not sampled), p
if sampled:
    assert p["note"] == "results not computed (sampled emulation: KILN_EMU_SAMPLE=1)", p
for e in p["thunks"]:
    assert e["modeled"] is True and e["optimal_us"] is not None and e["optimal_us"] > 0, e
    assert e["mean_us"] >= 0.99 * e["optimal_us"], e
PY
}

run "$BEF_RUN" "$TMP/add.bef" --device=cuda --output= --export_profile="$TMP/full.json"
expect_code 0 "full emulation of the add"
checks=$((checks + 1))
check_modeled_json "$TMP/full.json" False || fail "modeled profile.json of the add"
checks=$((checks + 1))
python3 - "$TMP/full.json" <<'PY' || fail "the add's DRAM bytes and roofline"
import json, sys
[k] = json.load(open(sys.argv[1]))["thunks"]
assert k["launches"] == 1 and k["sampled_launches"] == 0 and k["dram_bytes"] == 786432, k
assert k["optimal_us"] >= 0.26, k  # at least 786432 B / 3.0e12 B/s
PY

# --- sampling mode ---------------------------------------------------------------------
# Expected outputs that do not match: in sampling mode nothing is compared.
MLP_ARGS=(--input=4x8xf32=1 --input=8x16xf32=0.125 --input=16xf32=0.5 --input=16x4xf32=0.25
          "--input=4xf32=0 1 2 3" --expected_output=4x4xf32=0 --expected_output=4x4xf32=0)
KILN_EMU_SAMPLE=1 run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda "${MLP_ARGS[@]}"
expect_code 0 "sampled run"
expect_out "results not computed (sampled emulation: KILN_EMU_SAMPLE=1)" "sampled run prints no values"

KILN_EMU_SAMPLE=1 run "$BEF_RUN" "$TMP/add.bef" --device=cuda --profile --export_profile="$TMP/sampled.json"
expect_code 0 "sampled profile"
expect_out_has "results not computed (sampled emulation: KILN_EMU_SAMPLE=1)
device: " "sampled result run"
expect_out_has "  results not computed (sampled emulation: KILN_EMU_SAMPLE=1): times and counters are extrapolated" \
  "sampled report line"
checks=$((checks + 1))
[[ $out != *"65536xf32="* ]] || fail "sampled run printed values: [$out]"
checks=$((checks + 1))
check_modeled_json "$TMP/sampled.json" True || fail "sampled profile.json"
# The sample's counts are extrapolated to the whole grid: DRAM bytes within
# 10% of the full run's.
checks=$((checks + 1))
python3 - "$TMP/sampled.json" <<'PY' || fail "the sampled add's counters"
import json, sys
[k] = json.load(open(sys.argv[1]))["thunks"]
assert k["launches"] == 1 and k["sampled_launches"] == 1, k
assert abs(k["dram_bytes"] - 786432) <= 0.1 * 786432, k
PY

CLI_TOOL=hlo-run
KILN_EMU_SAMPLE=1 run "$HLO_RUN" "$SRC/examples/mlp.hlo" --device=cuda
expect_code 0 "sampled hlo-run"
expect_out "results not computed (sampled emulation: KILN_EMU_SAMPLE=1)" "sampled hlo-run compares nothing"

report timing_model_cli_test
