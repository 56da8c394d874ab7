#!/usr/bin/env bash
# bef-run and hlo-run on the CUDA emulator (KILN_CUDA_EMULATOR): the device
# line, results against hand-computed values (examples/mlp.hlo, see
# examples/README.md), the profile's emulator counters and its JSON export
# (--export_profile: thunk counts, launches, DRAM bytes), one-line errors for
# a bad emulator path, a bad KILN_EMU_CHECK and KILN_EMU_FAULT, an injected
# launch failure, --cuda_graphs on and off, an SPMD module on 2 emulated
# devices (NCCL double), and a corrupted artifact
# that is executed, not only loaded: its PTX is edited inside the .bef so
# that a kernel indexes 128x past its buffer, and memcheck must stop it with
# one line naming the kernel, block, thread, PTX line and address (the
# edit is first caught by the .bef checksum, then resealed with bef_reseal
# so that it reaches the emulator).
#
#   tests/tools/cuda_emulator_cli_test.sh bef-compile bef-run hlo-run libkiln_cuda_emulator.so SRC bef_reseal
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

BEF_COMPILE=${1:?usage: cuda_emulator_cli_test.sh bef-compile bef-run hlo-run emulator.so src bef_reseal}
BEF_RUN=${2:?missing bef-run}
HLO_RUN=${3:?missing hlo-run}
EMULATOR=${4:?missing the emulator library}
SRC=${5:?missing the source directory}
BEF_RESEAL=${6:?missing bef_reseal}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

CLI_TOOL=bef-run
# shellcheck source=cli_test_lib.sh
source "$HERE/cli_test_lib.sh"

# An emulator with the H100 timing model (kiln_cuda_emulator.h API version
# 2, which added kilnEmuResultsComputed) makes the profile's times modeled;
# before it they are the emulator's clock. timing_model_cli_test.sh tests
# the model's side.
if nm -D --defined-only "$EMULATOR" | grep -qw kilnEmuResultsComputed; then
  MODELED=True
else
  MODELED=False
fi

run "$BEF_COMPILE" "$SRC/examples/mlp.hlo" -o "$TMP/mlp.bef" --targets=cuda --no-cache
expect_code 0 "compile mlp for cuda (PTX + sm_90 cubin)"

ROW="[0.1015363 0.1674051 0.2760043 0.4550542]"
MLP_ARGS=(--input=4x8xf32=1 --input=8x16xf32=0.125
          "--input=16xf32=-0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5 -0.5 -1.5"
          --input=16x4xf32=0.25 "--input=4xf32=0 1 2 3" --output= --output=
          "--expected_output=4x4xf32=$ROW$ROW$ROW$ROW"
          "--expected_output=4x4xf32=[1 2 3 4][1 2 3 4][1 2 3 4][1 2 3 4]")

# The emulator refuses the cubin, so the runtime runs the artifact's PTX.
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda "${MLP_ARGS[@]}" --profile
expect_code 0 "mlp on the emulator"
expect_out_has "device: cuda: kiln emulator (sm_90, H100-class)" "device line"
expect_out_has "[SUCCESS] 2 results matched" "mlp results"
if [[ $MODELED == True ]]; then
  expect_out_has "times are modeled by the H100 timing model, not measured" "profile says its times are modeled"
else
  expect_out_has "times are emulated" "profile says its times are emulated"
fi
expect_out_has "Emulator counters per execution" "counter table"

# The softmax (with the output layer's bias add): one row-normalization
# kernel, one launch of a 256-thread block.
expect_out_has "divide.40.fusion            1            1      32x8" \
  "counter row: one block of 32x8 (a row normalization)"

# CUDA graphs on (the default) and off: the same results over timed and
# profiled runs (the first run issues thunks directly, the second captures
# the graph, the rest replay it); a bad value is a one-line error.
for graphs in on off; do
  KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda "${MLP_ARGS[@]}" --iterations=3 \
    --profile --cuda_graphs=$graphs
  expect_code 0 "mlp with --cuda_graphs=$graphs"
  expect_out_has "[SUCCESS] 2 results matched" "mlp results with --cuda_graphs=$graphs"
  expect_out_has "divide.40.fusion            1            1      32x8" "counter row with --cuda_graphs=$graphs"
done
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda --cuda_graphs=maybe
expect_code 1 "bad --cuda_graphs"
expect_err_line "bef-run: error: --cuda_graphs must be on or off, got 'maybe'" "bad --cuda_graphs message"

# Timed runs: the result run's transfers on a line of their own (the five
# inputs 128 + 512 + 64 + 256 + 16 bytes, the two 4x4 f32 outputs back);
# the latency is the execution's alone unless --include_transfers.
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda "${MLP_ARGS[@]}" --iterations=2
expect_code 0 "mlp timed on the emulator"
expect_out_has "transfers: 976 bytes to the device in " "bytes uploaded"
expect_out_has " 128 bytes back in " "bytes downloaded"
expect_out_has "(latency of the execution alone, inputs on the device)" "latency without transfers"
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda "${MLP_ARGS[@]}" --iterations=2 \
  --include_transfers
expect_code 0 "mlp timed with transfers"
expect_out_has "(latency includes the transfers)" "latency with transfers"

# The profile as JSON. The MLP runs 2 GEMMs (the two dots, on the cuBLAS
# double) and 2 kernels, one launch each, so every thunk counts 2 over
# --iterations=2. DRAM bytes are whole 32-byte sectors (buffers are
# 256-byte aligned): divide.40.fusion reads dot.12 (f32[4,4], 64 B, 2
# sectors) and b2 (f32[4], 1 sector) and writes add.14 and the softmax
# (f32[4,4] each, 2 sectors each): 224 B.
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda "${MLP_ARGS[@]}" \
  --iterations=2 --export_profile="$TMP/profile.json"
expect_code 0 "export_profile on the emulator"
checks=$((checks + 1))
python3 - "$TMP/profile.json" "$MODELED" 2 <<'PY' || fail "the emulator's profile.json is not the expected profile"
import json, sys
p = json.load(open(sys.argv[1]))
modeled, runs = sys.argv[2] == "True", int(sys.argv[3])
device = "kiln emulator (sm_90, H100-class)"
assert p["device"] == "cuda: " + device, p
source = ("modeled: H100 timing model on " if modeled else "emulated: ") + device
assert p["time_source"] == source and p["modeled"] is modeled, p
assert p["results_computed"] is True and "note" not in p and p["runs"] == runs, p
t = {e["name"]: e for e in p["thunks"]}
kernels = ["divide.40.fusion", "maximum.11.gemm_r.fusion"]
assert sorted(t) == sorted(kernels + ["dot.12.gemm", "dot.6.gemm"]), sorted(t)
for name, e in t.items():
    assert e["kind"] == ("gemm" if name.endswith(".gemm") else "kernel"), e
    assert e["count"] == runs and e["launches"] == 1 and e["sampled_launches"] == 0, e
    assert e["modeled"] is modeled and (e["optimal_us"] is not None) is modeled, e
assert t["divide.40.fusion"]["dram_bytes"] == 224, t["divide.40.fusion"]
PY

KILN_CUDA_EMULATOR=$EMULATOR run "$HLO_RUN" "$SRC/examples/mlp.hlo" --device=cuda --output= --output= \
  --export_profile="$TMP/hlo_profile.json"
expect_code 0 "hlo-run on the emulator"
expect_out_has "match the reference evaluator on cuda: kiln emulator (sm_90, H100-class)" \
  "hlo-run vs the evaluator, naming the device"
checks=$((checks + 1))
python3 - "$TMP/hlo_profile.json" "$MODELED" 1 <<'PY' || fail "hlo-run's profile.json on the emulator"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["device"] == "cuda: kiln emulator (sm_90, H100-class)" and p["runs"] == 1, p
assert p["modeled"] is (sys.argv[2] == "True") and p["results_computed"] is True, p
assert len(p["thunks"]) == 4 and all(e["count"] == 1 and e["launches"] == 1 for e in p["thunks"]), p
PY

KILN_CUDA_EMULATOR=$TMP/missing.so run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda
expect_code 1 "missing emulator library"
expect_err_line "missing.so (named by KILN_CUDA_EMULATOR)" "missing emulator library"

KILN_CUDA_EMULATOR=$EMULATOR KILN_EMU_CHECK=bogus run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda
expect_code 1 "bad KILN_EMU_CHECK"
expect_err_line "KILN_EMU_CHECK: unknown check 'bogus'" "bad KILN_EMU_CHECK"

# Fault injection from the environment: the first kernel launch fails with
# one line naming the call; a malformed KILN_EMU_FAULT fails cuInit.
KILN_CUDA_EMULATOR=$EMULATOR KILN_EMU_FAULT=launch:0 run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda "${MLP_ARGS[@]}"
expect_code 1 "injected launch failure"
expect_err_line "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" "injected launch failure"
expect_err_line "injected launch failure (kiln emulator fault injection)" "injected launch failure"
KILN_CUDA_EMULATOR=$EMULATOR KILN_EMU_FAULT=frobnicate:1 run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda
expect_code 1 "bad KILN_EMU_FAULT"
expect_err_line "KILN_EMU_FAULT: 'frobnicate:1' is not <kind>:<calls>" "bad KILN_EMU_FAULT"

# Corrupt the artifact's PTX: the first vector load after a kernel takes
# its thread index (cvt.u64.u32 of %tid.x) loads from that index instead of
# its buffer address (a register name of the same length), so thread 0
# reads address 0, far from any buffer. Same length, so the FlatBuffer stays
# valid; the PTX checksum does not.
python3 - "$TMP/mlp.bef" "$TMP/edited.bef" <<'PY'
import re, sys
data = open(sys.argv[1], 'rb').read()
bad = None
for tid in re.finditer(rb'mov\.u32 \t(%r\d+), %tid\.x;\n\tcvt\.u64\.u32 \t(%rd\d+), \1;', data):
    index = tid.group(2)
    load = re.compile(rb'ld\.global[.\w]* \t\{[^}]*\}, \[(%rd\d+)\];').search(data, tid.end())
    if load and len(load.group(1)) == len(index):
        bad = data[:load.start(1)] + index + data[load.end(1):]
        break
assert bad, 'no vector load after a thread index in the PTX'
open(sys.argv[2], 'wb').write(bad)
PY
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/edited.bef" --device=cuda "${MLP_ARGS[@]}"
expect_code 1 "edited PTX, checksum not recomputed"
expect_err_line "edited.bef: corrupt .bef file: checksum mismatch in PTX of kernel image 'cuda'" \
                "edited PTX, checksum not recomputed"
"$BEF_RESEAL" "$TMP/edited.bef" "$TMP/bad.bef" || fail "bef_reseal failed"
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/bad.bef" --device=cuda "${MLP_ARGS[@]}"
expect_code 1 "out-of-bounds kernel"
for text in "CUDA_ERROR_ILLEGAL_ADDRESS" "invalid global " "in kernel '" \
            "block (0,0,0) thread (" "PTX line "; do
  expect_err_line "$text" "out-of-bounds kernel"
done

# An SPMD module on 2 emulated CUDA devices, collectives through the NCCL
# double: device d adds its replica id to its input, the all-reduce sums
# both, the all-gather concatenates them (bef_compile_test's values).
cp "$SRC/tests/tools/spmd_two_replicas.hlo" "$TMP/spmd.hlo"
run "$BEF_COMPILE" "$TMP/spmd.hlo" -o "$TMP/spmd.bef" --targets=cuda --no-cache
expect_code 0 "compile the SPMD module for cuda"
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/spmd.bef" --device=cuda --num_devices=2 "--input=2xf32=1 2" \
  "--input=2xf32=10 20"
expect_code 0 "SPMD module on 2 emulated CUDA devices"
expect_out "device 0:
2xf32=12 23
4xf32=1 2 11 21
device 1:
2xf32=12 23
4xf32=1 2 11 21" "SPMD results on 2 emulated CUDA devices"
KILN_EMU_DEVICES=1 KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/spmd.bef" --device=cuda --num_devices=2
expect_code 1 "2 devices asked of a 1-device emulator"
expect_err_line "no CUDA device 1 (1 present" "2 devices asked of a 1-device emulator"

report cuda_emulator_cli_test
