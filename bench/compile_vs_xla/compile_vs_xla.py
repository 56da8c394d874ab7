#!/usr/bin/env python3
"""Compile-time benchmark: kiln's bef-compile against XLA CPU's compiler on
the same HLO text.

  .venv/bin/python bench/compile_vs_xla/compile_vs_xla.py [MODULE...]
      [--ten] [--rounds R] [--build-dir DIR] [--jobs-rss] [--host-cpu LIST] [--no-cuda]

Why: kiln compiles once and runs many times, but "once" comes back with
every model change; its cold compile should not cost more than XLA's.
Models (default): the ten models of issue 17's table plus every other
corpus module over 100 KB; --ten keeps the ten. For each module, after one
warm-up compile of each side, R rounds alternate (so that machine noise
hits both sides alike):
  * kiln host: bef-compile --targets=host (--no-cache when the build has a
    compile cache), wall seconds of the process, and its peak RSS;
  * kiln host+cuda: the same with --targets=host,cuda;
  * XLA CPU: tools/xla-run/xla_run.py's load_module in this process (parse,
    HLO -> StableHLO, compile), after one warm-up compile;
  * kiln warm: when bef-compile has --cache-dir, a compile into a cache
    that one compile already filled (else "-").
It prints the median seconds per column, kiln/XLA for the host, and the
geometric mean of kiln/XLA over the modules both sides compiled; with
--jobs-rss also bef-compile's peak RSS with --jobs=1 and --jobs=2 (target:
parallel <= 1.5x serial). Modules either side refuses are listed as
skipped. Timings on a shared machine are noisy; compare rounds.
--host-cpu passes bef-compile's --host-cpu (default: its own, the three
x86-64 levels; `native` compiles one level for this machine, as XLA CPU
does); --no-cuda leaves out the host+cuda column.
"""

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "..", "shared", "hlo-corpus")
sys.path.insert(0, os.path.join(ROOT, "tools", "xla-run"))

# Issue 17's table: (label, corpus path).
TEN = [
    ("flan_t5_large", "large_language_models/flan_t5_large__inference_1gpu__module_0199.jit_predict_step"),
    ("clip", "vision_diffusion/clip__inference_1gpu__module_3910.jit_predict_step"),
    ("cappa", "multimodal/cappa__inference_1gpu__module_4197.jit_predict_step"),
    ("dit", "vision_diffusion/dit__inference_1gpu__module_0250.jit_predict_step"),
    ("mlp_mixer", "vision_diffusion/mlp_mixer__inference_1gpu__module_1687.jit_predict_step"),
    ("paligemma", "multimodal/paligemma__inference_1gpu__module_4839.jit_predict_step"),
    ("gemma3_4b", "large_language_models/gemma3_4b__inference_1gpu__module_0075.jit__prefill_jit"),
    ("resnet50", "vision_diffusion/resnet50__inference_1gpu__module_1589.jit_predict_step"),
    ("efficientnet", "vision_diffusion/efficientnet__inference_1gpu__module_0961.jit_predict_step"),
    ("llama3_8b", "large_language_models/llama3_8b__inference_1gpu__module_0087.jit__prefill_jit"),
]
SUFFIX = ".before_optimizations.txt"


def ten_models():
    base = os.path.join(CORPUS, "jax_models_rocm_perf_tools")
    return [(label, os.path.join(base, path + SUFFIX)) for label, path in TEN]


def large_corpus_models(exclude):
    found = []
    for dirpath, _, files in os.walk(CORPUS):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            if f.endswith(".txt") and os.path.getsize(path) > 100 * 1024 and \
                    os.path.realpath(path) not in exclude:
                found.append((os.path.splitext(f)[0].split(".")[0], path))
    return sorted(found, key=lambda m: m[1])


def run_compile(bef_compile, module, flags):
    """(seconds, peak RSS MiB) of one bef-compile, or raises RuntimeError.
    The RSS comes from /usr/bin/time: a child forked from this (jax-sized)
    process would report this process's peak as its own."""
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = os.path.join(tmp, "rss")
        cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file, bef_compile, module,
               "-o", os.path.join(tmp, "m.bef")] + flags
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip()
            raise RuntimeError(err.splitlines()[-1] if err else "exit %d" % proc.returncode)
        with open(rss_file) as f:
            return seconds, int(f.read().split()[-1]) / 1024.0


def xla_compile_seconds(module):
    import xla_run
    start = time.perf_counter()
    xla_run.load_module(module)  # raises xla_run.Refused
    return time.perf_counter() - start


def cache_flags(bef_compile):
    """(cold flags, has cache) from bef-compile --help."""
    text = subprocess.run([bef_compile, "--help"], capture_output=True, text=True).stdout
    has_cache = "--cache-dir" in text
    return (["--no-cache"] if "--no-cache" in text else []), has_cache


def warm_seconds(bef_compile, module, extra):
    with tempfile.TemporaryDirectory() as cache:
        flags = ["--targets=host", "--cache-dir=" + cache] + extra
        run_compile(bef_compile, module, flags)
        return run_compile(bef_compile, module, flags)[0]


def bench_module(args, bef_compile, cold, has_cache, module):
    import xla_run
    try:
        xla_compile_seconds(module)  # warm-up
    except xla_run.Refused as e:
        return None, "XLA refused: %s" % e
    try:
        run_compile(bef_compile, module, ["--targets=host"] + cold)  # warm-up
    except RuntimeError as e:
        return None, "kiln failed: %s" % e
    host, both, xla, rss = [], [], [], []
    for _ in range(args.rounds):
        s, r = run_compile(bef_compile, module, ["--targets=host"] + cold)
        host.append(s)
        rss.append(r)
        xla.append(xla_compile_seconds(module))
        if args.no_cuda:
            continue
        try:
            both.append(run_compile(bef_compile, module, ["--targets=host,cuda"] + cold)[0])
        except RuntimeError:
            pass
    row = {"host": statistics.median(host), "xla": statistics.median(xla), "rss": max(rss),
           "both": statistics.median(both) if both else None,
           "warm": warm_seconds(bef_compile, module, [f for f in cold if f != "--no-cache"]) if has_cache else None}
    if args.jobs_rss:
        row["rss_j1"] = run_compile(bef_compile, module, ["--targets=host,cuda", "--jobs=1"] + cold)[1]
        row["rss_j2"] = run_compile(bef_compile, module, ["--targets=host,cuda", "--jobs=2"] + cold)[1]
    return row, None


def fmt(v, spec="%.2f"):
    return "-" if v is None else spec % v


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("modules", nargs="*")
    p.add_argument("--ten", action="store_true", help="only the ten models of issue 17's table")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--jobs-rss", action="store_true", help="also peak RSS with --jobs=1 and --jobs=2")
    p.add_argument("--host-cpu", help="bef-compile --host-cpu for every kiln compile")
    p.add_argument("--no-cuda", action="store_true", help="skip the host+cuda compiles")
    args = p.parse_args(argv)
    bef_compile = os.path.join(args.build_dir, "tools", "bef-compile", "bef-compile")
    if not os.access(bef_compile, os.X_OK):
        print("compile_vs_xla: error: %s not built" % bef_compile, file=sys.stderr)
        return 1
    if args.modules:
        models = [(os.path.basename(m).split(".")[0], m) for m in args.modules]
    else:
        models = ten_models()
        if not args.ten:
            models += large_corpus_models({os.path.realpath(m) for _, m in models})
    cold, has_cache = cache_flags(bef_compile)
    if args.host_cpu:
        cold = cold + ["--host-cpu=" + args.host_cpu]
    header = "%-40s %8s %8s %8s %8s %8s %9s" % ("module", "kiln s", "k+cuda s", "XLA s", "kiln/XLA",
                                                 "warm s", "peak MiB")
    if args.jobs_rss:
        header += " %9s %9s %6s" % ("RSS j=1", "RSS j=2", "j2/j1")
    print(header)
    ratios, skipped = [], []
    for label, module in models:
        row, why = bench_module(args, bef_compile, cold, has_cache, module)
        if row is None:
            skipped.append((label, why))
            continue
        ratio = row["host"] / row["xla"]
        ratios.append(ratio)
        line = "%-40s %8.2f %8s %8.2f %8.2f %8s %9.0f" % (label[:40], row["host"], fmt(row["both"]), row["xla"],
                                                          ratio, fmt(row["warm"], "%.3f"), row["rss"])
        if args.jobs_rss:
            line += " %9.0f %9.0f %6.2f" % (row["rss_j1"], row["rss_j2"], row["rss_j2"] / row["rss_j1"])
        print(line, flush=True)
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print("geometric mean kiln/XLA (host, cold) over %d modules: %.2f" % (len(ratios), geomean))
    for label, why in skipped:
        print("skipped %s: %s" % (label, why))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
