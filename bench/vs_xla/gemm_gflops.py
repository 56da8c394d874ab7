#!/usr/bin/env python3
"""GEMM throughput on the host, kiln against XLA CPU, in GFLOP/s.

  .venv/bin/python bench/vs_xla/gemm_gflops.py [--rounds R] [--iterations N] [--build-dir DIR]

Why: a host GEMM's speed is the library behind it (OpenBLAS or oneDNN,
kernels_lib/host_gemm.cc) and its dispatch; these shapes are the ones the
host-backend issue names: f32 and bf16 (f32 result) at 512^3 and 2048^3, and
a batch of 64 small 64x64x64 matmuls. Each is one `dot` module written to a
temporary directory and timed by vs_xla.py (medians of alternating rounds,
inputs already in place on both sides); this prints 2*B*M*N*K / median.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

SHAPES = [  # name, batch, m, n, k, operand type
    ("f32_512", 1, 512, 512, 512, "f32"),
    ("bf16_512", 1, 512, 512, 512, "bf16"),
    ("f32_2048", 1, 2048, 2048, 2048, "f32"),
    ("bf16_2048", 1, 2048, 2048, 2048, "bf16"),
    ("f32_64x64x64_batch64", 64, 64, 64, 64, "f32"),
    ("bf16_64x64x64_batch64", 64, 64, 64, 64, "bf16"),
]


def module(batch, m, n, k, t):
    b = "%d," % batch if batch > 1 else ""
    dims = "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}" \
        if batch > 1 else "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
    return ("HloModule gemm\nENTRY e {\n  a = %s[%s%d,%d] parameter(0)\n  b = %s[%s%d,%d] parameter(1)\n"
            "  ROOT d = f32[%s%d,%d] dot(a, b), %s\n}\n" % (t, b, m, k, t, b, k, n, b, m, n, dims))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--build-dir", help="kiln build directory (vs_xla.py's default when absent)")
    args = parser.parse_args(argv)
    build = ["--build-dir", args.build_dir] if args.build_dir else []
    with tempfile.TemporaryDirectory(prefix="kiln-gemm-") as work:
        paths, flops = [], {}
        for name, batch, m, n, k, t in SHAPES:
            path = os.path.join(work, "gemm_%s.hlo" % name)
            with open(path, "w") as f:
                f.write(module(batch, m, n, k, t))
            paths.append(path)
            flops[path] = 2.0 * batch * m * n * k
        out = subprocess.run([sys.executable, os.path.join(HERE, "vs_xla.py"), "--rounds", str(args.rounds),
                              "--iterations", str(args.iterations)] + build + paths,
                             capture_output=True, text=True, check=True).stdout
    print("%-28s %14s %14s %10s" % ("shape", "XLA GFLOP/s", "kiln GFLOP/s", "kiln/XLA"))
    for line in out.splitlines():
        m = re.match(r"(\S+)\s+XLA\s+([\d.]+) ms\s+kiln\s+([\d.]+) ms", line)
        if not m:
            continue
        path = next(p for p in flops if p.endswith(m.group(1)[-60:]))
        xla, kiln = (flops[path] / (float(v) * 1e-3) / 1e9 for v in (m.group(2), m.group(3)))
        name = os.path.basename(path)[len("gemm_"):-len(".hlo")]
        print("%-28s %14.1f %14.1f %10.2f" % (name, xla, kiln, xla / kiln))
    for line in out.splitlines():
        if line.startswith("skipped"):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
