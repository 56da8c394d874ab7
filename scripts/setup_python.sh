#!/usr/bin/env bash
# Creates the Python virtual environment (.venv at the repo root, gitignored)
# that holds XLA's CPU backend from PyPI: kiln's second, independent oracle
# (tools/xla-run, tests/xla_crosscheck, tests/jax_cases/generate.py,
# bench/vs_xla). The C++ build never needs it; tests that do report SKIPPED
# when it is absent.
#
# Idempotent and quiet: a venv whose pinned versions are already installed is
# left alone. Versions are pinned because xla_run.py uses jaxlib's private
# bindings, whose names change between releases.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${KILN_VENV:-.venv}
PYTHON=${PYTHON:-python3}
PINS=(jax==0.10.2 jaxlib==0.10.2 numpy==2.4.6 ml_dtypes==0.6.0)

pins_ok() {
  [ -x "$VENV/bin/python" ] || return 1
  "$VENV/bin/python" - "${PINS[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    if version(name) != want:
        sys.exit(1)
import jax, numpy, ml_dtypes  # noqa: F401  (the install is importable)
PY
}

if pins_ok; then
  echo "setup_python: $VENV ready (${PINS[*]})"
  exit 0
fi

echo "setup_python: installing ${PINS[*]} into $VENV"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PINS[@]}"
pins_ok || { echo "setup_python: $VENV is not usable after installing" >&2; exit 1; }
echo "setup_python: $VENV ready (${PINS[*]})"
