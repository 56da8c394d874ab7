"""Which corpus modules are small enough to evaluate, decided from HLO text.

Why: the cross-check and the peer benchmark run the same modules that
tests/corpus/corpus_test.cc evaluates. That test skips a module whose
instructions, in every computation, produce more than 50 MiB of values in
total (Shape::ByteSize summed; tuples count their leaves, sub-byte types one
byte per element, tokens nothing). This file computes that number from the
text so Python needs no kiln binary to choose, and lists the corpus files the
way tests/support/corpus_files.h does.
"""

import os
import re

CORPUS_DIR = "../shared/hlo-corpus"  # relative to the repo root, as in the C++ tests
MAX_LIVE_BYTES = 50 << 20

# Bytes one element occupies in a kiln Literal (common/element_type.h's
# StorageBytes): sub-byte and 8-bit types one byte, pred one byte.
_STORAGE_BYTES = {
    "pred": 1, "s2": 1, "s4": 1, "s8": 1, "s16": 2, "s32": 4, "s64": 8,
    "u2": 1, "u4": 1, "u8": 1, "u16": 2, "u32": 4, "u64": 8,
    "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "c64": 8, "c128": 16,
    "f8e5m2": 1, "f8e4m3": 1, "f8e4m3fn": 1, "f8e4m3b11fnuz": 1, "f8e5m2fnuz": 1,
    "f8e4m3fnuz": 1, "f8e3m4": 1, "f8e8m0fnu": 1, "f4e2m1fn": 1,
}

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")
_ARRAY = re.compile(r"\b([a-z][a-z0-9]*)\[([^\]]*)\]")


def is_corpus_module(path):
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1]
    return bool(name) and not name.startswith(".") and ext not in (".py", ".tsv") and name != "OPCOUNT.txt"


def corpus_files(directory=CORPUS_DIR):
    """Sorted paths of every corpus module; empty if the corpus is absent."""
    files = []
    for root, dirs, names in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        files += [os.path.join(root, n) for n in names if is_corpus_module(os.path.join(root, n))]
    return sorted(files)


def _shape_text(rest):
    """The shape at the start of an instruction's right-hand side."""
    rest = rest.lstrip()
    if not rest.startswith("("):
        return rest.split(" ", 1)[0]
    depth = 0
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return rest[:i + 1]
    return rest


def _array_bytes(shape_text):
    total = 0
    for type_name, dims in _ARRAY.findall(shape_text):
        size = _STORAGE_BYTES.get(type_name)
        if size is None:
            continue
        count = 1
        for d in dims.split(","):
            d = d.strip().lstrip("<=")
            if d:
                count *= int(d)
        total += count * size
    return total


def total_output_bytes(text):
    """Sum of every instruction's output bytes, as corpus_test.cc counts them."""
    total = 0
    for line in text.splitlines():
        if line.lstrip().startswith(("HloModule", "//", "#")):
            continue
        m = _INSTRUCTION.match(line)
        if m:
            total += _array_bytes(_shape_text(m.group(1)))
    return total


def small_modules(directory=CORPUS_DIR, limit=MAX_LIVE_BYTES):
    """(path, bytes) of every module at or under `limit`, and of those over it."""
    small, large = [], []
    for path in corpus_files(directory):
        with open(path, encoding="utf-8", errors="replace") as f:
            size = total_output_bytes(f.read())
        (small if size <= limit else large).append((path, size))
    return small, large
