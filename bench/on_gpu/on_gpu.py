#!/usr/bin/env python3
"""kiln's CUDA artifacts on a real GPU, beside XLA's GPU backend.

  # here, with the compiler built: compile the modules and pack what a GPU
  # machine needs (bef-run, its non-system libraries, the .bef and HLO files)
  python3 bench/on_gpu/on_gpu.py pack --kit DIR [--filter REGEX] [--bench-only]
  # optional, here: XLA CPU's outputs for the kit's modules, stored in the
  # kit, so that the GPU machine runs only kiln for those (device time)
  python3 bench/on_gpu/on_gpu.py reference --kit DIR [--filter REGEX]
  # on the GPU machine (no LLVM, no compiler): run every artifact there
  python3 bench/on_gpu/on_gpu.py run --kit DIR --out DIR [--budget S]
  # here again: measured against modeled, per kernel and per module
  python3 bench/on_gpu/on_gpu.py calibrate --kit DIR --results DIR

Why: CI has no GPU, so kiln's CUDA path is proven on its CUDA emulator and
timed by the emulator's H100 model (docs/gpu_timing_model.md). When a
session is lent a GPU this script checks both claims on the real device:

  * correctness: every module that compiles for CUDA (the benchmark set of
    bench/gpu_roofline and the whole corpus) runs with `bef-run
    --device=cuda` on the GPU's own driver, and each output is compared with
    XLA's GPU backend (tools/xla-run/xla_run.py --platform=cuda) on the same
    inputs, with the cross-check's tolerances (tests/xla_crosscheck);
  * speed: bef-run's measured latency and per-thunk profile (CUDA events
    around every thunk), and XLA's time for the same module;
  * the model: `calibrate` runs the same artifacts under the emulator here
    and prints measured over modeled time for every kernel and module.

The kit is self-contained: the GPU machine needs the NVIDIA driver, a CUDA
13 cuBLAS (and cuDNN 9, cuFFT for the modules that convolve or transform;
found in the Python nvidia-* packages when not on the loader path), and Python with numpy, ml_dtypes and jax[cuda] for the XLA side (the
kiln side runs without jax). `run` writes results.json and profiles.tgz to
--out and prints one line per module and a summary table. Exit status 0
whatever the verdicts (it is a measurement), 2 on a usage error.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu_roofline"))
sys.path.insert(0, os.path.join(ROOT, "tests", "xla_crosscheck"))
sys.path.insert(0, os.path.join(ROOT, "tools", "xla-run"))

# Libraries every Linux machine with a GPU driver has: never packed.
SYSTEM_LIBRARIES = ("linux-vdso", "libc.so", "libm.so", "libstdc++", "libgcc_s", "ld-linux",
                    "libpthread", "libdl.so", "librt.so")
MAX_PARAM_BYTES = 8 << 30
SEED = 0


def safe_name(path):
    return re.sub(r"[^\w.-]", "_", path)


# ---- pack (here) ----------------------------------------------------------------

def module_list(args):
    import gpu_roofline
    import corpus_select
    modules = [(name, path, True) for name, path, _ in gpu_roofline.MODULES]
    if not args.bench_only:
        bench_paths = {os.path.normpath(p) for _, p, _ in gpu_roofline.MODULES}
        for path in corpus_select.corpus_files():
            if os.path.normpath(os.path.relpath(path, ROOT)) in bench_paths:
                continue
            rel = os.path.relpath(path, os.path.join(ROOT, corpus_select.CORPUS_DIR))
            modules.append((safe_name(rel), os.path.relpath(path, ROOT), False))
    pattern = re.compile(args.filter) if args.filter else None
    return [m for m in modules if not pattern or pattern.search(m[0])]


def pack_libraries(binary, libdir):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
        if m and not any(m.group(1).startswith(s) for s in SYSTEM_LIBRARIES):
            shutil.copy2(os.path.realpath(m.group(2)), os.path.join(libdir, m.group(1)))


def artifact_details(build_dir, bef, timeout):
    """The entry's array leaves in order, as 'f32[2,3]' (tuples flattened),
    and the names of the artifact's CUDA kernel functions."""
    import gpu_roofline
    code, out, err = gpu_roofline.run_command([gpu_roofline.tool(build_dir, "bef-dump"), bef, "--json"], timeout)
    if code != 0:
        raise RuntimeError("bef-dump: " + gpu_roofline.first_line(err))
    dump = json.loads(out)
    leaves = []
    for p in dump["signature"]["parameters"]:
        leaves += ["%s[%s]" % m for m in re.findall(r"(\w+)\[([\d,]*)\]", p["shape"])]
    functions = [k["name"] for image in dump["kernel_images"] if image["kind"] == "cuda" for k in image["kernels"]]
    return leaves, functions


def pack(args):
    import gpu_roofline
    stage = os.path.join(args.kit, "stage")
    shutil.rmtree(args.kit, ignore_errors=True)
    for sub in ("bin", "lib", "bef", "hlo"):
        os.makedirs(os.path.join(stage, sub))
    bef_run = gpu_roofline.tool(args.build_dir, "bef-run")
    subprocess.run(["strip", "-o", os.path.join(stage, "bin", "bef-run"), bef_run], check=True)
    pack_libraries(bef_run, os.path.join(stage, "lib"))
    manifest = []
    for name, path, bench in module_list(args):
        entry = {"name": name, "path": path, "bench": bench}
        bef = os.path.join(stage, "bef", name + ".bef")
        # f32 dots and convolutions in full f32, as XLA runs them here
        # (operand_precision=highest): TF32 would differ from it by ~1e-3.
        error = gpu_roofline.compile_cuda(args.build_dir, path, bef, args.timeout, ["--tf32=off"])
        if error:
            entry["compile_error"] = error
        else:
            leaves, params, kinds, must_alias = gpu_roofline.artifact_summary(args.build_dir, bef, args.timeout)
            parameters, functions = artifact_details(args.build_dir, bef, args.timeout)
            entry.update(leaves=leaves, param_bytes=params, kinds=kinds, must_alias=must_alias,
                         parameters=parameters, kernel_functions=functions)
            # A dump that elides constant data ({...}) gets placeholder
            # constants, and kiln's placeholder is not XLA's: their outputs
            # are not comparable.
            with open(os.path.join(ROOT, path), errors="replace") as f:
                entry["elided_constants"] = "{...}" in f.read()
            shutil.copy2(os.path.join(ROOT, path), os.path.join(stage, "hlo", name + ".hlo"))
        manifest.append(entry)
        print("%-60s %s" % (name, entry.get("compile_error", "ok")), flush=True)
    with open(os.path.join(stage, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with tarfile.open(os.path.join(args.kit, "kit.tgz"), "w:gz") as tar:
        tar.add(stage, arcname="kit")
    shutil.rmtree(stage)
    size = os.path.getsize(os.path.join(args.kit, "kit.tgz"))
    print("kit: %d modules (%d compile for CUDA), %.1f MiB" %
          (len(manifest), sum("compile_error" not in m for m in manifest), size / 2**20))


# ---- reference (here, optional) ---------------------------------------------------

def reference(args):
    """XLA CPU's outputs on the run's inputs for the kit's modules (those that
    match --filter and take at most --max-param-mib of parameters), stored in
    the kit as ref/<module>/: `run` then compares kiln's GPU outputs with them
    and spends no device time on XLA for those modules."""
    root, manifest = unpack(args.kit, args.work)
    work_root = os.path.join(args.work, "modules")
    shutil.rmtree(work_root, ignore_errors=True)
    pattern = re.compile(args.filter) if args.filter else None
    names = []
    for e in manifest:
        if "compile_error" in e or e["param_bytes"] > args.max_param_mib << 20:
            continue
        if pattern and not pattern.search(e["name"]):
            continue
        work = os.path.join(work_root, e["name"])
        os.makedirs(work, exist_ok=True)
        try:
            write_inputs(e, work)
        except Exception as ex:  # noqa: BLE001 - such a module gets no reference (run says why)
            print("%s: no inputs: %s: %s" % (e["name"], type(ex).__name__, ex))
            continue
        names.append(e["name"])
    run_xla(root, work_root, names, "cpu", time.time() + args.budget)
    for name in names:
        work = os.path.join(work_root, name)
        xla = read_json(os.path.join(work, "xla.json"))
        if xla.get("status") != "ok":
            continue
        ref = os.path.join(root, "ref", name)
        shutil.rmtree(ref, ignore_errors=True)
        os.makedirs(ref)
        xla["platform"] = "cpu"
        xla.pop("us", None)  # a CPU time says nothing beside a GPU's
        with open(os.path.join(ref, "xla.json"), "w") as f:
            json.dump(xla, f)
        for i in range(xla["outputs"]):
            shutil.copy2(os.path.join(work, "xla_%d.npy" % i), ref)
    kept = prune_references(root, args.max_ref_mib << 20, args.total_ref_mib << 20)
    with tarfile.open(os.path.join(args.kit, "kit.tgz"), "w:gz") as tar:
        tar.add(root, arcname="kit")
    size = os.path.getsize(os.path.join(args.kit, "kit.tgz"))
    print("reference: XLA CPU outputs for %d of %d modules stored in the kit (%.1f MiB)" %
          (kept, len(names), size / 2**20))
    return 0


def prune_references(root, max_module_bytes, max_total_bytes):
    """Keeps the smallest references, each at most max_module_bytes, together
    at most max_total_bytes (the kit travels to the GPU machine); the other
    modules get XLA's GPU reference there. Returns how many are kept."""
    refs = []
    for name in os.listdir(os.path.join(root, "ref")):
        folder = os.path.join(root, "ref", name)
        refs.append((sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)), folder))
    total, kept = 0, 0
    for size, folder in sorted(refs):
        if size <= max_module_bytes and total + size <= max_total_bytes:
            total += size
            kept += 1
        else:
            shutil.rmtree(folder)
    return kept


# ---- run (on the GPU machine) -----------------------------------------------------

def unpack(kit, work):
    """Extracts the kit into WORK/kit; returns (that folder, the manifest)."""
    root = os.path.join(work, "kit")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    with tarfile.open(os.path.join(kit, "kit.tgz")) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(work, filter="data")
        else:
            tar.extractall(work)
    with open(os.path.join(root, "manifest.json")) as f:
        return root, json.load(f)


def cuda_library_path():
    """Folders of the Python nvidia-* packages' CUDA libraries (cuBLAS, cuDNN, cuFFT, cuSOLVER)."""
    dirs = []
    for site in sys.path:
        for lib in glob.glob(os.path.join(site, "nvidia", "*", "lib")) + \
                glob.glob(os.path.join(site, "nvidia", "cu*", "lib")):
            if any(glob.glob(os.path.join(lib, name + "*.so*"))
                   for name in ("libcublas", "libcudart", "libcudnn", "libcufft", "libcusolver")):
                dirs.append(lib)
    return sorted(set(dirs))


class LeafSpec:
    """dims and numpy dtype of 'f32[2,3]' (what xla_run.random_input takes)."""

    def __init__(self, text):
        import xla_run
        m = re.match(r"(\w+)\[([\d,]*)\]", text)
        self.dims = tuple(int(d) for d in m.group(2).split(",") if d)
        self.dtype = xla_run.dtype_of(m.group(1))


def write_inputs(entry, work):
    """Seeded random inputs (xla_run.random_input) as input_<i>.npy."""
    import numpy as np
    import xla_run
    rng = np.random.default_rng(zlib.crc32(entry["name"].encode()) ^ SEED)
    for i, text in enumerate(entry["parameters"]):
        array = xla_run.random_input(LeafSpec(text), rng)
        np.save(os.path.join(work, "input_%d.npy" % i), array, allow_pickle=False)


def perturbed(array):
    """Each float element moved by one ulp toward +inf: what a
    well-conditioned module's outputs barely notice."""
    import ml_dtypes
    import numpy as np
    import xla_run
    if xla_run.value_class(array.dtype) != "float":
        return array
    top = np.inf if array.dtype.kind == "f" else float(ml_dtypes.finfo(array.dtype).max)
    return np.nextafter(array, np.array(top).astype(array.dtype))


def xla_worker(args):
    """Runs XLA GPU on each named module in order: inputs, outputs, timing."""
    import numpy as np
    import xla_run
    names = args.names.split(",")
    for name in names:
        work = os.path.join(args.work, name)
        os.makedirs(work, exist_ok=True)
        with open(os.path.join(args.work, "current"), "w") as f:
            f.write(name)
        result = {}
        try:
            import crosscheck
            path = os.path.join(args.kit, "hlo", name + ".hlo")
            module = xla_run.load_module(path, platform=args.platform)
            count = len(module.params)
            inputs = [np.load(os.path.join(work, "input_%d.npy" % i), allow_pickle=False).view(leaf.dtype)
                      .reshape(leaf.dims) for i, leaf in enumerate(module.params)]
            outputs = xla_run.run_module(module, inputs)
            for i, array in enumerate(outputs):
                np.save(os.path.join(work, "xla_%d.npy" % i), array, allow_pickle=False)
            result["inputs"] = count
            result["outputs"] = len(outputs)
            result["dtypes"] = [np.dtype(a.dtype).name for a in outputs]  # .npy loses ml_dtypes
            # XLA against itself on inputs one ulp away: where that already
            # fails the tolerance, the module amplifies rounding on these
            # inputs and a disagreement says nothing about kiln.
            with open(path, errors="replace") as f:
                klass = crosscheck.module_class(f.read())
            shaken = xla_run.run_module(module, [perturbed(a) for a in inputs])
            for i, (a, b) in enumerate(zip(shaken, outputs)):
                mismatch = crosscheck.compare(a, b, klass)
                if mismatch:
                    result["ill_conditioned"] = "output %d: XLA with inputs 1 ulp away: %s" % (i, mismatch["what"])
                    break
            result["us"] = xla_run.pipelined_seconds(module, inputs) * 1e6
            result["status"] = "ok"
        except xla_run.Refused as e:
            result = {"status": "refused", "reason": str(e)[:300]}
        except Exception as e:  # noqa: BLE001 - one module's failure is its result
            result = {"status": "error", "reason": ("%s: %s" % (type(e).__name__, e))[:300]}
        with open(os.path.join(work, "xla.json"), "w") as f:
            json.dump(result, f)
    return 0


def run_xla(kit, work, names, platform, deadline, module_timeout=90):
    """Runs xla_worker over `names`; a module that kills the worker or takes
    longer than `module_timeout` is marked and the worker restarted past it."""
    current_path = os.path.join(work, "current")
    pending = list(names)
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", TF_CPP_MIN_LOG_LEVEL="3")
    while pending and time.time() < deadline:
        cmd = [sys.executable, os.path.abspath(__file__), "xla-worker", "--kit", kit, "--work", work,
               "--names", ",".join(pending), "--platform", platform]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        current, since = None, time.time()
        while proc.poll() is None:
            time.sleep(0.2)
            now_current = open(current_path).read() if os.path.exists(current_path) else None
            if now_current != current:
                current, since = now_current, time.time()
            if time.time() - since > module_timeout or time.time() > deadline:
                proc.kill()
                proc.wait()
                break
        pending = [n for n in pending if not os.path.exists(os.path.join(work, n, "xla.json"))]
        if pending and pending[0] == current:  # it died or hung on this one
            with open(os.path.join(work, current, "xla.json"), "w") as f:
                json.dump({"status": "crashed", "reason": "XLA died or took over %d s" % module_timeout}, f)
            pending.pop(0)


def bef_run_command(root, entry, work):
    cmd = [os.path.join(root, "bin", "bef-run"), os.path.join(root, "bef", entry["name"] + ".bef"),
           "--device=cuda"]
    cmd += ["--input=@" + os.path.join(work, "input_%d.npy" % i) for i in range(len(entry["parameters"]))]
    if entry.get("must_alias"):
        cmd.append("--donate")
    return cmd


def run_kiln(root, entry, work, timeout):
    """bef-run --device=cuda: outputs; for the benchmark set also latency, a
    measured profile and a trace."""
    cmd = bef_run_command(root, entry, work)
    cmd += ["--output=@" + os.path.join(work, "kiln_%d.npy" % i) for i in range(entry["leaves"])]
    if entry["bench"]:
        cmd += ["--iterations=20", "--warmup=3", "--export_profile=" + os.path.join(work, "profile.json"),
                "--trace=" + os.path.join(work, "trace.json")]
    else:  # a latency figure for every module, to set beside XLA's
        cmd += ["--iterations=5", "--warmup=1"]
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": "bef-run timed out after %d s" % timeout}
    result = {"seconds": round(time.time() - start, 2)}
    if p.returncode != 0:
        lines = [l for l in (p.stderr + p.stdout).splitlines() if l.strip()]
        result.update(status="error", reason=("exit %d: %s" % (p.returncode, lines[0] if lines else ""))[:300])
        return result
    m = re.search(r"min ([\d.]+)\s+median ([\d.]+)", p.stdout)
    result.update(status="ok", min_us=float(m.group(1)) if m else None,
                  median_us=float(m.group(2)) if m else None)
    profile = read_json(os.path.join(work, "profile.json"))
    if profile:
        result["profile_us"] = profile.get("total_us")
    return result


def ncu_kernels(command, timeout, from_start=True):
    """Each kernel launch of `command` under Nsight Compute (kernels replayed
    one at a time at the GPU's own clocks): {"kernels": [(name, ns)]}, or an
    error. Without `from_start`, only the launches between the program's
    cuProfilerStart and cuProfilerStop count."""
    import csv
    ncu = shutil.which("ncu") or next(iter(sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))), None)
    if not ncu:
        return {"status": "error", "reason": "ncu not found"}
    cmd = [ncu, "--metrics", "gpu__time_duration.sum", "--csv", "--clock-control", "none",
           "--launch-count", "5000", "--profile-from-start", "on" if from_start else "off"] + command
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": "ncu timed out after %d s" % timeout}
    rows = []
    lines = [l for l in p.stdout.splitlines() if l.startswith('"')]
    for row in csv.DictReader(lines):
        if row.get("Metric Name") == "gpu__time_duration.sum":
            scale = {"nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9}.get(row.get("Metric Unit"), 1)
            rows.append((row.get("Kernel Name", "?"), float(row["Metric Value"].replace(",", "")) * scale))
    if not rows:
        tail = [l for l in (p.stderr + p.stdout).splitlines() if l.strip()][-3:]
        return {"status": "error", "reason": " | ".join(tail)[:300]}
    return {"status": "ok", "kernels": rows}


def xla_profile_one(args):
    """Compiles one module on XLA GPU, runs it twice, then once more between
    cuProfilerStart and cuProfilerStop (so ncu sees one run, not the
    compiler's autotuning)."""
    import ctypes
    import numpy as np
    import xla_run
    module = xla_run.load_module(os.path.join(args.kit, "hlo", args.name + ".hlo"), platform="cuda")
    inputs = [np.load(os.path.join(args.work, "input_%d.npy" % i), allow_pickle=False).view(leaf.dtype)
              .reshape(leaf.dims) for i, leaf in enumerate(module.params)]
    device_inputs = xla_run.put_inputs(module, inputs)
    for _ in range(2):
        xla_run.execute(module, device_inputs)
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuProfilerStart()
    xla_run.execute(module, device_inputs)
    cuda.cuProfilerStop()
    return 0


def read_json(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def compare_outputs(root, entry, work, xla):
    """'agree', or a one-line description of the first output that differs."""
    import numpy as np
    import crosscheck
    with open(os.path.join(root, "hlo", entry["name"] + ".hlo"), errors="replace") as f:
        klass = crosscheck.module_class(f.read())
    import xla_run
    for i in range(xla["outputs"]):
        dtype = xla_run.dtype_of(xla["dtypes"][i])
        x = np.load(os.path.join(work, "xla_%d.npy" % i), allow_pickle=False).view(dtype)
        k = np.load(os.path.join(work, "kiln_%d.npy" % i), allow_pickle=False)
        if k.dtype != dtype and k.dtype.itemsize == dtype.itemsize:
            k = k.view(dtype)
        mismatch = crosscheck.compare(k, x, klass)
        if mismatch:
            return "output %d: %s; worst %s" % (i, mismatch["what"], mismatch.get("worst", ""))
    return "agree"


def run(args):
    deadline = time.time() + args.budget
    root, manifest = unpack(args.kit, args.work)
    os.environ["LD_LIBRARY_PATH"] = ":".join([os.path.join(root, "lib")] + cuda_library_path() +
                                             [os.environ.get("LD_LIBRARY_PATH", "")])
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # kiln shares the GPU
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    work_root = os.path.join(args.work, "modules")
    shutil.rmtree(work_root, ignore_errors=True)
    pattern = re.compile(args.filter) if args.filter else None
    max_param_bytes = min(MAX_PARAM_BYTES, args.max_param_mib << 20)
    runnable = [e for e in manifest if "compile_error" not in e and e["param_bytes"] <= max_param_bytes
                and (not pattern or pattern.search(e["name"]))]
    runnable.sort(key=lambda e: not e["bench"])  # the benchmark set first
    print("kit: %d modules, %d to run; LD_LIBRARY_PATH=%s" % (len(manifest), len(runnable),
                                                           os.environ["LD_LIBRARY_PATH"]), flush=True)
    # kiln first: every module it runs then gets XLA's reference.
    # kiln's runs stop at their share of the budget, so that the modules it
    # ran still get XLA's reference in the rest.
    kiln_deadline = time.time() + args.kiln_share * (deadline - time.time())
    kiln, ncu = {}, {}
    for e in runnable:
        work = os.path.join(work_root, e["name"])
        os.makedirs(work, exist_ok=True)
        if time.time() > kiln_deadline:
            kiln[e["name"]] = {"status": "not run (budget)"}
            continue
        try:
            write_inputs(e, work)
        except Exception as ex:  # noqa: BLE001 - one module's failure is its result
            kiln[e["name"]] = {"status": "error", "reason": "inputs: %s: %s" % (type(ex).__name__, ex)}
            continue
        kiln[e["name"]] = run_kiln(root, e, work, args.bench_timeout if e["bench"] else args.timeout)
        if args.ncu and e["bench"] and kiln[e["name"]]["status"] == "ok":
            ncu[e["name"]] = ncu_kernels(bef_run_command(root, e, work) + ["--output="] * e["leaves"],
                                         args.ncu_timeout)
            env_cmd = [sys.executable, os.path.abspath(__file__), "xla-profile-one", "--kit", root,
                       "--work", work, "--name", e["name"]]
            ncu[e["name"] + ":xla"] = ncu_kernels(env_cmd, args.ncu_timeout, from_start=False)
        print("kiln %-58s %-6s %s" % (e["name"][:58], kiln[e["name"]]["status"], kiln[e["name"]].get("reason", "")),
              flush=True)
    ran = [e["name"] for e in runnable if kiln[e["name"]]["status"] == "ok"]
    # Modules with XLA CPU outputs in the kit (`reference`) use those; XLA
    # on the GPU runs the rest.
    for name in ran:
        ref = os.path.join(root, "ref", name)
        if os.path.isdir(ref):
            for f in os.listdir(ref):
                shutil.copy2(os.path.join(ref, f), os.path.join(work_root, name))
    run_xla(root, work_root, [n for n in ran if not os.path.isdir(os.path.join(root, "ref", n))],
            args.xla_platform, deadline)
    results = []
    for e in runnable:
        work = os.path.join(work_root, e["name"])
        xla = read_json(os.path.join(work, "xla.json")) or {"status": "not run"}
        verdict = "-"
        if kiln[e["name"]]["status"] == "ok" and xla.get("status") == "ok":
            try:
                verdict = compare_outputs(root, e, work, xla)
            except Exception as ex:  # noqa: BLE001
                verdict = "compare failed: %s" % ex
            if verdict != "agree" and xla.get("ill_conditioned"):
                verdict = "ill-conditioned (%s); kiln: %s" % (xla["ill_conditioned"], verdict)
            if verdict != "agree" and e.get("elided_constants"):
                verdict = "elided constants (placeholders differ); kiln: %s" % verdict
        results.append({"name": e["name"], "bench": e["bench"], "kinds": e["kinds"], "xla": xla,
                        "kiln": kiln[e["name"]], "ncu": ncu.get(e["name"]),
                        "xla_ncu": ncu.get(e["name"] + ":xla"), "verdict": verdict})
        k = kiln[e["name"]]
        print("%-58s kiln %-6s %10s µs | xla %-8s %10s µs | %s" % (
            e["name"][:58], k["status"], fmt(k.get("median_us")), xla.get("status"), fmt(xla.get("us")),
            verdict if k["status"] == "ok" else k.get("reason", "")), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"device": device_name(), "results": results,
                   "not_compiled": [e for e in manifest if "compile_error" in e]}, f, indent=1)
    with tarfile.open(os.path.join(args.out, "profiles.tgz"), "w:gz") as tar:
        for e in runnable:
            for kind in ("profile", "trace"):
                path = os.path.join(work_root, e["name"], kind + ".json")
                if os.path.exists(path):
                    tar.add(path, arcname="%s.%s.json" % (e["name"], kind))
    summarize(results)
    return 0


def device_name():
    if os.environ.get("KILN_CUDA_EMULATOR"):
        return "kiln CUDA emulator (KILN_CUDA_EMULATOR)"
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True)
        return p.stdout.strip() or "unknown"
    except OSError:
        return "unknown (no nvidia-smi)"


def fmt(value, spec=".1f"):
    import gpu_roofline
    return gpu_roofline.fmt(value, spec)


def summarize(results):
    counts = {}
    for r in results:
        verdict = r.get("verdict", "-")
        key = r["kiln"]["status"] if r["kiln"]["status"] != "ok" else (
            "agree" if verdict == "agree" else "no XLA reference" if verdict == "-"
            else "ill-conditioned" if verdict.startswith("ill-conditioned")
            else "elided constants" if verdict.startswith("elided constants") else "disagree")
        counts[key] = counts.get(key, 0) + 1
    print("summary: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    print("Benchmark set: wall µs per run (kiln: bef-run latency, inputs on the device; XLA:")
    print("pipelined runs, inputs on the device); kernel µs: the sum of one run's kernel durations")
    print("under Nsight Compute (kernels only: no launch gaps, copies or host work)")
    print("%-36s %11s %11s %7s %12s %12s %7s" % ("module", "kiln wall", "XLA wall", "ratio",
                                                "kiln kernels", "XLA kernels", "ratio"))
    for r in results:
        if r["bench"]:
            k, x = r["kiln"].get("median_us"), r["xla"].get("us")
            kk = kernel_us(r.get("ncu"))
            xk = kernel_us(r.get("xla_ncu"))
            print("%-36s %11s %11s %7s %12s %12s %7s" % (
                r["name"][:36], fmt(k), fmt(x), fmt(k / x if k and x else None, ".2f"), fmt(kk), fmt(xk),
                fmt(kk / xk if kk and xk else None, ".2f")))


def kernel_us(ncu):
    if not ncu or ncu.get("status") != "ok":
        return None
    return sum(ns for _, ns in ncu["kernels"]) / 1e3


# ---- calibrate (here) -------------------------------------------------------------

def calibrate(args):
    """Measured (results) against modeled (emulator, here) per kernel."""
    import gpu_roofline
    root, manifest = unpack(args.kit, args.work)
    with open(os.path.join(args.results, "results.json")) as f:
        measured = {r["name"]: r for r in json.load(f)["results"]}
    profiles = {}
    with tarfile.open(os.path.join(args.results, "profiles.tgz")) as tar:
        for member in tar.getmembers():
            if member.name.endswith(".profile.json"):
                profiles[member.name[:-len(".profile.json")]] = json.load(tar.extractfile(member))
    samples = {name: sample for name, _, sample in gpu_roofline.MODULES}
    emulator = args.emulator or os.path.join(args.build_dir, "cuda_emulator", "libkiln_cuda_emulator.so")
    rows = []
    pattern = re.compile(args.filter) if args.filter else None
    for e in manifest:
        if not e["bench"] or e["name"] not in profiles or (pattern and not pattern.search(e["name"])):
            continue
        path = os.path.join(args.work, "model_%s.json" % e["name"])
        env = dict(os.environ, KILN_CUDA_EMULATOR=emulator)
        env.pop("KILN_EMU_SAMPLE", None)
        if samples.get(e["name"]):
            env["KILN_EMU_SAMPLE"] = str(samples[e["name"]])
        cmd = [gpu_roofline.tool(args.build_dir, "bef-run"), os.path.join(root, "bef", e["name"] + ".bef"),
               "--device=cuda", "--export_profile=" + path] + ["--output="] * e["leaves"]
        if e.get("must_alias"):
            cmd.append("--donate")
        code, _, err = gpu_roofline.run_command(cmd, args.timeout, env)
        if code != 0:
            print("%s: emulator run failed: %s" % (e["name"], gpu_roofline.first_line(err)))
            continue
        modeled = read_json(path)
        rows.append((e["name"], profiles[e["name"]], modeled, measured[e["name"]], set(e.get("kernel_functions", []))))
    print_calibration(rows, args.kernels)
    return 0


def per_run(thunk, profile):
    return thunk["total_us"] / max(profile["runs"], 1)


def ncu_by_kernel(result, functions):
    """{kiln kernel function: ns} summed over one run, and the ns of every
    other kernel (the libraries'), from the run's Nsight Compute list."""
    mine, library = {}, 0.0
    ncu = result.get("ncu") or {}
    for name, ns in ncu.get("kernels", []):
        if name in functions:
            mine[name] = mine.get(name, 0.0) + ns
        else:
            library += ns
    return mine, library if ncu.get("status") == "ok" else None


def print_calibration(rows, limit):
    import gpu_roofline
    print("Per thunk, per run, on the GPU against the H100 model (emulator). ncu µs: the kernel's duration")
    print("under Nsight Compute (--ncu runs); events µs: CUDA events around the thunk, which also count the")
    print("host's issue time when the device waits for it")
    print("%-44s %-7s %9s %9s %10s %10s %8s" % ("module / thunk", "kind", "ncu µs", "events µs", "modeled µs",
                                                "optimal µs", "ncu/mod"))
    for name, real, model, result, functions in rows:
        modeled = {t["name"]: t for t in gpu_roofline.leaf_thunks(model)}
        kernels, library = ncu_by_kernel(result, functions)
        thunks = sorted(gpu_roofline.leaf_thunks(real), key=lambda t: -t["total_us"])
        print(name)
        for t in thunks[:limit or None]:
            m = modeled.get(t["name"])
            mu = per_run(m, model) if m else None
            ncu = kernels.get(t["name"].replace(".", "_"))
            nu = ncu / 1e3 if ncu is not None else None
            optimal = m["optimal_us"] * m["count"] / max(model["runs"], 1) if m and m["optimal_us"] else None
            print("  %-42s %-7s %9s %9.2f %10s %10s %8s" % (
                t["name"][:42], t["kind"], fmt(nu, ".2f"), per_run(t, real), fmt(mu, ".2f"), fmt(optimal, ".2f"),
                fmt(nu / mu if nu and mu else None, ".2f")))
        if library is not None:
            print("  %-42s %-7s %9.2f" % ("(library kernels: cuBLAS)", "gemm", library / 1e3))
    print()
    print("%-36s %10s %10s %10s %8s %12s %9s" % ("module (per run)", "ncu µs", "events µs", "modeled µs",
                                                 "ncu/mod", "kiln wall µs", "XLA µs"))
    for name, real, model, result, functions in rows:
        kernels, library = ncu_by_kernel(result, functions)
        nu = (sum(kernels.values()) + library) / 1e3 if library is not None else None
        print("%-36s %10s %10.1f %10.1f %8s %12s %9s" % (
            name[:36], fmt(nu), real["total_us"], model["total_us"],
            fmt(nu / model["total_us"] if nu else None, ".2f"), fmt(result["kiln"].get("median_us")),
            fmt(result["xla"].get("us"))))


# ---- command line -----------------------------------------------------------------

def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--kit", required=True)
    p.add_argument("--filter", default="")
    p.add_argument("--bench-only", action="store_true")
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--build-dir", default=os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build")))
    p = sub.add_parser("reference")
    p.add_argument("--kit", required=True)
    p.add_argument("--filter", default="", help="only modules whose name matches this regex")
    p.add_argument("--max-param-mib", type=int, default=256)
    p.add_argument("--budget", type=int, default=1800, help="seconds for XLA CPU over every module")
    p.add_argument("--max-ref-mib", type=int, default=2, help="largest reference kept, in MiB of outputs")
    p.add_argument("--total-ref-mib", type=int, default=12, help="MiB of references the kit may carry")
    p.add_argument("--work", default="/tmp/kiln_on_gpu_reference", help="scratch folder")
    p = sub.add_parser("run")
    p.add_argument("--kit", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--budget", type=int, default=480, help="seconds for the whole run")
    p.add_argument("--work", default="/tmp/kiln_on_gpu",
                   help="scratch folder: the unpacked kit, inputs and outputs (not --out: those stay here)")
    p.add_argument("--timeout", type=int, default=60, help="seconds per bef-run of a corpus module")
    p.add_argument("--bench-timeout", type=int, default=180,
                   help="seconds per bef-run of a benchmark module (20 timed and 20 profiled runs)")
    p.add_argument("--filter", default="", help="only modules whose name matches this regex")
    p.add_argument("--max-param-mib", type=int, default=MAX_PARAM_BYTES >> 20,
                   help="skip modules whose parameters take more (their random inputs take long to make)")
    p.add_argument("--kiln-share", type=float, default=0.5,
                   help="fraction of the budget for kiln's runs; XLA's references get the rest")
    p.add_argument("--xla-platform", default="cuda", help="XLA's backend for the reference (cpu: a dry run)")
    p.add_argument("--ncu", action="store_true", help="time each kernel of the benchmark set with Nsight Compute")
    p.add_argument("--ncu-timeout", type=int, default=120)
    p = sub.add_parser("xla-worker")
    p.add_argument("--kit", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--names", required=True)
    p.add_argument("--platform", default="cuda")
    p = sub.add_parser("xla-profile-one")
    p.add_argument("--kit", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--name", required=True)
    p = sub.add_parser("calibrate")
    p.add_argument("--kit", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--kernels", type=int, default=8, help="kernel rows per module (0: all)")
    p.add_argument("--work", default="/tmp/kiln_on_gpu", help="scratch folder")
    p.add_argument("--filter", default="", help="only modules whose name matches this regex")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--emulator", default=os.environ.get("KILN_CUDA_EMULATOR", ""))
    p.add_argument("--build-dir", default=os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build")))
    args = parser.parse_args(argv)
    return {"pack": pack, "reference": reference, "run": run, "xla-worker": xla_worker, "xla-profile-one": xla_profile_one,
            "calibrate": calibrate}[args.command](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
