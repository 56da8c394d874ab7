#!/usr/bin/env python3
"""xla-run: compiles HLO text with XLA's CPU (or GPU) backend (PyPI jaxlib) and runs it.

  xla_run.py MODULE.hlo [--input=@a.npy]... [--output=@o.npy]...
             [--iterations=N] [--warmup=N] [--seed=N] [--platform=cpu|cuda]

Why: XLA is the implementation HLO's semantics come from, so its CPU backend
is kiln's second, independent oracle next to kiln's reference evaluator. The
command line mirrors `hlo-run --reference`: one --input per array leaf of the
entry parameters (tuples flattened, in order), one --output per array leaf of
the result ('@o.npy' writes, '-' prints, '' skips). Inputs are .npy files
(bf16 and the other ml_dtypes types included: their '<V2'/'<V1' files take the
element type of the parameter they feed) or inline values '2x3xf32=1 2 3 4 5 6'
('f32=1.5'; one value fills the whole array). Without --input, inputs are
NumPy random values from --seed. With --iterations=N the module runs after
--warmup runs N more times and the per-iteration latency (execution plus
waiting for the result, inputs already on the device) is printed instead of
the result values (unless --output is given):
  xla-run: MODULE iterations N min X ms median Y ms

Exit codes: 0 success; 1 usage, input or runtime error; 3 XLA refuses the
module (its parser, the HLO->StableHLO conversion or the CPU compiler rejects
it, e.g. a GPU-only custom-call; it needs more than one device; or XLA fails
while executing it, e.g. a collective addressing a replica that does not
exist). A refusal
is one line "xla-run: refused: <reason>" on stderr: callers (the cross-check,
the peer benchmark) count it as skipped, not as a kiln failure.

Compilation path (jaxlib 0.10.2, pinned by scripts/setup_python.sh): HLO text
-> hlo.hlo_module_from_text -> XlaComputation -> StableHLO text
(mlir.xla_computation_to_mlir_module) -> Client.compile_and_load. This file
is the only place in kiln that touches jaxlib's private bindings; every other
script imports it (load_module / run_module) or runs it.

--platform=cuda runs XLA's GPU backend instead (a machine with a GPU and
jax[cuda]; bench/on_gpu compares kiln's CUDA artifacts with it there), with
every dot and convolution at operand_precision=highest so that f32 products
are not run on TF32 (with_highest_precision).

Compile options: xla_allow_excess_precision=false, so XLA keeps the rounding
of every bf16/f16 intermediate that HLO's semantics require (by default XLA
may skip convert pairs and compute chains in f32); fast math stays off.
"""

import argparse
import os
import re
import statistics
import sys
import time

EXIT_ERROR = 1
EXIT_REFUSED = 3


class Refused(Exception):
    """XLA cannot run this module; the message is the one-line reason."""


def _first_line(message):
    lines = str(message).splitlines()
    # XLA's parser puts the useful part on a later "was parsing L:C: error: ..." line.
    detail = [l for l in lines[1:] if "error:" in l]
    if detail and lines and lines[0].rstrip().endswith(":"):
        return (lines[0].strip() + " " + detail[0].strip())[:400]
    for line in lines:
        if line.strip():
            return line.strip()[:400]
    return "unknown error"


def _imports(platform="cpu"):
    # Imported lazily so --help and argument errors need no jax.
    os.environ.setdefault("JAX_PLATFORMS", platform)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # no C++ INFO/WARNING noise
    import jax
    # Without x64, device_put would silently narrow f64/s64/u64 inputs.
    jax.config.update("jax_enable_x64", True)
    from jax._src.lib import _jax
    from jax._src.lib import xla_client as xc
    return jax, _jax, xc


class Leaf:
    """One array leaf of a parameter or of the result: dims and numpy dtype."""

    def __init__(self, shape):
        self.dims = tuple(shape.dimensions())
        self.dtype = shape.numpy_dtype()

    def describe(self):
        return "x".join([str(d) for d in self.dims] + [_type_name(self.dtype)])


# NumPy / ml_dtypes names of HLO element types (others share the name,
# e.g. float8_e4m3fn).
_HLO_TYPE_OF_NUMPY = {"bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
                      "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
                      "float16": "f16", "float32": "f32", "float64": "f64",
                      "complex64": "c64", "complex128": "c128", "bfloat16": "bf16"}
_NUMPY_OF_HLO_TYPE = {hlo: name for name, hlo in _HLO_TYPE_OF_NUMPY.items()}
_NUMPY_OF_HLO_TYPE.update({"f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2", "s4": "int4", "u4": "uint4"})


def _type_name(dtype):
    import numpy as np
    return _HLO_TYPE_OF_NUMPY.get(np.dtype(dtype).name, np.dtype(dtype).name)


def dtype_of(name):
    """The NumPy dtype of an HLO element type ('bf16') or of a NumPy /
    ml_dtypes type name ('bfloat16'): what an .npy file of ml_dtypes data
    ('<V2') loses."""
    import ml_dtypes
    import numpy as np
    name = _NUMPY_OF_HLO_TYPE.get(name, name)
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


def _leaves(shape, out, tokens):
    """Appends the array leaves of `shape` to `out` and the flat positions of
    its token leaves (which XLA's executables pass like arrays) to `tokens`."""
    if shape.is_tuple():
        for s in shape.tuple_shapes():
            _leaves(s, out, tokens)
    elif shape.is_token():
        tokens.append(len(out) + len(tokens))
    else:
        if not shape.is_static():
            raise Refused("dynamic shape %s" % shape)
        out.append(Leaf(shape))


def _module_header_int(text, key):
    for line in text.splitlines():
        if line.startswith("HloModule"):
            m = re.search(r"\b%s=(\d+)" % key, line)
            return int(m.group(1)) if m else 1
    return 1


class Module:
    """A compiled module: the executable and its parameter/result leaves."""

    def __init__(self, path, executable, params, results, result_tokens, device):
        self.path = path
        self.executable = executable
        self.params = params
        self.results = results
        self.result_tokens = set(result_tokens)  # flat output positions to drop
        self.device = device


_FUSION = re.compile(r"^(\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*.*?\s)fusion\((.*)$")


def _strip_attribute(line, name):
    """Removes ', name={...}' (balanced braces) from a line."""
    start = line.find(", %s={" % name)
    if start < 0:
        return line
    depth, i = 0, line.index("{", start)
    for i in range(i, len(line)):
        depth += {"{": 1, "}": -1}.get(line[i], 0)
        if depth == 0:
            break
    return line[:start] + line[i + 1:]


def as_unfused_text(text):
    """The module with every fusion instruction turned into a call of its
    fused computation, and without input/output aliasing.

    Why: modules dumped after XLA's optimizations contain fusions that XLA
    CPU will not compile again (its emitter wants the backend config it
    produced itself, and aliased fusion outputs crash it); a call of the same
    computation has the same value, and aliasing only concerns buffers.
    """
    lines = []
    source = iter(text.splitlines())
    for line in source:
        if line.startswith("HloModule"):
            line = _strip_attribute(line, "input_output_alias")
        m = _FUSION.match(line)
        while m and line.rstrip().endswith(","):  # attributes on the next lines
            line = line.rstrip() + " " + next(source, "").strip()
            m = _FUSION.match(line)
        if m:
            rest = re.sub(r",\s*kind=k\w+", "", m.group(2))
            rest = re.sub(r",\s*output_to_operand_aliasing=\{[^}]*\}", "", rest)
            line = m.group(1) + "call(" + re.sub(r"\bcalls=", "to_apply=", rest)
        lines.append(line)
    return "\n".join(lines) + "\n"


_PRECISION_OPS = re.compile(r"\s(dot|convolution)\(")


def with_highest_precision(text):
    """The module with operand_precision={highest,highest} on every dot and
    convolution.

    Why: DEFAULT precision lets a backend trade accuracy for speed, and
    XLA's GPU backend takes it: f32 products run on TF32 tensor cores
    (10-bit significands, ~1e-3 relative error). kiln computes f32 products
    in f32 at every precision, so HIGHEST makes XLA GPU an f32 oracle to
    compare with. XLA CPU computes f32 either way.
    """
    lines = []
    for line in text.splitlines():
        m = _PRECISION_OPS.search(line)
        if m:
            line = re.sub(r",\s*operand_precision=\{[^}]*\}", "", line)
            depth, i = 0, m.end() - 1
            for i in range(m.end() - 1, len(line)):
                depth += {"(": 1, ")": -1}.get(line[i], 0)
                if depth == 0:
                    break
            line = line[:i + 1] + ", operand_precision={highest,highest}" + line[i + 1:]
        lines.append(line)
    return "\n".join(lines) + "\n"


def load_module(path, platform="cpu"):
    """Parses and compiles MODULE text on XLA's `platform` backend ('cpu', or
    'cuda' on a machine with a GPU and jax[cuda]); raises Refused."""
    with open(path, encoding="utf-8") as f:
        text = as_unfused_text(f.read())
    if platform != "cpu":
        text = with_highest_precision(text)
    for key in ("replica_count", "num_partitions"):
        n = _module_header_int(text, key)
        if n > 1:
            raise Refused("%s=%d: xla-run runs one device" % (key, n))
    jax, _jax, xc = _imports(platform)
    try:
        hlo_module = xc.hlo.hlo_module_from_text(text)
    except Exception as e:  # XLA's HLO parser rejects the text
        raise Refused("XLA's HLO parser: " + _first_line(e))
    computation = xc.XlaComputation(hlo_module.as_serialized_hlo_module_proto())
    program = computation.program_shape()
    params, results, tokens, result_tokens = [], [], [], []
    for shape in program.parameter_shapes():
        _leaves(shape, params, tokens)
    if tokens:
        raise Refused("token parameters cannot be passed to an XLA executable")
    _leaves(program.result_shape(), results, result_tokens)
    try:
        mlir = _jax.mlir.xla_computation_to_mlir_module(computation)
    except Exception as e:
        raise Refused("HLO->StableHLO conversion: " + _first_line(e))
    try:
        device = jax.devices(platform)[0]
    except RuntimeError as e:
        raise Refused("no %s device: %s" % (platform, _first_line(e)))
    options = _jax.CompileOptions()
    options.env_option_overrides = [("xla_allow_excess_precision", False)]
    if platform == "cpu":
        options.env_option_overrides.append(("xla_cpu_enable_fast_math", False))
    try:
        executable = device.client.compile_and_load(
            mlir, _jax.DeviceList((device,)), options)
    except Exception as e:
        raise Refused("XLA %s compiler: %s" % (platform.upper(), _first_line(e)))
    return Module(path, executable, params, results, result_tokens, device)


def put_inputs(module, arrays):
    """Copies numpy inputs to the device once (for repeated runs)."""
    import jax
    return [jax.device_put(a, module.device) for a in arrays]


def execute(module, device_inputs):
    """One run; returns the result leaves as device arrays (ready). XLA
    failing to run the module (e.g. a collective that addresses replicas a
    one-device client does not have) raises Refused."""
    try:
        outputs = module.executable.execute(device_inputs)
        for out in outputs:
            out.block_until_ready()
    except Exception as e:
        raise Refused("XLA execution: " + _first_line(e))
    return outputs


def run_module(module, arrays):
    """Runs once on numpy inputs; returns numpy result leaves (tokens dropped)."""
    import numpy as np
    outputs = execute(module, put_inputs(module, arrays))
    return [np.asarray(o) for i, o in enumerate(outputs) if i not in module.result_tokens]


def time_module(module, arrays, iterations, warmup=2):
    """Per-iteration latencies in seconds after `warmup` untimed runs."""
    device_inputs = put_inputs(module, arrays)
    for _ in range(warmup):
        execute(module, device_inputs)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        execute(module, device_inputs)
        times.append(time.perf_counter() - start)
    return times


def pipelined_seconds(module, arrays, min_seconds=0.2, warmup=3):
    """Seconds per run when runs are issued back to back and waited for
    once: on an asynchronous device (a GPU) the host's dispatch overlaps the
    device's work, so this approaches the device time of one run."""
    device_inputs = put_inputs(module, arrays)
    for _ in range(warmup):
        execute(module, device_inputs)
    runs, start = 1, time.perf_counter()
    execute(module, device_inputs)
    once = time.perf_counter() - start
    import numpy as np
    result_bytes = sum(int(np.prod(leaf.dims)) * np.dtype(leaf.dtype).itemsize for leaf in module.results)
    runs = max(1, min(1000, int(min_seconds / max(once, 1e-6)), (2 << 30) // max(result_bytes, 1)))
    start = time.perf_counter()
    pending = [module.executable.execute(device_inputs) for _ in range(runs)]
    for outputs in pending:
        for out in outputs:
            out.block_until_ready()
    return (time.perf_counter() - start) / runs


# ---- values -----------------------------------------------------------------

def read_input(spec, leaf):
    """An input array for `leaf` from '@file.npy' or 'DIMSxTYPE=v v ...'."""
    import numpy as np
    if spec.startswith("@"):
        array = np.load(spec[1:], allow_pickle=False)
        if array.dtype.kind == "V":  # ml_dtypes types are saved as '<V2'/'<V1'
            if array.dtype.itemsize != leaf.dtype.itemsize:
                raise ValueError("%s holds %d-byte elements, the parameter is %s" %
                                 (spec, array.dtype.itemsize, leaf.describe()))
            array = array.view(leaf.dtype)
    elif "=" in spec:
        shape_text, values = spec.split("=", 1)
        parts = shape_text.split("x")
        dims = tuple(int(p) for p in parts[:-1])
        flat = np.array([float(v) if leaf.dtype.kind in "fV" or "float" in leaf.dtype.name
                         else int(v) for v in values.split()], dtype=leaf.dtype)
        count = int(np.prod(dims, dtype=np.int64))
        array = np.full(dims, flat[0], leaf.dtype) if flat.size == 1 else flat.reshape(dims)
        if array.size != count:
            raise ValueError("%s: %d values for %d elements" % (spec, flat.size, count))
    else:
        raise ValueError("input %r: use @file.npy or DIMSxTYPE=values" % spec)
    if tuple(array.shape) != leaf.dims or array.dtype != leaf.dtype:
        raise ValueError("input %s is %s%s, the parameter is %s" %
                         (spec, array.dtype, list(array.shape), leaf.describe()))
    return np.require(array, requirements="C")  # keeps 0-d arrays 0-d


def value_class(dtype):
    """'pred', 'int', 'uint', 'float' or 'complex' for NumPy and ml_dtypes types."""
    import ml_dtypes
    import numpy as np
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "pred"
    if dtype.kind in "iu":
        return "int" if dtype.kind == "i" else "uint"
    if dtype.kind == "c":
        return "complex"
    if dtype.kind == "V":  # ml_dtypes: bf16, f8/f4 floats, (u)int2/4
        try:
            return "int" if ml_dtypes.iinfo(dtype).min < 0 else "uint"
        except (ValueError, TypeError):
            return "float"
    return "float"


def random_input(leaf, rng):
    """Seeded values like kiln's RandomLiteral: floats uniform in [-1, 1),
    signed integers in [-8, 8), unsigned in [0, 8), preds 0/1, complex with
    both parts in [-1, 1); one rounding to the element type."""
    import numpy as np
    kind = value_class(leaf.dtype)
    if kind == "pred":
        return rng.random(leaf.dims) < 0.5
    if kind in ("int", "uint"):
        low = -8 if kind == "int" else 0
        return rng.integers(low, 8, leaf.dims).astype(np.int64).astype(leaf.dtype)
    if kind == "complex":
        return (rng.uniform(-1, 1, leaf.dims) + 1j * rng.uniform(-1, 1, leaf.dims)).astype(leaf.dtype)
    return rng.uniform(-1, 1, leaf.dims).astype(leaf.dtype)


def write_output(spec, array, index):
    import numpy as np
    if spec == "":
        return
    if spec == "-":
        print("result[%d]: %s%s" % (index, _type_name(array.dtype), list(array.shape)))
        print(np.array2string(array, threshold=1 << 20))
    elif spec.startswith("@"):
        np.save(spec[1:], array, allow_pickle=False)
    else:
        raise ValueError("output %r: use @file.npy, '-' or ''" % spec)


# ---- command line -----------------------------------------------------------

def _parse_args(argv):
    parser = argparse.ArgumentParser(prog="xla-run", description=__doc__.split("\n\n")[0])
    parser.add_argument("module")
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--output", action="append", default=[])
    parser.add_argument("--iterations", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--platform", default="cpu", choices=("cpu", "cuda"),
                        help="XLA backend (cuda: needs a GPU and jax[cuda])")
    return parser.parse_args(argv)


def _reexec_in_venv():
    """Runs this script again under the repo's .venv Python when the current
    interpreter lacks jax (so `python3 tools/xla-run/xla_run.py` works)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    venv = os.path.join(root, ".venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


def main(argv):
    args = _parse_args(argv)
    try:
        import jax  # noqa: F401
    except ImportError:
        _reexec_in_venv()
    try:
        module = load_module(args.module, args.platform)
    except Refused as e:
        print("xla-run: refused: %s" % e, file=sys.stderr)
        return EXIT_REFUSED
    except ImportError as e:
        print("xla-run: error: jax is not installed (run scripts/setup_python.sh): %s" % e,
              file=sys.stderr)
        return EXIT_ERROR
    except OSError as e:
        print("xla-run: error: %s" % e, file=sys.stderr)
        return EXIT_ERROR
    try:
        import numpy as np
        if args.input:
            if len(args.input) != len(module.params):
                raise ValueError("the entry computation takes %d inputs (%s), got %d --input flags" %
                                 (len(module.params), ", ".join(p.describe() for p in module.params),
                                  len(args.input)))
            inputs = [read_input(s, leaf) for s, leaf in zip(args.input, module.params)]
        else:
            rng = np.random.default_rng(args.seed)
            inputs = [random_input(leaf, rng) for leaf in module.params]
        if args.output and len(args.output) != len(module.results):
            raise ValueError("the module has %d results, got %d --output flags" %
                             (len(module.results), len(args.output)))
        outputs = run_module(module, inputs)
        for i, array in enumerate(outputs):
            if args.output or not args.iterations:  # timing runs print no values
                write_output(args.output[i] if args.output else "-", array, i)
        if args.iterations > 0:
            times = time_module(module, inputs, args.iterations, args.warmup)
            print("xla-run: %s iterations %d min %.4f ms median %.4f ms" %
                  (args.module, len(times), min(times) * 1e3, statistics.median(times) * 1e3))
    except Refused as e:
        print("xla-run: refused: %s" % e, file=sys.stderr)
        return EXIT_REFUSED
    except Exception as e:  # bad inputs, or XLA failing at run time
        print("xla-run: error: %s" % _first_line(e), file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
