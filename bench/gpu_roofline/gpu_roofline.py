#!/usr/bin/env python3
"""GPU roofline benchmark: kiln's CUDA kernels against the H100 timing model.

  # build the tools and the emulator first:
  #   flock /tmp/kiln_build.lock bash scripts/build.sh bef-compile bef-run bef-dump kiln_cuda_emulator
  python3 bench/gpu_roofline/gpu_roofline.py [--filter REGEX] [--kernels N]
      [--sample N | --full] [--timeout S] [--keep DIR] [--build-dir DIR]
      [--max-param-gib G]
  python3 bench/gpu_roofline/gpu_roofline.py --list-largest [--top N]

Why: no GPU is lent to kiln's CI, so kiln's CUDA kernels are measured on the
CUDA emulator's H100 timing model (docs/cuda_emulator.md, issue 11): every
launch gets a modeled time and the roofline-optimal time of the same work
(compulsory DRAM traffic at 3.0 TB/s or ideal issue, plus the launch cost).

For each module of a fixed set (MODULES below: synthetic reductions, a
transpose and a softmax in bench/gpu_roofline/modules/, five named corpus modules, and the
five largest corpus modules that compile for CUDA) it compiles the module
with `bef-compile --targets=cuda`, runs it with `bef-run --device=cuda
--export_profile=...` under the emulator (KILN_CUDA_EMULATOR, default
build/cuda_emulator/libkiln_cuda_emulator.so; seeded random inputs), and
prints per kernel (per execution) modeled µs, roofline-optimal µs, their
ratio, achieved GB/s (DRAM bytes / modeled time) and GFLOP/s (the cost
estimate's flops, where known), and per module the modeled end-to-end time
(kernels, library calls, copies and launch costs: the profile's leaf thunks)
against the sum of their roofline times. Modules too large to emulate in
full within about a minute run sampled (KILN_EMU_SAMPLE=<blocks per launch>:
counts and times extrapolated from a sample of each launch's blocks, no
results computed); the tables mark them.

Then it checks issue 11's targets and prints PASS or FAIL for each:
  * every memory-bound kernel with >= 4 MiB of DRAM traffic within 1.25x of
    its roofline time (memory-bound: the DRAM term sets its optimal time);
  * every module's modeled end-to-end time within 1.5x of its roofline sum;
  * the full f32[16777216] reduction within 1.3x of 67 MB / 3.0 TB/s (22.4 µs).
It is a benchmark: it exits 0 whatever the verdicts (2 on a usage error).

--list-largest shows how the five largest corpus modules were chosen: corpus
modules by decreasing instruction count (counted by the corpus's opcount.py),
keeping those that compile with --targets=cuda, launch no convolution
(convolutions run on the host only), take at most --max-param-gib GiB of
parameters (what the emulator can hold beside the host copies) and are not
in EXCLUDED (modules whose loops make millions of launches).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = "../shared/hlo-corpus"  # relative to ROOT, like the tests' corpus

# The timing model's figures (cuda_emulator/model/h100_figures.h):
# kDramBytesPerSecond and kLaunchSeconds.
DRAM_BYTES_PER_S = 3.0e12
LAUNCH_US = 2.0

MEMORY_BOUND_MIN_BYTES = 4 << 20
KERNEL_TARGET = 1.25
MODULE_TARGET = 1.5
FULL_REDUCTION = "reduce_full_16m_f32"
FULL_REDUCTION_ROOFLINE_US = 16777216 * 4 / DRAM_BYTES_PER_S * 1e6  # 22.37 µs
FULL_REDUCTION_TARGET = 1.3

# (name, path relative to ROOT, KILN_EMU_SAMPLE blocks per launch or None
# for full emulation). Sampled: modules that take more than about a minute
# to emulate in full.
MODULES = [
    ("reduce_full_16m_f32", "bench/gpu_roofline/modules/reduce_full_16m_f32.hlo", None),
    ("reduce_row_4096x4096_f32", "bench/gpu_roofline/modules/reduce_row_4096x4096_f32.hlo", None),
    ("reduce_col_4096x4096_f32", "bench/gpu_roofline/modules/reduce_col_4096x4096_f32.hlo", None),
    ("transpose_4096x4096_f32", "bench/gpu_roofline/modules/transpose_4096x4096_f32.hlo", None),
    ("softmax_4096x1024_f32", "bench/gpu_roofline/modules/softmax_4096x1024_f32.hlo", None),
    ("layer_norm_1x4096x768_bf16", CORPUS + "/openxla_benchmarks/cpu_bench/layer_norm_1x4096x768_bf16.hlo", None),
    ("sum_axis_1x4096x1024_bf16", CORPUS + "/openxla_benchmarks/cpu_bench/sum_axis_1x4096x1024_bf16.hlo", None),
    ("mean_axis_1x4096x1024_bf16", CORPUS + "/openxla_benchmarks/cpu_bench/mean_axis_1x4096x1024_bf16.hlo", None),
    ("mha_block_1x12x128x64_bf16", CORPUS + "/openxla_benchmarks/cpu_bench/mha_block_1x12x128x64_bf16.hlo", None),
    ("memory_bandwidth_fusion", CORPUS + "/openxla_hlo_tests/memory_bandwidth_fusion.hlo", None),
    # The five largest corpus modules by instruction count that compile for
    # CUDA, launch no convolution, take at most 4 GiB of parameters and are
    # not EXCLUDED, as --list-largest found them (6120, 1022, 999, 453 and
    # 137 instructions).
    # flan_t5_large takes 3 GiB of parameters: about 3 minutes and 13 GB of
    # memory, most of it its random inputs and 577 GEMMs on the cuBLAS double.
    ("flan_t5_large_inference", CORPUS + "/jax_models_rocm_perf_tools/large_language_models/"
     "flan_t5_large__inference_1gpu__module_0199.jit_predict_step.before_optimizations.txt", 4),
    ("bert_single_graph_2", CORPUS + "/torch_xla_graphhelper/bert__bert_single_graph_2.hlo", None),
    ("bench_mass_matrix_35", CORPUS + "/openxla_benchmarks/cpu_bench/bench_mass_matrix_35.hlo", None),
    ("dynamic_slice_loop_1x2048x768_bf16",
     CORPUS + "/openxla_benchmarks/cpu_bench/dynamic_slice_loop_1x2048x768_bf16.hlo", None),
    ("jax_issue_33666_threefry_split",
     CORPUS + "/openxla_benchmarks/cpu_bench/jax.issue.33666.linx.frag_0100.module_0005.hlo", None),
]

# Corpus modules --list-largest passes over although they compile, and why.
EXCLUDED = {
    "in_place_dynamic_update_slice_fusion.hlo":
        "500,000 while-loop trips, about 7.5M launches: hours and over 13 GB of profile on the emulator",
}


def tool(build_dir, name):
    return os.path.join(build_dir, "tools", name, name)


def run_command(cmd, timeout, env=None):
    """(exit code or None on timeout, stdout, stderr) of `cmd`."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout


def first_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[0][:200] if lines else "(no message)"


def compile_cuda(build_dir, path, bef, timeout, flags=()):
    """None, or why `path` does not compile for CUDA (bef-compile `flags` added)."""
    code, _, err = run_command([tool(build_dir, "bef-compile"), path, "-o", bef, "--targets=cuda"] + list(flags),
                               timeout)
    if code != 0:
        return "compile: " + (first_line(err) if code is not None else err)
    return None


def artifact_summary(build_dir, bef, timeout):
    """(result leaves, parameter bytes, thunk kind counts, whether an
    input_output_alias must alias) of a .bef."""
    code, out, err = run_command([tool(build_dir, "bef-dump"), bef, "--json"], timeout)
    if code != 0:
        raise RuntimeError("bef-dump: " + first_line(err))
    dump = json.loads(out)
    kinds = {}

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("kind"), str):
                kinds[node["kind"]] = kinds.get(node["kind"], 0) + 1
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(dump["program"])
    signature = dump["signature"]
    params = sum(leaf["slice"]["size"] for p in signature["parameters"] for leaf in p["leaves"])
    must_alias = any(a["must_alias"] for a in signature.get("aliases", []))
    return len(signature["result"]["leaves"]), params, kinds, must_alias


def measure(module, args, workdir):
    """Compiles and runs one module; returns a dict with its profile or error."""
    name, path, sample = module
    if args.full:
        sample = None
    elif args.sample:
        sample = args.sample
    result = {"name": name, "path": path, "sample": sample, "error": None, "seconds": 0.0}
    start = time.time()
    bef = os.path.join(workdir, name + ".bef")
    profile = os.path.join(workdir, name + ".json")
    result["error"] = compile_cuda(args.build_dir, path, bef, args.timeout)
    if result["error"]:
        return result
    leaves, params, _, must_alias = artifact_summary(args.build_dir, bef, args.timeout)
    if params > args.max_param_gib * 2**30:
        result["error"] = "skipped: %.1f GiB of parameters (--max-param-gib=%g)" % (params / 2**30, args.max_param_gib)
        return result
    env = dict(os.environ, KILN_CUDA_EMULATOR=args.emulator)
    env.pop("KILN_EMU_SAMPLE", None)
    if sample:
        env["KILN_EMU_SAMPLE"] = str(sample)
    # --output= per result leaf: the values are not printed.
    cmd = [tool(args.build_dir, "bef-run"), bef, "--device=cuda", "--export_profile=" + profile]
    if must_alias:
        cmd.append("--donate")
    code, _, err = run_command(cmd + ["--output="] * leaves, args.timeout, env)
    result["seconds"] = time.time() - start
    if code != 0:
        result["error"] = "run: " + (first_line(err) if code is not None else err)
        return result
    with open(profile) as f:
        result["profile"] = json.load(f)
    if not result["profile"]["modeled"]:
        # Without the timing model there is nothing to compare.
        result["error"] = "times not modeled (%s)" % result["profile"]["time_source"]
    return result


# ---- figures derived from a profile ------------------------------------------------

def leaf_thunks(profile):
    return [t for t in profile["thunks"] if not t["control_flow"]]


def ratio(modeled, optimal):
    return modeled / optimal if optimal else None


def is_memory_bound(t):
    """Whether the DRAM term sets the thunk's optimal time (a kernel whose
    optimal time is its launches plus its DRAM bytes at 3.0 TB/s)."""
    if t["kind"] != "kernel" or t["optimal_us"] is None or not t.get("dram_bytes"):
        return False
    dram_us = t["dram_bytes"] / DRAM_BYTES_PER_S * 1e6
    return dram_us >= 0.99 * (t["optimal_us"] - LAUNCH_US * t.get("launches", 1))


def bound_of(t):
    """What sets the thunk's optimal time: mem (DRAM), issue, launch (the
    roofline term is under 5% of it), lib (a library call, modeled from its
    flops and bytes), or - when unknown."""
    if t["kind"] != "kernel":
        return "lib" if t["kind"] == "gemm" else "-"
    if t["optimal_us"] is None:
        return "-"
    if t["optimal_us"] - LAUNCH_US * t.get("launches", 1) < 0.05 * t["optimal_us"]:
        return "launch"
    return "mem" if is_memory_bound(t) else "issue"


def module_totals(profile):
    """(modeled µs, roofline µs, {kind: thunks without a roofline}) per run.
    A leaf thunk the model gives no optimal time (copies and memsets: a
    transfer at the copy bandwidth is its own roofline) counts at its
    modeled time."""
    runs = max(profile["runs"], 1)
    roofline, unknown = 0.0, {}
    for t in leaf_thunks(profile):
        if t["optimal_us"] is None:
            unknown[t["kind"]] = unknown.get(t["kind"], 0) + 1
            roofline += t["total_us"] / runs
        else:
            roofline += t["optimal_us"] * t["count"] / runs
    return profile["total_us"], roofline, unknown


# ---- printing ------------------------------------------------------------------------

def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def run_label(result):
    return "sampled(%d)" % result["sample"] if result["sample"] else "full"


def print_kernels(results, limit):
    print("Per kernel, per execution (* sampled: extrapolated from KILN_EMU_SAMPLE blocks per launch);")
    print("GB/s = DRAM bytes / modeled time; bound: the roofline term that sets the optimal time")
    header = "%-36s %-7s %6s %11s %11s %7s %9s %8s %9s  %s"
    print(header % ("module / thunk", "kind", "count", "modeled µs", "optimal µs", "ratio", "DRAM MiB",
                    "GB/s", "GFLOP/s", "bound"))
    for r in results:
        if r["error"]:
            continue
        thunks = sorted(leaf_thunks(r["profile"]), key=lambda t: -t["total_us"])
        mark = "*" if r["sample"] else ""
        print(r["name"] + mark)
        shown = thunks if limit <= 0 else thunks[:limit]
        for t in shown:
            mean = t["mean_us"]
            dram = t.get("dram_bytes")
            gbs = dram / mean / 1e3 if dram and mean > 0 else None
            gflops = t["flops"] / mean / 1e3 if t["flops"] and mean > 0 else None
            bound = bound_of(t)
            name = t["name"] if len(t["name"]) <= 34 else t["name"][:31] + "..."
            print(header % ("  " + name, t["kind"], t["count"], fmt(mean, ".2f"), fmt(t["optimal_us"], ".2f"),
                            fmt(ratio(mean, t["optimal_us"]), ".2f"), fmt(dram / 2**20 if dram else None, ".2f"),
                            fmt(gbs, ".0f"), fmt(gflops, ".0f"), bound))
        if len(shown) < len(thunks):
            rest = sum(t["total_us"] for t in thunks[len(shown):]) / max(r["profile"]["runs"], 1)
            print("  ... %d more thunks, %.2f µs" % (len(thunks) - len(shown), rest))
    print()


def print_modules(results):
    print("Per module, end to end (leaf thunks per run: kernels, library calls, copies, launch costs)")
    header = "%-36s %-12s %6s %12s %12s %7s %8s  %s"
    print(header % ("module", "emulation", "thunks", "modeled µs", "roofline µs", "ratio", "wall s", "note"))
    for r in results:
        if r["error"]:
            print(header % (r["name"], run_label(r), "-", "-", "-", "-", "%.1f" % r["seconds"], r["error"]))
            continue
        modeled, roofline, unknown = module_totals(r["profile"])
        note = ""
        if unknown:
            note = ", ".join("%d %s" % (n, kind) for kind, n in sorted(unknown.items()))
            note += " without a model roofline, counted at their modeled time"
        print(header % (r["name"], run_label(r), len(leaf_thunks(r["profile"])), "%.2f" % modeled,
                        "%.2f" % roofline, fmt(ratio(modeled, roofline), ".2f"), "%.1f" % r["seconds"], note))
    print()


def verdict(ok):
    return "PASS" if ok else "FAIL"


def print_targets(results):
    print("Targets (issue 11)")
    for r in results:
        if r["error"]:
            skipped = r["error"].startswith("skipped")
            print("%s module %s: not measured (%s)" % ("SKIP" if skipped else "FAIL", r["name"], r["error"]))
            continue
        # One line per failing kernel, then the module's verdict with its worst.
        checked = [(ratio(t["mean_us"], t["optimal_us"]), t) for t in leaf_thunks(r["profile"])
                   if is_memory_bound(t) and t["dram_bytes"] >= MEMORY_BOUND_MIN_BYTES]
        for x, t in checked:
            if x > KERNEL_TARGET:
                print("FAIL memory-bound kernel %s/%s (%.1f MiB): %.2fx of its roofline (target <= %.2fx)" % (
                    r["name"], t["name"], t["dram_bytes"] / 2**20, x, KERNEL_TARGET))
        if checked:
            passed = sum(x <= KERNEL_TARGET for x, _ in checked)
            worst_x, worst = max(checked, key=lambda c: c[0])
            print("%s memory-bound kernels >= 4 MiB of %s: %d of %d within %.2fx of their roofline "
                  "(worst %.2fx, %s)%s" % (verdict(passed == len(checked)), r["name"], passed, len(checked),
                                          KERNEL_TARGET, worst_x, worst["name"], " [sampled]" if r["sample"] else ""))
    for r in results:
        if r["error"]:
            continue
        modeled, roofline, _ = module_totals(r["profile"])
        x = ratio(modeled, roofline)
        print("%s module %s: modeled %.2f µs, %.2fx of its roofline sum %.2f µs (target <= %.2fx)%s" % (
            verdict(x is not None and x <= MODULE_TARGET), r["name"], modeled, x or 0, roofline, MODULE_TARGET,
            " [sampled]" if r["sample"] else ""))
    full = next((r for r in results if r["name"] == FULL_REDUCTION and not r["error"]), None)
    if full:
        modeled = full["profile"]["total_us"]
        limit = FULL_REDUCTION_TARGET * FULL_REDUCTION_ROOFLINE_US
        print("%s full 16M f32 reduction: modeled %.2f µs (target <= %.1f x %.2f µs = %.2f µs)" % (
            verdict(modeled <= limit), modeled, FULL_REDUCTION_TARGET, FULL_REDUCTION_ROOFLINE_US, limit))
    elif any(r["name"] == FULL_REDUCTION for r in results):
        print("FAIL full 16M f32 reduction: not measured")


# ---- --list-largest ------------------------------------------------------------------

def list_largest(args):
    corpus = os.path.join(ROOT, CORPUS)
    sys.path.insert(0, corpus)
    sys.dont_write_bytecode = True  # the corpus is shared: leave no __pycache__ there
    import opcount  # the corpus's own census; stdlib only

    modules = []
    for directory, _, files in os.walk(corpus):
        for f in files:
            path = os.path.join(directory, f)
            if f.endswith((".py", ".tsv")) or f == "OPCOUNT.txt" or not opcount.is_hlo_file(path):
                continue
            modules.append((opcount.analyse(path)["n_instr"], os.path.relpath(path, ROOT)))
    modules.sort(key=lambda m: (-m[0], m[1]))
    found = 0
    with tempfile.TemporaryDirectory() as workdir:
        bef = os.path.join(workdir, "module.bef")
        for instructions, path in modules:
            why = EXCLUDED.get(os.path.basename(path)) or compile_cuda(args.build_dir, path, bef, args.timeout)
            params = None
            if not why:
                _, params, kinds, _ = artifact_summary(args.build_dir, bef, args.timeout)
                if kinds.get("convolution"):
                    why = "%d convolutions (host only)" % kinds["convolution"]
                elif params > args.max_param_gib * 2**30:
                    why = "parameters over %g GiB" % args.max_param_gib
            found += why is None
            print("%6d instructions %10s MiB  %-4s %s%s" % (
                instructions, fmt(params and params / 2**20, ".1f"), "OK" if why is None else "skip", path,
                "" if why is None else "  (" + why + ")"), flush=True)
            if found == args.top:
                break


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--filter", default="", help="only modules whose name matches this regex")
    parser.add_argument("--kernels", type=int, default=12, help="kernel rows per module (0: all)")
    parser.add_argument("--sample", type=int, default=0, help="sample every module with this many blocks per launch")
    parser.add_argument("--full", action="store_true", help="emulate every module in full")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per compile or run")
    parser.add_argument("--keep", default="", help="keep the artifacts and profiles in this directory")
    parser.add_argument("--build-dir", default=os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build")))
    parser.add_argument("--emulator", default=os.environ.get("KILN_CUDA_EMULATOR", ""))
    parser.add_argument("--list-largest", action="store_true", help="show how the largest modules were chosen")
    parser.add_argument("--top", type=int, default=5, help="with --list-largest: how many to find")
    parser.add_argument("--max-param-gib", type=float, default=4.0,
                        help="skip modules with more parameter bytes (memory: about 4x them)")
    args = parser.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    if not args.emulator:
        args.emulator = os.path.join(args.build_dir, "cuda_emulator", "libkiln_cuda_emulator.so")
    for needed in [tool(args.build_dir, t) for t in ("bef-compile", "bef-run", "bef-dump")] + [args.emulator]:
        if not os.path.exists(needed):
            print("gpu_roofline: error: %s is missing (build it first, see --help)" % needed, file=sys.stderr)
            return 2
    if args.sample < 0 or (args.sample and args.full):
        print("gpu_roofline: error: --sample takes a positive count and excludes --full", file=sys.stderr)
        return 2
    if args.list_largest:
        list_largest(args)
        return 0

    modules = [m for m in MODULES if re.search(args.filter, m[0])]
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.keep or scratch
        results = []
        for module in modules:
            print("running %s (%s) ..." % (module[0], module[1]), file=sys.stderr, flush=True)
            results.append(measure(module, args, workdir))
    print("GPU roofline on %s" % next((r["profile"]["device"] for r in results if not r["error"]), "(no run)"))
    print()
    print_kernels(results, args.kernels)
    print_modules(results)
    print_targets(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
