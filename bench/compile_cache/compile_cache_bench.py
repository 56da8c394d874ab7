#!/usr/bin/env python3
"""compile_cache_bench: what the persistent compile cache saves, per model.

For each of issue 17's ten corpus models it times bef-compile (wall
seconds, the median of --repeats runs) three ways, all into private
temporary cache directories (never the user's ~/.cache):

  no-cache  --no-cache: the plain compile;
  cold      into an empty cache: the plain compile plus storing its kernels
            and its artifact (the cache's overhead is cold - no-cache);
  warm      the same compile again: the artifact comes from the cache
            (target: at most 0.2 s per model);
  kernels   the module renamed (HloModule's name only): the artifact
            misses, every kernel comes from the kernel cache, so this is
            the floor of a compile after a small edit (passes, emission,
            linking);

and checks that the no-cache, cold and warm .bef files are byte-identical. Usage, after
`scripts/build.sh bef-compile`:

  python3 bench/compile_cache/compile_cache_bench.py [--targets=host] [--repeats=3]
"""
import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = [
    "flan_t5_large__inference", "clip__inference", "cappa__inference", "dit__inference",
    "mlp_mixer__inference", "paligemma__inference", "gemma3_4b__inference", "resnet50__inference",
    "efficientnet__inference", "llama3_8b__inference_1gpu__module_0087",
]
WARM_TARGET_SECONDS = 0.2


def find_model(corpus, prefix):
    for root, _, files in os.walk(corpus):
        for f in sorted(files):
            if f.startswith(prefix) and f.endswith(".txt"):
                return os.path.join(root, f)
    return None


def timed(cmd):
    start = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + done.stderr.strip())
    return seconds


def measure(bef_compile, module, targets, repeats, work):
    base = [bef_compile, module, "--targets=" + targets]
    times = {"no-cache": [], "cold": [], "warm": [], "kernels": []}
    renamed = os.path.join(work, "renamed.hlo")
    with open(module) as src, open(renamed, "w") as dst:
        text = src.read()
        dst.write(text.replace("HloModule ", "HloModule renamed_", 1))
    for r in range(repeats):
        cache = os.path.join(work, "cache%d" % r)
        times["no-cache"].append(timed(base + ["-o", os.path.join(work, "n.bef"), "--no-cache"]))
        times["cold"].append(timed(base + ["-o", os.path.join(work, "c.bef"), "--cache-dir=" + cache]))
        times["warm"].append(timed(base + ["-o", os.path.join(work, "w.bef"), "--cache-dir=" + cache]))
        times["kernels"].append(timed([bef_compile, renamed, "--targets=" + targets, "-o",
                                       os.path.join(work, "r.bef"), "--cache-dir=" + cache]))
        shutil.rmtree(cache)
    same = all(filecmp.cmp(os.path.join(work, "n.bef"), os.path.join(work, f), shallow=False)
               for f in ("c.bef", "w.bef"))
    return {k: statistics.median(v) for k, v in times.items()}, same


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser()
    parser.add_argument("--bef-compile", default=os.path.join(root, "build/tools/bef-compile/bef-compile"))
    parser.add_argument("--corpus", default=os.path.join(root, "../shared/hlo-corpus/jax_models_rocm_perf_tools"))
    parser.add_argument("--targets", default="host")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("compile_cache_bench: bef-compile --targets=%s, wall seconds (median of %d)" % (args.targets, args.repeats))
    print("%-16s %9s %9s %9s %9s %9s %6s" % ("model", "no-cache", "cold", "overhead", "warm", "kernels", "same"))
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for prefix in MODELS:
            module = find_model(args.corpus, prefix)
            if not module:
                print("%-16s missing from %s" % (prefix.split("__")[0], args.corpus))
                continue
            t, same = measure(args.bef_compile, module, args.targets, args.repeats, work)
            over = t["warm"] > WARM_TARGET_SECONDS
            failures += over or not same
            print("%-16s %9.3f %9.3f %+9.3f %9.3f%s %8.3f %6s" % (
                prefix.split("__")[0], t["no-cache"], t["cold"], t["cold"] - t["no-cache"], t["warm"],
                "!" if over else " ", t["kernels"], "yes" if same else "NO"))
    print("warm target: <= %.1f s per model (! marks a miss); .bef byte-identical across the three" % WARM_TARGET_SECONDS)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
