#!/usr/bin/env bash
# bench/on_gpu without a GPU: packs two corpus modules, runs the kit on the
# CUDA emulator with XLA CPU as the reference (--xla-platform cpu), and
# checks that both agree; then that a kiln output changed by one element is
# reported as a disagreement, and that xla-run's highest-precision rewrite
# marks every dot once. What the GPU session runs is this same path with
# the device's driver and XLA GPU.
#
# Needs jax (.venv from scripts/setup_python.sh); exits 77 (skipped)
# without it.
#
#   tests/tools/on_gpu_dry_run_test.sh BUILD_DIR libkiln_cuda_emulator.so SRC
set -u
BUILD=${1:?usage: on_gpu_dry_run_test.sh build-dir emulator.so src}
EMULATOR=${2:?missing the emulator library}
SRC=${3:?missing the source directory}
PY=$SRC/.venv/bin/python
if [ ! -x "$PY" ] || ! "$PY" -c "import jax" 2>/dev/null; then
  echo "SKIP: no .venv with jax (scripts/setup_python.sh)"
  exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$SRC" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
ON_GPU=(bench/on_gpu/on_gpu.py)

"$PY" "${ON_GPU[@]}" pack --kit "$TMP/kit" --build-dir "$BUILD" \
    --filter '^openxla_hlo_tests_(add|dot_bf16\.0)\.hlo$' > "$TMP/pack.log" 2>&1 || fail "pack: $(tail -1 "$TMP/pack.log")"
grep -q "kit: 2 modules (2 compile for CUDA)" "$TMP/pack.log" || fail "pack: $(tail -1 "$TMP/pack.log")"

KILN_CUDA_EMULATOR=$EMULATOR "$PY" "${ON_GPU[@]}" run --kit "$TMP/kit" --out "$TMP/out" --work "$TMP/work" \
    --xla-platform cpu --budget 300 > "$TMP/run.log" 2>&1 || fail "run: $(tail -3 "$TMP/run.log")"
grep -q "^summary: agree 2$" "$TMP/run.log" || fail "run: $(grep summary "$TMP/run.log") $(tail -3 "$TMP/run.log")"
[ -s "$TMP/out/results.json" ] || fail "no results.json"

# The comparison is not vacuous: one changed element is a disagreement.
"$PY" - "$TMP" <<'PYEOF' || fail "a changed kiln output was not reported"
import json, os, sys
import numpy as np
sys.path.insert(0, "bench/on_gpu")
import on_gpu
tmp = sys.argv[1]
root = os.path.join(tmp, "work", "kit")
entry = next(e for e in json.load(open(os.path.join(root, "manifest.json"))) if "dot_bf16" in e["name"])
work = os.path.join(tmp, "work", "modules", entry["name"])
xla = json.load(open(os.path.join(work, "xla.json")))
assert on_gpu.compare_outputs(root, entry, work, xla) == "agree"
path = os.path.join(work, "kiln_0.npy")
k = np.load(path)
bits = k.view(np.uint16) if k.dtype.itemsize == 2 else k.view(np.uint32)
bits.flat[0] ^= 0x4000  # an exponent bit: far outside any tolerance
np.save(path, k)
verdict = on_gpu.compare_outputs(root, entry, work, xla)
assert verdict.startswith("output 0: 1 of"), verdict
PYEOF

# operand_precision=highest once on every dot, replacing what was there.
"$PY" - <<'PYEOF' || fail "with_highest_precision"
import sys
sys.path.insert(0, "tools/xla-run")
import xla_run
text = """HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={default,high}
  ROOT e = f32[2,2] dot(d, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
out = xla_run.with_highest_precision(text)
dots = [l for l in out.splitlines() if " dot(" in l]
assert len(dots) == 2 and all(l.count("operand_precision={highest,highest}") == 1 for l in dots), out
assert "default,high" not in out, out
PYEOF
echo "PASS: on_gpu dry run (emulator + XLA CPU): 2 modules agree, a changed output disagrees"
