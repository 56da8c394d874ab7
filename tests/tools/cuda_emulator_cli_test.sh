#!/usr/bin/env bash
# bef-run and hlo-run on the CUDA emulator (KILN_CUDA_EMULATOR): the device
# line, results against hand-computed values (examples/mlp.hlo, see
# examples/README.md), the profile's emulator counters, one-line errors for
# a bad emulator path and a bad KILN_EMU_CHECK, and a corrupted artifact
# that is executed, not only loaded: its PTX is edited inside the .bef so
# that a kernel indexes 128x past its buffer, and memcheck must stop it with
# one line naming the kernel, block, thread, PTX line and address.
#
#   tests/tools/cuda_emulator_cli_test.sh bef-compile bef-run hlo-run libkiln_cuda_emulator.so SRC
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

BEF_COMPILE=${1:?usage: cuda_emulator_cli_test.sh bef-compile bef-run hlo-run emulator.so src}
BEF_RUN=${2:?missing bef-run}
HLO_RUN=${3:?missing hlo-run}
EMULATOR=${4:?missing the emulator library}
SRC=${5:?missing the source directory}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

CLI_TOOL=bef-run
# shellcheck source=cli_test_lib.sh
source "$HERE/cli_test_lib.sh"

run "$BEF_COMPILE" "$SRC/examples/mlp.hlo" -o "$TMP/mlp.bef" --targets=cuda
expect_code 0 "compile mlp for cuda (PTX + sm_90 cubin)"

ROW="[0.1015363 0.1674051 0.2760043 0.4550542]"
MLP_ARGS=(--input=4x8xf32=1 --input=8x16xf32=0.1
          "--input=16xf32=-0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1 -0.3 -1"
          --input=16x4xf32=0.25 "--input=4xf32=0 1 2 3" --output= --output=
          "--expected_output=4x4xf32=$ROW$ROW$ROW$ROW"
          "--expected_output=4x4xf32=[1 2 3 4][1 2 3 4][1 2 3 4][1 2 3 4]")

# The emulator refuses the cubin, so the runtime runs the artifact's PTX.
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda "${MLP_ARGS[@]}" --profile
expect_code 0 "mlp on the emulator"
expect_out_has "device: cuda: kiln emulator (sm_90, H100-class)" "device line"
expect_out_has "[SUCCESS] 2 results matched" "mlp results"
expect_out_has "times are emulated" "profile says its times are emulated"
expect_out_has "Emulator counters per execution" "counter table"
# The softmax's row reductions: one launch of a 256-thread block.
expect_out_has "reduce.28.fusion            1            1       256" "counter row"

KILN_CUDA_EMULATOR=$EMULATOR run "$HLO_RUN" "$SRC/examples/mlp.hlo" --device=cuda --output= --output=
expect_code 0 "hlo-run on the emulator"
expect_out_has "match the reference evaluator on cuda: kiln emulator (sm_90, H100-class)" \
  "hlo-run vs the evaluator, naming the device"

KILN_CUDA_EMULATOR=$TMP/missing.so run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda
expect_code 1 "missing emulator library"
expect_err_line "missing.so (named by KILN_CUDA_EMULATOR)" "missing emulator library"

KILN_CUDA_EMULATOR=$EMULATOR KILN_EMU_CHECK=bogus run "$BEF_RUN" "$TMP/mlp.bef" --device=cuda
expect_code 1 "bad KILN_EMU_CHECK"
expect_err_line "KILN_EMU_CHECK: unknown check 'bogus'" "bad KILN_EMU_CHECK"

# Corrupt the artifact's PTX: the first 'shl.b64 %rdA, %rdB, 2;' (an index
# scaled to f32 bytes) scales by 2^9 instead, so the kernel reads far past
# its buffer. Same length, so the FlatBuffer stays valid.
python3 - "$TMP/mlp.bef" "$TMP/bad.bef" <<'PY'
import re, sys
data = open(sys.argv[1], 'rb').read()
m = re.search(rb'shl\.b64 \t%rd\d+, %rd\d+, 2;', data)
assert m, 'no index shift in the PTX'
bad = data[:m.end() - 2] + b'9' + data[m.end() - 1:]
open(sys.argv[2], 'wb').write(bad)
PY
KILN_CUDA_EMULATOR=$EMULATOR run "$BEF_RUN" "$TMP/bad.bef" --device=cuda "${MLP_ARGS[@]}"
expect_code 1 "out-of-bounds kernel"
for text in "CUDA_ERROR_ILLEGAL_ADDRESS" "invalid global load of 4 bytes at 0x" "in kernel '" \
            "block (0,0,0) thread (" "PTX line "; do
  expect_err_line "$text" "out-of-bounds kernel"
done

report cuda_emulator_cli_test
