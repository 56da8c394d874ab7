#!/usr/bin/env bash
# The corpus module fp8_gemm_loop at full size (20 iterations of an
# f8e5m2[32768,1024] x f8e4m3fn[8192,1024] dot into bf16[32768,8192]):
# `bef-compile --targets=host,cuda` compiles it, bef-dump shows its GEMM as
# cuBLASLt's FP8 GEMM (types f8e5m2,f8e4m3fn->bf16, fp8=cublaslt), and
# bef-run runs it on the emulated H100 in sampling mode (KILN_EMU_SAMPLE=8:
# kernels run 8 blocks each and the cuBLASLt double checks every operand
# but computes no sums), printing the GEMM's modeled time. Its values are
# compared with the evaluator on a smaller variant in fp8_gemm_e2e_test.
# Skipped (77) without the corpus.
#
#   tests/tools/fp8_gemm_loop_test.sh bef-compile bef-dump bef-run libkiln_cuda_emulator.so SRC
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

BEF_COMPILE=${1:?usage: fp8_gemm_loop_test.sh bef-compile bef-dump bef-run emulator.so src}
BEF_DUMP=${2:?missing bef-dump}
BEF_RUN=${3:?missing bef-run}
EMULATOR=${4:?missing the emulator library}
SRC=${5:?missing the source directory}
MODULE=$SRC/../shared/hlo-corpus/openxla_hlo_tests/fp8_gemm_loop.hlo
if [[ ! -f $MODULE ]]; then
  echo "SKIP: no corpus module $MODULE"
  exit 77
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CLI_TOOL=bef-run
# shellcheck source=cli_test_lib.sh
source "$HERE/cli_test_lib.sh"

run "$BEF_COMPILE" "$MODULE" -o "$TMP/fp8.bef" --targets=host,cuda
expect_code 0 "compile fp8_gemm_loop for host and cuda"

run "$BEF_DUMP" "$TMP/fp8.bef"
expect_code 0 "bef-dump"
expect_out_has "types=f8e5m2,f8e4m3fn->bf16 m=32768 n=8192 k=1024" "the GEMM keeps its f8 operands"
expect_out_has "fp8=cublaslt" "bef-dump names cuBLASLt's FP8 GEMM"

KILN_CUDA_EMULATOR=$EMULATOR KILN_EMU_SAMPLE=8 run "$BEF_RUN" "$TMP/fp8.bef" --device=cuda --profile --iterations=1
expect_code 0 "fp8_gemm_loop on the emulator, sampled"
expect_out_has "results not computed" "sampling mode says so"
# The profile's GEMM row (its name is the dot's).
gemm_line=$(printf '%s\n' "$out" | grep -m1 "dot_XY" || true)
echo "modeled GEMM: $gemm_line"
[[ -n $gemm_line ]] || fail "the profile lists the GEMM"
report fp8_gemm_loop_test
