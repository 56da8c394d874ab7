#!/usr/bin/env python3
"""host_levels: what each x86-64 level's host kernels gain, per module.

bef-compile writes one host kernel image per x86-64 level (x86-64-v2, v3,
v4, and here also native; docs/host_kernels.md) and the runtime runs the
best one the CPU supports. This compiles each module once with every level
and times bef-run --device=host on each level the CPU can run
(KILN_HOST_CPU_LEVEL=<level>), alternating levels within each of --rounds
rounds so that machine noise hits all of them alike, and prints the best
median latency per level and its speed-up over x86-64-v2.

Modules: bench/host_levels/modules/*.hlo (an erf GELU, a swish, a softmax, a
layer norm, a batch-norm apply, group-norm statistics and a softsign:
elementwise and row-reduction kernels with transcendentals, divisions and
square roots) and the corpus
modules issue 15 names for their transcendentals, when the corpus is there.
Usage, after `scripts/build.sh bef-compile bef-run`:

  python3 bench/host_levels/host_levels.py [MODULE.hlo ...] [--rounds=3]
      [--iterations=30] [--build-dir=build]
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "..", "shared", "hlo-corpus")
CORPUS_MODULES = [
    "openxla_cc_tests/op_coverage/onednn_matmul__ExactGELUTestF32.hlo",
    "openxla_cc_tests/op_coverage/onednn_matmul__BiasAddELUFusion_F32.hlo",
    "openxla_benchmarks/cpu_bench/layer_norm_1x4096x768_bf16.hlo",
    "openxla_benchmarks/cpu_bench/mha_block_1x12x128x64_bf16.hlo",
]
LEVELS = ["x86-64-v2", "x86-64-v3", "x86-64-v4", "native"]


def median_us(bef_run, bef, level, iterations):
    env = dict(os.environ, KILN_HOST_CPU_LEVEL=level)
    out = subprocess.run([bef_run, bef, "--device=host", "--iterations=%d" % iterations, "--warmup=3"],
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return None  # a level this CPU cannot run
    return float(re.search(r"^latency.*median ([0-9.]+)", out.stdout, re.M).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("modules", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    bef_compile = os.path.join(args.build_dir, "tools", "bef-compile", "bef-compile")
    bef_run = os.path.join(args.build_dir, "tools", "bef-run", "bef-run")
    modules = args.modules or sorted(glob.glob(os.path.join(HERE, "modules", "*.hlo"))) + [
        p for p in (os.path.join(CORPUS, m) for m in CORPUS_MODULES) if os.path.exists(p)]
    print("median latency (us) per host CPU level, best of %d alternating rounds; (speed-up over x86-64-v2)"
          % args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        for path in modules:
            name = os.path.basename(path)[:-4]
            bef = os.path.join(tmp, name + ".bef")
            subprocess.run([bef_compile, path, "-o", bef, "--quiet", "--no-cache", "--host-cpu=" + ",".join(LEVELS)],
                           check=True)
            best = {}
            for _ in range(args.rounds):
                for level in LEVELS:
                    m = median_us(bef_run, bef, level, args.iterations)
                    if m is not None:
                        best[level] = min(best.get(level, m), m)
            base = best["x86-64-v2"]
            cells = ["%s %9.1f (%.2fx)" % (level.replace("x86-64-", ""), best[level], base / best[level])
                     if level in best else "%s %9s" % (level.replace("x86-64-", ""), "-") for level in LEVELS]
            print("%-40s %s" % (name, "  ".join(cells)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
