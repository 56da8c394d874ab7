#!/usr/bin/env bash
# layering_test.sh: checks that binaries and libraries of the runtime layer
# (runtime, kernels_lib, serialization, thunks, bef-run, bef-dump) do not
# link LLVM, MLIR or lld, so artifacts run on machines without the compiler.
#
#   layering_test.sh [--expect-violation] FILE...
#
# Per FILE:
#   executable / shared object:
#     * ldd: no libLLVM*, libMLIR*, liblld*, libclang* among the (transitive)
#       shared-library dependencies;
#     * nm -C --defined-only: no llvm:: / mlir:: / lld:: symbols defined in
#       the file itself (static linking hides LLVM from ldd);
#     * nm -D -u -C: no llvm:: / mlir:: / lld:: symbols imported.
#   static archive (.a): nm -C: no llvm:: / mlir:: / lld:: symbol, defined or
#     referenced, in any member.
# kiln_forbid_llvm() in CMake only sees direct link dependencies; this looks
# at what was actually linked.
#
# Exit status: 0 all clean, 1 a violation (each printed), 2 bad usage or a
# file that cannot be inspected. With --expect-violation the test proves the
# check can fail: exit 0 iff every FILE has a violation, 1 if one is clean.
set -u

expect_violation=0
if [[ "${1:-}" == "--expect-violation" ]]; then
  expect_violation=1
  shift
fi
if [[ $# -eq 0 ]]; then
  echo "usage: layering_test.sh [--expect-violation] FILE..." >&2
  exit 2
fi
for tool in ldd nm; do
  if ! command -v "$tool" >/dev/null; then
    echo "layering_test: error: '$tool' not found" >&2
    exit 2
  fi
done

readonly LIB_PATTERN='lib(LLVM|MLIR|lld|clang)[-.A-Za-z0-9_]*\.so'
readonly SYMBOL_PATTERN='(^|[^A-Za-z0-9_:])(llvm|mlir|lld)::'

# Prints at most 5 matching lines, indented.
show() { head -n 5 | sed 's/^/      /'; }

# check FILE: prints the violations of FILE; returns 1 if there is one.
check() {
  local file=$1 bad=0 out
  if [[ "$file" == *.a ]]; then
    if ! out=$(nm -C "$file" 2>&1); then
      echo "layering_test: error: nm failed on $file: ${out%%$'\n'*}" >&2
      return 2
    fi
    if grep -Eq "$SYMBOL_PATTERN" <<<"$out"; then
      echo "  $file: archive defines or references LLVM/MLIR/lld symbols:"
      grep -E "$SYMBOL_PATTERN" <<<"$out" | show
      bad=1
    fi
    return $bad
  fi
  # ldd fails on a static executable ("not a dynamic executable"): nothing
  # is loaded dynamically then, and the nm checks below still apply.
  out=$(ldd "$file" 2>&1)
  if grep -Eq "$LIB_PATTERN" <<<"$out"; then
    echo "  $file: loads LLVM/MLIR/lld shared libraries (ldd):"
    grep -E "$LIB_PATTERN" <<<"$out" | show
    bad=1
  fi
  if ! out=$(nm -C --defined-only "$file" 2>&1); then
    echo "layering_test: error: nm failed on $file: ${out%%$'\n'*}" >&2
    return 2
  fi
  if grep -Eq "$SYMBOL_PATTERN" <<<"$out"; then
    echo "  $file: defines LLVM/MLIR/lld symbols (statically linked; nm --defined-only):"
    grep -E "$SYMBOL_PATTERN" <<<"$out" | show
    bad=1
  fi
  out=$(nm -D -u -C "$file" 2>/dev/null || true)
  if grep -Eq "$SYMBOL_PATTERN" <<<"$out"; then
    echo "  $file: imports LLVM/MLIR/lld symbols (nm -D -u):"
    grep -E "$SYMBOL_PATTERN" <<<"$out" | show
    bad=1
  fi
  return $bad
}

violations=0 clean=0
for file in "$@"; do
  if [[ ! -f "$file" ]]; then
    echo "layering_test: error: no such file: $file" >&2
    exit 2
  fi
  check "$file"
  case $? in
    0) echo "OK   $file"; clean=$((clean + 1)) ;;
    1) echo "FAIL $file links LLVM/MLIR/lld"; violations=$((violations + 1)) ;;
    *) exit 2 ;;
  esac
done

if [[ $expect_violation -eq 1 ]]; then
  if [[ $clean -gt 0 ]]; then
    echo "layering_test: expected every file to violate the layering; $clean did not"
    exit 1
  fi
  echo "layering_test: the check detects LLVM/MLIR/lld in all $violations file(s), as expected"
  exit 0
fi
if [[ $violations -gt 0 ]]; then
  echo "layering_test: $violations of $# file(s) link LLVM/MLIR/lld"
  exit 1
fi
echo "layering_test: all $# file(s) are free of LLVM/MLIR/lld"
exit 0
