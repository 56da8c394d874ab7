#!/usr/bin/env python3
"""Generates tests/jax_cases/data: JAX-authored HLO modules with XLA's results.

  .venv/bin/python tests/jax_cases/generate.py [--only NAME...] [--check]

Why: kiln's reference evaluator must follow XLA's semantics exactly, and the
places where it is easiest to get wrong are the corners: integer division by
zero and INT_MIN/-1, shifts past the bit width, float->int conversion of NaN
and out-of-range values, narrow-float rounding, gather/dynamic-slice index
clamping, scatter dropping out-of-bounds updates, sort stability with NaN,
conditional with an out-of-range branch index, and so on. Each case here is a
small JAX function (or, where JAX cannot express the HLO, hand-written HLO)
with inputs chosen to hit those corners. For every case the generator writes
tests/jax_cases/data/<case>/:
  module.hlo      the HLO text (jax.jit(f).lower(*args), full constants)
  input_<i>.npy   the entry parameters' array leaves, in order
  output_<i>.npy  XLA CPU's results, tuple leaves flattened, in order
  tolerance.txt   optional "atol rtol" overriding value_compare's defaults
                  ("0 0" where XLA's result is exact by definition)
tests/jax_cases/jax_cases_test.cc (no Python needed) evaluates every folder
with kiln's evaluator and compares.

Outputs come from tools/xla-run/xla_run.py compiling module.hlo itself (not
from calling the JAX function), so they are XLA's results for exactly the
text kiln reads, with xla_allow_excess_precision off. Where XLA CPU deviates
from HLO's semantics by design (it flushes f32/f64 denormals to zero: the
PjRt CPU client runs executables under tsl::port::ScopedFlushDenormal), the
inputs avoid denormal results; --check verifies the results of cases with a
NumPy model against that model, so a generator change cannot silently commit
a wrong expectation.
"""

import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "xla-run"))

import xla_run  # noqa: E402  (sets JAX_PLATFORMS before jax is imported)

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)

DATA = os.path.join(HERE, "data")
EXACT = (0.0, 0.0)
bf16 = ml_dtypes.bfloat16
NAN, INF = float("nan"), float("inf")

# ---- the cases --------------------------------------------------------------
# CASES[name] = (function, args, tolerance or None); HLO_CASES[name] =
# (hlo text, args, tolerance or None). Keep inputs tiny: data is committed.

CASES = {}
HLO_CASES = {}


def case(name, *args, tol=None):
    def register(fn):
        CASES[name] = (fn, [np.asarray(a) for a in args], tol)
        return fn
    return register


def a(values, dtype):
    return np.array(values, dtype=dtype)


S32_MIN, S32_MAX = -2**31, 2**31 - 1

# Integer division and remainder: truncation toward zero, remainder takes
# the dividend's sign; x/0 = -1 (all ones), x%0 = x, INT_MIN/-1 = INT_MIN,
# INT_MIN%-1 = 0 (operation_semantics.md, "Element-wise binary arithmetic").
_DIVIDEND = [7, -7, 7, -7, 0, S32_MIN, S32_MIN, 5, -5, 123, S32_MAX, S32_MIN]
_DIVISOR = [2, 2, -2, -2, 3, -1, 1, 0, 0, 7, -1, 0]


@case("int_div_rem_s32", a(_DIVIDEND, np.int32), a(_DIVISOR, np.int32), tol=EXACT)
def _(x, y):
    return lax.div(x, y), lax.rem(x, y)


@case("int_div_rem_s8", a([-128, -128, 127, -7, 7, 5, -128, 100], np.int8),
      a([-1, 1, -1, 2, -2, 0, 0, 7], np.int8), tol=EXACT)
def _(x, y):
    return lax.div(x, y), lax.rem(x, y)


@case("int_div_rem_u32", a([7, 0xFFFFFFFF, 0xFFFFFFFF, 5, 0, 100], np.uint32),
      a([2, 1, 0x80000000, 0, 0, 7], np.uint32), tol=EXACT)
def _(x, y):
    return lax.div(x, y), lax.rem(x, y)


@case("int_div_rem_s64", a([-2**63, -2**63, 9, -9, 2**62], np.int64),
      a([-1, 0, 4, 4, -3], np.int64), tol=EXACT)
def _(x, y):
    return lax.div(x, y), lax.rem(x, y)


# Shifts: an amount >= the bit width (as unsigned, so negatives too) gives 0
# for left/logical and the sign fill for arithmetic shifts.
_SHIFT_X = [1, -1, S32_MIN, S32_MAX, 0x12345678, -8, 5, -5, 1, -1]
_SHIFT_N = [0, 1, 31, 31, 4, 32, 33, -1, 100, S32_MIN]


@case("shifts_s32", a(_SHIFT_X, np.int32), a(_SHIFT_N, np.int32), tol=EXACT)
def _(x, n):
    return lax.shift_left(x, n), lax.shift_right_logical(x, n), lax.shift_right_arithmetic(x, n)


@case("shifts_u8", a([1, 0x80, 0xFF, 0x5A, 3, 0xF0], np.uint8),
      a([0, 7, 8, 9, 255, 1], np.uint8), tol=EXACT)
def _(x, n):
    return lax.shift_left(x, n), lax.shift_right_logical(x, n), lax.shift_right_arithmetic(x, n)


@case("int_wraparound_s8", a([127, -128, 100, -100, 0, 64], np.int8),
      a([1, -1, 100, 100, -128, 2], np.int8), tol=EXACT)
def _(x, y):
    return x + y, x - y, x * y, -x, lax.abs(x), lax.max(x, y), lax.min(x, y)


@case("bitwise_s32_u8", a([0, -1, 0x0F0F0F0F, S32_MIN, 12345, 1], np.int32),
      a([0, 1, 0x80, 0xFF, 0x7F, 0x10], np.uint8), tol=EXACT)
def _(x, u):
    y = lax.shift_left(x, np.int32(3))
    return (x & y, x | y, x ^ y, ~x, lax.population_count(x), lax.clz(x),
            ~u, lax.population_count(u), lax.clz(u))


# Float -> integer: truncation, NaN -> 0, saturation at the type's range.
_F2I = [0.5, -0.5, 1.9, -1.9, 2.5, 127.5, 128.0, -129.0, 255.9, 256.0, -1.0, 3e9, -3e9,
        1e20, -1e20, INF, -INF, NAN, 2147483520.0, 2147483648.0, -2147483648.0, 65535.5]


@case("convert_float_to_int", a(_F2I, np.float32), a(_F2I, np.float64), tol=EXACT)
def _(x, d):
    ts = (jnp.int8, jnp.uint8, jnp.int16, jnp.uint16, jnp.int32, jnp.uint32, jnp.int64, jnp.uint64)
    return tuple(lax.convert_element_type(x, t) for t in ts) + tuple(
        lax.convert_element_type(d, t) for t in (jnp.int32, jnp.uint32, jnp.int64))


# Integer -> float rounds once to nearest even, also for 64-bit values and
# for bf16 (16875521 = 0x1018001 gives 0x1020000; rounding via f32 first
# would give 0x1018000, a bf16 tie, then 0x1000000).
@case("convert_int_to_float",
      a([16777217, 16777219, -16777217, S32_MAX, S32_MIN, 2049, 4095, 65520, 65519, 0, 16875521],
        np.int32),
      a([2**53 + 1, 2**63 - 1, -2**63, 2**24 + 1, (2**24 + 1) * 2**30, 0], np.int64),
      a([2**64 - 1, 2**63 + 2**39, 2**53 + 3, 0], np.uint64), tol=EXACT)
def _(i, l, u):
    out = []
    for t in (jnp.float32, jnp.bfloat16, jnp.float16, jnp.float64):
        out += [lax.convert_element_type(i, t), lax.convert_element_type(l, t),
                lax.convert_element_type(u, t)]
    return tuple(out)


# Narrow floats: round to nearest even at ties, overflow to inf, NaN stays NaN,
# f16 subnormals (computed from normal f32 values, so FTZ does not apply).
_NARROW = [1.0, 1.00390625, 1.01171875, 1.005859375, -1.00390625, 3.0e38, 3.4e38, 65504.0,
           65519.0, 65520.0, 1e5, 6.0e-5, 5.96e-8, 2.98e-8, 2.99e-8, 1e-9, -0.0, INF, -INF, NAN,
           0.1, 1.0 / 3.0, 1.0009765625, 1.00146484375, 2049.0, 2051.0, 0.33325195]


@case("convert_f32_to_narrow", a(_NARROW, np.float32), tol=EXACT)
def _(x):
    b = lax.convert_element_type(x, jnp.bfloat16)
    h = lax.convert_element_type(x, jnp.float16)
    return (b, h, lax.convert_element_type(b, jnp.float16), lax.convert_element_type(h, jnp.bfloat16),
            lax.convert_element_type(b, jnp.float32), lax.convert_element_type(h, jnp.float64))


# f64 -> bf16 also goes through f32 in XLA (and in ml_dtypes): element 6,
# 1 + 2^-8 + 2^-40, is a bf16 tie once rounded to f32 and becomes 1.0.
@case("convert_f64_to_f32_bf16", a([1.0 + 2**-24, 1.0 + 2**-24 + 2**-60, 1.0 + 3 * 2**-24, 3.5e38,
                                    1e-300, -1e-300, 1.0 + 2**-8 + 2**-40, NAN, -INF], np.float64),
      tol=EXACT)
def _(d):
    return lax.convert_element_type(d, jnp.float32), lax.convert_element_type(d, jnp.bfloat16)


# f8: every format's rounding (ties to even in the normal and subnormal
# ranges), overflow (inf for the IEEE-like formats, NaN for fn/fnuz), NaN
# encodings (bit patterns compared through u8), fnuz's missing -0, and the
# way back to f32. Inputs are normal f32 values (XLA CPU flushes f32
# denormals), converted once: f32 -> f8 rounds directly.
_F8 = [0.0, -0.0, 1.0, -1.0, 448.0, 464.0, 480.0, 500.0, 1e6, -1e6, INF, -INF, NAN, 1e-3, -1e-3,
       2**-9, 2**-10, 3 * 2**-11, 2**-7 * 1.0625, 57344.0, 61440.0, 65536.0, 0.1, -0.7, 3.14159,
       240.0, 256.0, -256.0, 15.5, 15.75, 16.25, 2**-17, 2**-16, 1.5 * 2**-17, 2**-18, 1e-8,
       7.5, 31.0, 29.0, 0.09375, 124.0, 2**-6, 1.875 * 2**-7, 0.0029296875, 17.0, 19.0, 21.0, 23.0,
       25.0, 1e-30, 2.0**-126]
_F8_TYPES = (jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.float8_e4m3fnuz, jnp.float8_e5m2fnuz,
             jnp.float8_e4m3b11fnuz, jnp.float8_e4m3, jnp.float8_e3m4)


@case("convert_f8", a(_F8, np.float32), tol=EXACT)
def _(x):
    out = []
    for t in _F8_TYPES:
        f = lax.convert_element_type(x, t)
        out += [lax.bitcast_convert_type(f, jnp.uint8), lax.convert_element_type(f, jnp.float32)]
    e4 = lax.convert_element_type(x, jnp.float8_e4m3fn)
    e5 = lax.convert_element_type(x, jnp.float8_e5m2)
    return tuple(out) + (lax.convert_element_type(e4, jnp.bfloat16), lax.convert_element_type(e5, jnp.float16),
                         lax.convert_element_type(lax.convert_element_type(x, jnp.bfloat16), jnp.float8_e4m3fn))


# f8 arithmetic and a dot of f8 operands (XLA computes in a wider type and
# rounds the result once; default one-ulp tolerances).
@case("f8_math_and_dot", a([[0.5, -1.5, 2.0, 3.5], [-8.0, 0.25, 6.0, 1.0], [10.0, -0.75, 0.125, 4.0]],
                           jnp.float8_e4m3fn),
      a([[1.0, 2.0], [-3.0, 0.5], [4.0, -2.0], [0.75, 1.5]], jnp.float8_e5m2))
def _(x, y):
    s = x + x * x
    m = jnp.max(x, axis=1)
    d = lax.dot_general(x, y, (((1,), (0,)), ((), ())), preferred_element_type=jnp.bfloat16)
    return s, m, d, lax.convert_element_type(s, jnp.float32)


@case("convert_pred", a([0.0, -0.0, 1.0, NAN, -2.5], np.float32), a([0, 1, 0, 1, 1], np.bool_),
      a([0, -3, 7, 256, 1], np.int32), tol=EXACT)
def _(x, p, i):
    return (lax.convert_element_type(x, jnp.bool_), lax.convert_element_type(p, jnp.float32),
            lax.convert_element_type(p, jnp.int32), lax.convert_element_type(i, jnp.bool_),
            lax.convert_element_type(i, jnp.uint8), lax.convert_element_type(i, jnp.int8))


# bf16 / f16 arithmetic: each op is computed exactly and rounded once.
_B1 = [1.0, 1.5, 3.0, -2.0, 100.0, 0.1, 65504.0, 0.0078125, 250.0, 7.0]
_B2 = [0.00390625, 1.5, 7.0, 3.0, 0.01, 0.2, 2.0, 3.0, 260.0, -7.0]


@case("bf16_arithmetic", a(_B1, bf16), a(_B2, bf16), tol=EXACT)
def _(x, y):
    return x + y, x - y, x * y, x / y, lax.sqrt(lax.abs(x)), lax.max(x, y)


@case("f16_arithmetic", a(_B1, np.float16), a(_B2, np.float16), tol=EXACT)
def _(x, y):
    return x + y, x - y, x * y, x / y, lax.sqrt(lax.abs(x)), x * y + x


@case("bf16_chain", a([0.1, 1.7, -3.3, 100.5, 0.333, 2.0, -0.75, 9.9], bf16),
      tol=(1e-2, 1e-2))
def _(x):
    # Every intermediate is rounded to bf16 (excess precision off in XLA).
    y = x * x + x
    return y, lax.exp(x * bf16(0.25)), lax.tanh(y), jnp.sum(y), lax.log(lax.abs(y) + bf16(1))


@case("reduce_precision", a([1.0, 1.00048828125, 1.00146484375, 65520.0, 1e-5, 3.0e38, NAN, -INF,
                             0.1, 1.0 / 3.0], np.float32), tol=EXACT)
def _(x):
    return (lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
            lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7),
            lax.reduce_precision(x, exponent_bits=4, mantissa_bits=3))


@case("bitcast_convert", a([1.0, -0.0, INF, NAN, 0.1, -2.5], np.float32),
      a([0x3F800000, 0x7FC00001, 0xFF800000, 0x00000001, 0x80000000, 0x40490FDB], np.uint32),
      tol=EXACT)
def _(x, u):
    # u32 values that are NaNs or subnormals as f32 go only through
    # bitcasts (no float arithmetic), so FTZ cannot touch them.
    f = lax.bitcast_convert_type(u, jnp.float32)
    return (lax.bitcast_convert_type(x, jnp.int32), lax.bitcast_convert_type(f, jnp.uint32),
            lax.bitcast_convert_type(x, jnp.uint16), lax.bitcast_convert_type(x, jnp.bfloat16))


# Elementwise math with special values; XLA CPU's exp/log/tanh/... are its
# own polynomial approximations, hence value_compare's default tolerances.
_MATH_X = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -3.75, 10.0, -10.0, 88.0, -100.0,
           1e-3, -1e-3, 1e-7, INF, -INF, NAN, 0.75, 3.14159265]
_MATH_Y = [1.0, -1.0, 2.0, -2.0, 0.0, -0.0, 0.5, 3.0, -1.5, 2.0, 0.25, -3.0,
           INF, -INF, NAN, 1.0, 2.0, 1.0, -0.0, 7.0]


@case("elementwise_math_f32", a(_MATH_X, np.float32), a(_MATH_Y, np.float32))
def _(x, y):
    return (lax.exp(x), lax.log(x), lax.log1p(x), lax.expm1(x), lax.tanh(x), lax.erf(x),
            lax.logistic(x), lax.sin(x), lax.cos(x), lax.tan(x), lax.atan2(x, y), lax.pow(x, y),
            lax.sqrt(x), lax.rsqrt(x), lax.cbrt(x), lax.abs(x), lax.sign(x), lax.neg(x))


@case("elementwise_math_f64", a(_MATH_X, np.float64), a(_MATH_Y, np.float64))
def _(x, y):
    return (lax.exp(x), lax.log(x), lax.log1p(x), lax.expm1(x), lax.tanh(x), lax.logistic(x),
            lax.sin(x), lax.cos(x), lax.atan2(x, y), lax.pow(x, y), lax.sqrt(x), lax.cbrt(x))


# bf16/f16 math: XLA computes in f32 and rounds once, so default (one or two
# ulp) tolerances rather than exact.
@case("narrow_float_math", a([0.5, -0.75, 2.0, 3.140625, -8.0, 0.01, 60.0, 1.0], bf16),
      a([0.5, -0.75, 2.0, 3.140625, -8.0, 0.01, 60.0, 1.0], np.float16))
def _(b, h):
    return (lax.exp(b), lax.log(lax.abs(b)), lax.tanh(b), lax.logistic(b), lax.rsqrt(lax.abs(b)),
            lax.exp(h), lax.log1p(lax.abs(h)), lax.tanh(h), lax.sin(h), lax.atan2(h, h + h))


@case("rounding_and_remainder", a([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998, -0.0, 7.9, -7.9,
                                   1e8 + 4, INF, NAN, 0.49999997], np.float32),
      a([2.0, -2.0, 0.75, 3.0, 1.0, -1.0, 0.5, 2.0, 3.0, -3.0, 7.0, 1.0, 1.0, 0.25], np.float32),
      tol=EXACT)
def _(x, y):
    return (lax.floor(x), lax.ceil(x), lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
            lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), lax.rem(x, y), lax.is_finite(x),
            lax.sign(x))


@case("max_min_nan", a([1.0, NAN, 2.0, NAN, -INF, 3.0, 0.0], np.float32),
      a([NAN, 1.0, 2.0, NAN, 5.0, INF, 0.0], np.float32), tol=EXACT)
def _(x, y):
    # XLA's max/min propagate NaN from either side.
    return lax.max(x, y), lax.min(x, y)


@case("compare_select_clamp", a([1.0, NAN, -0.0, 2.0, INF, -3.0, 0.0, 5.0], np.float32),
      a([1.0, 1.0, 0.0, NAN, INF, -2.0, -0.0, 4.0], np.float32),
      a([0, 1, 2, 3, 4, 5, 6, 7], np.int32), a([2, 2, 6, 6, 0, 0, 3, 3], np.int32), tol=EXACT)
def _(x, y, i, hi):
    cmp = tuple(f(x, y) for f in (lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge))
    lo = np.int32(1)
    return cmp + (lax.select(lax.lt(x, y), x, y), lax.clamp(lo, i, hi),
                  lax.clamp(np.float32(-1.0), x, np.float32(1.5)), lax.lt(i, hi))


# Complex arithmetic.
@case("complex_ops", a([1 + 2j, -3 + 0.5j, 0.25 - 1j, 2 + 0j, -1 - 1j], np.complex64),
      a([0.5 - 1j, 2 + 2j, -1 + 0j, 0 + 1j, 3 - 4j], np.complex64))
def _(x, y):
    return (x * y, x / y, x + y, lax.abs(x), lax.exp(x), lax.conj(x), lax.real(x), lax.imag(y),
            lax.complex(lax.real(x), lax.imag(y)), lax.sqrt(x), lax.log(y))


# Reductions.
@case("reduce_ops", np.arange(24, dtype=np.float32).reshape(2, 3, 4) * np.float32(0.5) - 5,
      np.arange(24, dtype=np.int32).reshape(2, 3, 4) % 7 - 3,
      (np.arange(12).reshape(3, 4) % 3 == 0))
def _(x, i, p):
    return (jnp.sum(x, axis=(0, 2)), jnp.max(x, axis=1), jnp.min(x, axis=0), jnp.prod(i, axis=2),
            jnp.sum(i), jnp.all(p, axis=1), jnp.any(p, axis=0), jnp.max(i, axis=(0, 1)),
            jnp.sum(x[..., :0], axis=2))


@case("argmax_argmin_nan", a([[1.0, 3.0, 3.0, 2.0], [NAN, 1.0, NAN, 5.0], [-INF, -INF, 0.0, -0.0]],
                             np.float32), tol=EXACT)
def _(x):
    # Variadic reduce; ties pick the first index, NaN wins argmax/argmin.
    return jnp.argmax(x, axis=1), jnp.argmin(x, axis=1), jnp.argmax(x, axis=0)


@case("cumulative", a([[1.0, 2.0, 3.0, 4.0, 5.0], [0.5, -1.0, 2.0, -0.25, 8.0]], np.float32),
      a([3, 1, 4, 1, 5, 9, 2], np.int32))
def _(x, i):
    # Lowered as reduce-window with low padding (cumulative reductions on CPU).
    return (jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=1), lax.cummax(i), lax.cummin(i, reverse=True),
            jnp.cumsum(x, axis=0))


# Shape ops.
@case("shape_ops", np.arange(24, dtype=np.float32).reshape(2, 3, 4), tol=EXACT)
def _(x):
    return (lax.broadcast_in_dim(x[0, :, 0], (2, 3, 2), (1,)), jnp.reshape(x, (4, 6)),
            jnp.transpose(x, (2, 0, 1)), lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)),
            jnp.concatenate([x, x[:, :1]], axis=1),
            lax.pad(x, np.float32(-1), ((1, -1, 0), (0, 1, 1), (-1, 2, 2))),
            lax.rev(x, (0, 2)), lax.broadcasted_iota(jnp.int32, (2, 3), 1),
            lax.broadcasted_iota(jnp.float32, (3, 2), 0), jnp.expand_dims(x[1, 2], 0))


@case("dynamic_slice_update", np.arange(30, dtype=np.float32).reshape(5, 6),
      a([-1, 1, 4, 9], np.int32), a([[100.0, 101.0, 102.0], [103.0, 104.0, 105.0]], np.float32),
      tol=EXACT)
def _(x, starts, u):
    # Start indices are clamped so the whole slice fits in the operand.
    return (lax.dynamic_slice(x, (starts[0], starts[1]), (2, 3)),
            lax.dynamic_slice(x, (starts[2], starts[3]), (2, 3)),
            lax.dynamic_update_slice(x, u, (starts[3], starts[0])),
            lax.dynamic_update_slice(x, u, (starts[1], starts[2])))


_GATHER_DN = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                        start_index_map=(0,))
_GATHER_2D = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                        start_index_map=(0, 1))


@case("gather_clamp", np.arange(24, dtype=np.float32).reshape(6, 4),
      a([[0], [5], [-3], [9], [2]], np.int32), a([[0, 0], [5, 3], [-1, 2], [4, 9]], np.int32),
      tol=EXACT)
def _(x, i1, i2):
    # PROMISE_IN_BOUNDS emits a bare HLO gather, whose start indices are
    # clamped so that each slice lies inside the operand.
    mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    return (lax.gather(x, i1, _GATHER_DN, (1, 4), mode=mode),
            lax.gather(x, i2, _GATHER_2D, (2, 2), mode=mode),
            jnp.take_along_axis(x, jnp.array([[0, 1, 2, 3]] * 2 + [[5, 4, 3, 2]], jnp.int32), axis=0))


_SCATTER_DN = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))


@case("scatter_oob", np.zeros((5, 3), np.int32), a([[1], [6], [-1], [3], [1], [4]], np.int32),
      np.arange(18, dtype=np.int32).reshape(6, 3) + 1, a([[0, 1], [3, 2], [4, 0], [-1, 0]], np.int32),
      tol=EXACT)
def _(x, idx, upd, idx2):
    # FILL_OR_DROP emits a bare scatter: an update window that is not fully
    # inside the operand is dropped. Integer add is order-independent, so
    # the duplicate index 1 has one well-defined result.
    mode = lax.GatherScatterMode.FILL_OR_DROP
    dn2 = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                      scatter_dims_to_operand_dims=(0, 1))
    upd2 = jnp.ones((4, 2, 2), jnp.int32) * 7
    return (lax.scatter_add(x, idx, upd, _SCATTER_DN, mode=mode),
            lax.scatter(x, idx[2:4], upd[2:4], _SCATTER_DN, mode=mode),
            lax.scatter_max(x, idx, upd, _SCATTER_DN, mode=mode),
            lax.scatter_add(x, idx2, upd2, dn2, mode=mode))


@case("sort_stability_nan", a([3.0, NAN, 1.0, -0.0, 0.0, 1.0, -INF, NAN, 2.0, INF, 1.0, -NAN],
                              np.float32), a([2, 1, 2, 0, 1, 0, 2, 1], np.int32), tol=EXACT)
def _(x, k):
    # JAX sorts floats with a total order (-NaN < -inf < ... < -0 < 0 < ... < NaN).
    iota = lax.iota(jnp.int32, x.shape[0])
    sorted_x, perm = lax.sort((x, iota), num_keys=1, is_stable=True)
    keys, order = lax.sort((k, lax.iota(jnp.int32, k.shape[0])), num_keys=1, is_stable=True)
    return (sorted_x, perm, jnp.argsort(x, stable=True), jnp.sort(x, descending=True), keys, order,
            jnp.argsort(k, stable=True, descending=True))


@case("sort_multi_key", a([[2, 1, 2, 1, 2, 0], [5, 5, 4, 4, 3, 3]], np.int32),
      a([[0.5, 0.5, 0.25, 0.75, 0.5, 0.0], [1.0, -1.0, 1.0, -1.0, 0.0, 0.0]], np.float32), tol=EXACT)
def _(k, v):
    return lax.sort((k, v), dimension=1, num_keys=2, is_stable=True) + lax.sort(
        (v, k), dimension=0, num_keys=1, is_stable=True)


@case("while_loop", a([1.0, 2.0, 3.0], np.float32), a(5, np.int32))
def _(x, n):
    def body(state):
        i, v, acc = state
        return i + 1, v * np.float32(1.5) - np.float32(0.25), acc + jnp.sum(v)

    def cond(state):
        i, v, acc = state
        return jnp.logical_and(i < n, acc < np.float32(100.0))

    fori = lax.fori_loop(0, 4, lambda i, c: c + lax.convert_element_type(i, jnp.float32) * x, x)
    return lax.while_loop(cond, body, (np.int32(0), x, np.float32(0))) + (fori,)


@case("conditional_switch", a(2, np.int32), a([1.0, -2.0, 3.0], np.float32), a(True, np.bool_))
def _(i, x, p):
    branches = [lambda v: v + 1, lambda v: v * 2, lambda v: -v, lambda v: jnp.exp(v)]
    return (lax.switch(i, branches, x), lax.cond(p, lambda v: jnp.sum(v), lambda v: jnp.max(v), x))


@case("reduce_window_padding", np.arange(30, dtype=np.float32).reshape(5, 6) * 0.5 - 4)
def _(x):
    return (lax.reduce_window(x, -np.inf, lax.max, (2, 3), (2, 1), ((1, 2), (0, 1))),
            lax.reduce_window(x, np.float32(0), lax.add, (3, 2), (1, 2), ((2, 0), (1, 1)),
                              base_dilation=(2, 1), window_dilation=(1, 2)),
            lax.reduce_window(x, np.inf, lax.min, (2, 2), (1, 1), "SAME"))


@case("select_and_scatter", a([[1.0, 5.0, 2.0, 0.0, 7.0], [3.0, 4.0, 9.0, 6.0, -1.0],
                               [8.0, 2.5, 0.5, 1.5, 4.5], [6.5, 3.5, 5.5, 7.5, 2.0]], np.float32))
def _(x):
    # The gradient of max pooling lowers to select-and-scatter.
    pool = lambda v: jnp.sum(lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 2),
                                               ((0, 1), (1, 0))) * jnp.arange(12.0, dtype=jnp.float32).reshape(4, 3))
    return (jax.grad(pool)(x),)


@case("max_pool_grad", (np.arange(2 * 5 * 6 * 2).reshape(2, 5, 6, 2) % 4).astype(np.float32), tol=EXACT)
def _(x):
    # NHWC max pooling with overlapping 3x3 windows, stride 2, SAME padding
    # (-inf pads): many ties, where the gradient goes to the first maximum
    # in the window (select ge) and overlapping windows add up.
    def pool(v):
        p = lax.reduce_window(v, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        return jnp.sum(p * (1.0 + jnp.arange(p.size, dtype=jnp.float32).reshape(p.shape)))
    return (jax.grad(pool)(x),)


def _conv_inputs():
    rng = np.random.default_rng(7)
    lhs = rng.integers(-3, 4, (2, 4, 7, 6)).astype(np.float32)
    rhs = rng.integers(-2, 3, (6, 2, 3, 2)).astype(np.float32)
    return lhs, rhs


@case("conv_dilated_grouped", *_conv_inputs())
def _(lhs, rhs):
    # Small integers: every sum is exact, whatever the summation order.
    return (lax.conv_general_dilated(lhs, rhs, window_strides=(1, 2), padding=((1, 1), (2, 0)),
                                     lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                                     feature_group_count=2),
            lax.conv_general_dilated(lhs, rhs[:, :, ::-1], (2, 1), "SAME", feature_group_count=2))


@case("conv_batch_group_nhwc", np.arange(2 * 5 * 4 * 4, dtype=np.float32).reshape(4, 5, 4, 2) % 5 - 2,
      np.arange(3 * 3 * 2 * 4, dtype=np.float32).reshape(3, 3, 2, 4) % 3 - 1)
def _(lhs, rhs):
    dn = ("NHWC", "HWIO", "NHWC")
    return (lax.conv_general_dilated(lhs, rhs, (1, 1), ((1, 0), (0, 2)), dimension_numbers=dn,
                                     batch_group_count=2),
            lax.conv_general_dilated(lhs, rhs[:, :, :, :2], (2, 2), "VALID", dimension_numbers=dn,
                                     rhs_dilation=(1, 2)))


@case("dot_general_multi", np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5) % 7 - 3,
      np.arange(360, dtype=np.float32).reshape(3, 5, 2, 4, 3) % 5 - 2,
      np.arange(24, dtype=np.int8).reshape(4, 6) - 12, np.arange(18, dtype=np.int8).reshape(6, 3) * 7)
def _(x, y, a8, b8):
    # Batch dims (0,1)x(2,0), contracting (2,3)x(3,1); then an s8 x s8 -> s32
    # matmul whose products overflow s8; then a bf16 dot accumulated in f32.
    dn = (((2, 3), (3, 1)), ((0, 1), (2, 0)))
    return (lax.dot_general(x, y, dn), lax.dot(a8, b8, preferred_element_type=jnp.int32),
            lax.dot(x[0, 0].astype(jnp.bfloat16), y[0, :, 0, :, 0].astype(jnp.bfloat16),
                    preferred_element_type=jnp.float32),
            jnp.einsum("ij,jk->ik", x[1, 2], y[1, :, 1, 0]))


@case("fft", (np.arange(16).reshape(2, 8) % 5 - 2 + 1j * (np.arange(16).reshape(2, 8) % 3)).astype(
    np.complex64), (np.arange(20, dtype=np.float32).reshape(2, 10) % 4) - 1.5)
def _(c, r):
    return (jnp.fft.fft(c), jnp.fft.ifft(c), jnp.fft.rfft(r), jnp.fft.irfft(jnp.fft.rfft(r), n=10),
            jnp.fft.fft2(c), jnp.fft.irfft(c[:, :5], n=8))


# Double precision, batch dimensions, 1-3 transformed dimensions, lengths
# 1, 5 and 12, and an irfftn whose input is not Hermitian (the imaginary
# parts a real signal's spectrum cannot have are ignored, numpy's way).
_FFT_C = np.arange(120).reshape(2, 3, 5, 4)
_FFT_C = ((_FFT_C * 7 % 11 - 5) / 4 + 1j * ((_FFT_C * 5 % 13 - 6) / 3)).astype(np.complex128)
_FFT_R = ((np.arange(72).reshape(2, 3, 12) * 5 % 17 - 8) / 4).astype(np.float64)


@case("fft_nd_f64", _FFT_C, _FFT_R)
def _(c, r):
    return (jnp.fft.fftn(c, axes=(-3, -2, -1)), jnp.fft.ifftn(c, axes=(-2, -1)),
            jnp.fft.irfftn(c, s=(3, 5, 6), axes=(-3, -2, -1)), jnp.fft.rfftn(r, axes=(-2, -1)),
            jnp.fft.fft(c[..., :1]), jnp.fft.irfft(c[0, 0], n=8), jnp.fft.rfft(r[..., :5]))


@case("mlp_softmax", np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
      np.linspace(-0.5, 0.7, 20, dtype=np.float32).reshape(4, 5), np.linspace(0, 0.1, 5, dtype=np.float32))
def _(x, w, b):
    h = jax.nn.relu(x @ w + b)
    return jax.nn.softmax(h, axis=-1), jax.nn.log_softmax(h, axis=0), jax.nn.gelu(h)


# A conditional whose branch index is out of range runs the last branch
# (operation_semantics.md, Conditional: "if branch_index < 0 or >= N, the
# N-1 branch is executed"). lax.switch clamps the index before the HLO, so
# this case is written by hand.
HLO_CASES["conditional_index_out_of_range"] = ("""\
HloModule conditional_index_out_of_range

branch0 {
  p0 = f32[3] parameter(0)
  one = f32[] constant(1)
  b1 = f32[3] broadcast(one), dimensions={}
  ROOT r0 = f32[3] add(p0, b1)
}

branch1 {
  p1 = f32[3] parameter(0)
  ROOT r1 = f32[3] multiply(p1, p1)
}

branch2 {
  p2 = f32[3] parameter(0)
  ROOT r2 = f32[3] negate(p2)
}

ENTRY main {
  x = f32[3] parameter(0)
  i_neg = s32[] parameter(1)
  i_big = s32[] parameter(2)
  i_ok = s32[] parameter(3)
  c_neg = f32[3] conditional(i_neg, x, x, x), branch_computations={branch0, branch1, branch2}
  c_big = f32[3] conditional(i_big, x, x, x), branch_computations={branch0, branch1, branch2}
  c_ok = f32[3] conditional(i_ok, x, x, x), branch_computations={branch0, branch1, branch2}
  ROOT t = (f32[3], f32[3], f32[3]) tuple(c_neg, c_big, c_ok)
}
""", [a([1.5, -2.0, 3.0], np.float32), a(-1, np.int32), a(7, np.int32), a(1, np.int32)], EXACT)

# Integer power (lax.pow takes floats only, so by hand): wrap-around on
# overflow; a negative exponent gives 0 except for bases 1 and -1.
HLO_CASES["integer_power"] = ("""\
HloModule integer_power

ENTRY main {
  x = s32[11] parameter(0)
  y = s32[11] parameter(1)
  ROOT p = s32[11] power(x, y)
}
""", [a([2, -3, 0, 1, -1, -1, 5, 2, 0, 7, 3], np.int32),
      a([10, 3, 0, -2, -3, -4, -1, 31, 5, 0, 40], np.int32)], EXACT)

# Scatter with an index vector dimension in the middle and update windows
# that straddle the operand's edge (dropped entirely), written by hand so
# the HLO is exactly the bare form.
HLO_CASES["scatter_window_straddles_edge"] = ("""\
HloModule scatter_window_straddles_edge

add {
  lhs = s32[] parameter(0)
  rhs = s32[] parameter(1)
  ROOT sum = s32[] add(lhs, rhs)
}

ENTRY main {
  operand = s32[4,5] parameter(0)
  indices = s32[3,2] parameter(1)
  updates = s32[3,2,2] parameter(2)
  ROOT scatter = s32[4,5] scatter(operand, indices, updates), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
}
""", [np.zeros((4, 5), np.int32), a([[0, 0], [3, 1], [2, 3]], np.int32),
      np.arange(1, 13, dtype=np.int32).reshape(3, 2, 2)], EXACT)


# cholesky and triangular-solve as XLA CPU computes them (jax.lax.linalg
# lowers to LAPACK custom calls on CPU, so the ops are written by hand).
# Cholesky: lower and upper factors of positive definite matrices whose
# unread triangle holds NaN, the other triangle of the result zero, and a
# matrix that is not positive definite (a negative or zero first pivot)
# all NaN. Not covered on purpose: a zero pivot after the first, where XLA
# CPU's expander leaves part of the factor finite and potrf (XLA GPU, kiln)
# fails the whole matrix.
_SPD = np.array([[4, 12, -16], [12, 37, -43], [-16, -43, 98]], np.float64)
_NAN_UPPER = _SPD + np.triu(np.full((3, 3), NAN), 1)
_NAN_LOWER = _SPD + np.tril(np.full((3, 3), NAN), -1)
_HERMITIAN = np.array([[5, 1 - 2j, 0.5j], [1 + 2j, 6, 2 - 1j], [-0.5j, 2 + 1j, 7]], np.complex64)

HLO_CASES["cholesky"] = ("""\
HloModule cholesky

ENTRY main {
  lower_in = f32[4,3,3] parameter(0)
  upper_in = f64[2,3,3] parameter(1)
  herm = c64[3,3] parameter(2)
  lower = f32[4,3,3] cholesky(lower_in), lower=true
  upper = f64[2,3,3] cholesky(upper_in), lower=false
  herm_lower = c64[3,3] cholesky(herm), lower=true
  herm_upper = c64[3,3] cholesky(herm), lower=false
  ROOT t = (f32[4,3,3], f64[2,3,3], c64[3,3], c64[3,3]) tuple(lower, upper, herm_lower, herm_upper)
}
""", [np.stack([_NAN_UPPER, -_SPD, np.diag([0.0, 1, 1]), _SPD * 2 + np.eye(3)]).astype(np.float32),
      np.stack([_NAN_LOWER, np.array([[1, 2, 0], [2, 1, 0], [0, 0, 1]], np.float64)]), _HERMITIAN],
    (1e-5, 1e-5))

# triangular-solve: each side, triangle, transpose_a and unit_diagonal
# family, batched, with garbage in the triangle that must not be read.
_TRI_A = np.array([[[2, 50, 60], [1, -3, 70], [0.5, 2, 4]],
                   [[-1.5, 80, 90], [2, 2.5, 10], [1, -1, 3]]], np.float32)
_TRI_C = np.array([[2 + 1j, 9, 9], [1 - 1j, -3j, 9], [0.5j, 2, 1 + 4j]], np.complex128)

HLO_CASES["triangular_solve"] = ("""\
HloModule triangular_solve

ENTRY main {
  a = f32[2,3,3] parameter(0)
  b_left = f32[2,3,2] parameter(1)
  b_right = f32[2,2,3] parameter(2)
  c = c128[3,3] parameter(3)
  cb = c128[3,2] parameter(4)
  l_n = f32[2,3,2] triangular-solve(a, b_left), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  l_t = f32[2,3,2] triangular-solve(a, b_left), left_side=true, lower=true, unit_diagonal=true, transpose_a=TRANSPOSE
  r_n = f32[2,2,3] triangular-solve(a, b_right), lower=true, transpose_a=NO_TRANSPOSE
  r_u = f32[2,2,3] triangular-solve(a, b_right), lower=false, transpose_a=TRANSPOSE
  c_t = c128[3,2] triangular-solve(c, cb), left_side=true, lower=true, transpose_a=TRANSPOSE
  c_h = c128[3,2] triangular-solve(c, cb), left_side=true, lower=true, transpose_a=ADJOINT
  ROOT t = (f32[2,3,2], f32[2,3,2], f32[2,2,3], f32[2,2,3], c128[3,2], c128[3,2]) tuple(l_n, l_t, r_n, r_u, c_t, c_h)
}
""", [_TRI_A, np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 3, 2),
      np.linspace(2, -1, 12, dtype=np.float32).reshape(2, 2, 3), _TRI_C,
      np.array([[1 + 1j, 2], [-1j, 0.5], [3, 1 - 2j]], np.complex128)], (1e-5, 1e-5))


# jnp.linalg as JAX lowers it on CPU: LAPACK typed-FFI custom calls
# (lapack_<t>{potrf,getrf,geqrf,orgqr,syevd,gesdd}_ffi, column-major operand
# layouts, uplo/mode in backend_config) plus JAX's own masking, pivot and
# NaN-on-failure code around them. Eigen- and singular vectors are unique
# only up to sign, so those cases return them sign-normalized (each vector
# scaled by the sign of its largest-magnitude entry; the inputs have
# distinct eigen- and singular values and no ties in magnitude).
_RNG = np.random.default_rng(12)


def _rand(shape, dtype):
    return _RNG.uniform(-1, 1, shape).astype(dtype)


def _spd(n, batch, dtype):
    x = _RNG.uniform(-1, 1, (batch, n, n))
    return (x @ np.swapaxes(x, -1, -2) + n * np.eye(n)).astype(dtype)


def _sign_normalized(v):
    """Columns of v (..., m, k) times the sign (complex: phase) of their
    largest-magnitude entry, which makes that entry real positive; the factors."""
    i = jnp.argmax(jnp.abs(v), axis=-2, keepdims=True)
    top = jnp.take_along_axis(v, i, axis=-2)
    sign = jnp.conj(top) / jnp.abs(top)
    return v * sign, sign


def _crand(shape, dtype):
    return (_RNG.uniform(-1, 1, shape) + 1j * _RNG.uniform(-1, 1, shape)).astype(dtype)


@case("linalg_cholesky", _spd(3, 2, np.float32), _spd(4, 1, np.float64)[0],
      np.array([[1, 2, 0], [2, 1, 0], [0, 0, 1]], np.float32), tol=(1e-5, 1e-5))
def _(x, y, not_pd):
    return jnp.linalg.cholesky(x), jnp.linalg.cholesky(y), jnp.linalg.cholesky(not_pd)


@case("linalg_lu", _rand((2, 3, 3), np.float32), _rand((3, 5), np.float64), _rand((5, 3), np.float64),
      np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], np.float64), tol=(1e-5, 1e-5))
def _(x, wide, tall, singular):
    return lax.linalg.lu(x), lax.linalg.lu(wide), lax.linalg.lu(tall), lax.linalg.lu(singular)


@case("linalg_qr", _rand((2, 4, 3), np.float64), _rand((4, 3), np.float32), _rand((3, 5), np.float32),
      tol=(1e-5, 1e-5))
def _(x, tall, wide):
    return (jnp.linalg.qr(x), jnp.linalg.qr(tall, mode="complete"), jnp.linalg.qr(wide),
            jnp.linalg.qr(tall, mode="r"))


@case("linalg_eigh", _spd(3, 2, np.float32), _rand((4, 4), np.float64), tol=(1e-5, 1e-5))
def _(x, y):
    w, v = jnp.linalg.eigh(x)
    w2, v2 = jnp.linalg.eigh(y, UPLO="U", symmetrize_input=False)
    return w, _sign_normalized(v)[0], w2, _sign_normalized(v2)[0]


@case("linalg_svd", _rand((2, 4, 3), np.float32), _rand((4, 3), np.float64), _rand((3, 5), np.float64),
      tol=(1e-5, 1e-5))
def _(x, tall, wide):
    return _svd_cases(x, tall, wide)


def _svd_normalized(u, s, vt):
    # a = u s vt: scaling u's column j by f scales vt's row j by conj(f).
    u, sign = _sign_normalized(u[..., :s.shape[-1]] if u.shape[-1] > s.shape[-1] else u)
    return u, s, vt[..., :s.shape[-1], :] * jnp.conj(jnp.swapaxes(sign, -1, -2))


def _svd_cases(x, tall, wide):
    out = []
    out += _svd_normalized(*jnp.linalg.svd(x, full_matrices=False))
    u, s, vt = jnp.linalg.svd(tall, full_matrices=True)  # u's 4th column: unique up to sign
    out += _svd_normalized(u, s, vt)
    out.append(_sign_normalized(u)[0])
    out += _svd_normalized(*jnp.linalg.svd(wide, full_matrices=False))
    out.append(jnp.linalg.svd(wide, compute_uv=False))
    return tuple(out)


@case("linalg_complex", _crand((2, 3, 3), np.complex64), _crand((4, 3), np.complex128),
      _crand((2, 3, 3), np.complex128), _crand((2, 4, 3), np.complex64), _crand((3, 4), np.complex128),
      tol=(1e-5, 1e-5))
def _(x, tall, h, s, wide):
    lu = lax.linalg.lu(x)
    q, r = jnp.linalg.qr(tall)
    w, v = jnp.linalg.eigh(h)
    out = [*lu, q, r, w, _sign_normalized(v)[0]]
    out += _svd_normalized(*jnp.linalg.svd(s, full_matrices=False))
    out += _svd_normalized(*jnp.linalg.svd(wide, full_matrices=True))
    out.append(jnp.linalg.svd(s, compute_uv=False))
    return tuple(out)


# Random bits: rng-bit-generator as XLA CPU expands it (ThreeFry, Philox and
# rng_default = Philox), 8- to 64-bit elements, odd and even shapes (which
# place ThreeFry's outputs differently), counters that wrap or carry into a
# u64[3] state's high word. Each draw's new state seeds the next, so the
# returned states are checked too.

def _rng_chain(algorithm, state_type, types):
    lines, outs = [], []
    prev = "state"
    for i, t in enumerate(types):
        # (not s1, u2, ...: XLA's parser reads those as element types)
        lines.append("  rng%d = (%s, %s) rng-bit-generator(%s), algorithm=%s" % (i, state_type, t, prev, algorithm))
        lines.append("  state%d = %s get-tuple-element(rng%d), index=0" % (i, state_type, i))
        lines.append("  bits%d = %s get-tuple-element(rng%d), index=1" % (i, t, i))
        outs.append("bits%d" % i)
        prev = "state%d" % i
    shapes = ", ".join([state_type] + list(types))
    return ("HloModule %s\n\nENTRY main {\n  state = %s parameter(0)\n%s\n  ROOT t = (%s) tuple(%s)\n}\n"
            % (algorithm, state_type, "\n".join(lines), shapes, ", ".join([prev] + outs)))


_RNG_TYPES = ["u32[7,13]", "u64[7,13]", "u32[4,6]", "u16[3,5]", "u8[5,3]", "u32[]", "u64[5]"]
HLO_CASES["rng_bit_generator_three_fry"] = (
    _rng_chain("rng_three_fry", "u64[2]", _RNG_TYPES),
    [a([0x0123456789ABCDEF, 2**64 - 40], np.uint64)], EXACT)
HLO_CASES["rng_bit_generator_philox"] = (
    _rng_chain("rng_philox", "u64[2]", _RNG_TYPES),
    [a([0x0123456789ABCDEF, 2**64 - 20], np.uint64)], EXACT)
HLO_CASES["rng_bit_generator_philox_u64x3"] = (
    _rng_chain("rng_philox", "u64[3]", _RNG_TYPES),
    [a([42, 2**64 - 20, 2**64 - 1], np.uint64)], EXACT)
HLO_CASES["rng_bit_generator_default"] = (
    _rng_chain("rng_default", "u64[2]", ["u32[7,13]", "u64[3,3]"]),
    [a([7, 8], np.uint64)], EXACT)


# jax.lax.rng_bit_generator on JAX's u32[4] key (JAX bitcasts it to u64[2]).
@case("rng_bit_generator_lax", a([1, 2, 3, 0xFFFFFFFF], np.uint32), tol=EXACT)
def _(k):
    s1, b1 = lax.rng_bit_generator(k, (7, 13), np.uint32, lax.RandomAlgorithm.RNG_THREE_FRY)
    s2, b2 = lax.rng_bit_generator(s1, (3, 5), np.uint64, lax.RandomAlgorithm.RNG_PHILOX)
    s3, b3 = lax.rng_bit_generator(s2, (4, 3), np.uint16, lax.RandomAlgorithm.RNG_PHILOX)
    return s3, b1, b2, b3


# jax.random with the rbg implementation (split by ThreeFry, bits from
# rng-bit-generator with rng_default).
@case("random_rbg", a([5, 6, 7, 8], np.uint32))
def _(kd):
    key = jax.random.wrap_key_data(kd, impl="rbg")
    k1, k2 = jax.random.split(key)
    return jax.random.bits(k1, (7, 13), np.uint32), jax.random.uniform(k2, (3, 5), np.float32)


# jax.random with the default implementation (threefry2x32, written by JAX
# as plain HLO): split, bits of 8 to 64 bits, uniform, normal (erf_inv).
@case("random_threefry", a([0, 42], np.uint32), tol=(1e-6, 1e-6))
def _(kd):
    key = jax.random.wrap_key_data(kd)
    k1, k2, k3 = jax.random.split(key, 3)
    k4 = jax.random.fold_in(k3, 7)
    return (jax.random.key_data(k1), jax.random.bits(k1, (5, 3), np.uint32),
            jax.random.bits(k2, (7,), np.uint8), jax.random.bits(k2, (2, 3), np.uint64),
            jax.random.uniform(k3, (4, 5), np.float32, minval=-2.0, maxval=3.0),
            jax.random.normal(k4, (3, 7), np.float32), jax.random.normal(k4, (6,), np.float64),
            jax.random.randint(k1, (9,), -5, 17, np.int32))


# int8 x int8 -> int32 dots (the int8 tensor-core GEMM on CUDA): extremes
# whose products and sums need all 32 bits, k a multiple of 4 (cuBLAS'
# int8 rule) and not, batched, and contracting dimensions in other places.
def _int8(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, shape).astype(np.int8)
    x.flat[:3] = [-128, 127, -128]
    return x


@case("int8_matmul", _int8((6, 16), 1), _int8((16, 8), 2), _int8((2, 3, 8), 3), _int8((2, 8, 4), 4),
      _int8((8, 3, 12), 5), _int8((12, 8, 4), 6), tol=EXACT)
def _(x, y, bx, by, cx, cy):
    return (jnp.matmul(x, y, preferred_element_type=jnp.int32),
            jnp.matmul(bx, by, preferred_element_type=jnp.int32),
            lax.dot_general(cx, cy, (((2, 0), (0, 1)), ((), ())), preferred_element_type=jnp.int32),
            jnp.matmul(x, y[:, :5], preferred_element_type=jnp.int32),  # n = 5: not cuBLAS' int8 form
            jnp.matmul(x[:, :6], y[:6], preferred_element_type=jnp.int32))  # k = 6: neither


# lax.top_k: the k largest in descending order, ties by lower index, NaN
# above +inf (XLA's total order), -0.0 below +0.0; batched rows.
@case("top_k", a([[3.0, NAN, 1.0, 3.0, -0.0, 0.0, INF, -INF, 3.0, NAN],
                  [1.0, 1.0, 1.0, -1.0, 2.0, 2.0, -NAN, 0.5, 0.0, -0.0]], np.float32),
      a([5, -3, 5, 7, 7, -3, 0, 2], np.int32), tol=EXACT)
def _(x, i):
    v, idx = lax.top_k(x, 6)
    vi, ii = lax.top_k(i, 4)
    return v, idx, vi, ii


# jnp.argsort: stable ascending and descending, NaN last, -0.0 and 0.0 equal
# (keep their order), along either axis.
@case("argsort", a([[0.0, NAN, -0.0, 1.0, -INF, 1.0, NAN, 0.0, -2.0, INF],
                    [2.0, 2.0, -1.0, 2.0, NAN, -0.0, 0.0, -1.0, 3.0, 2.0]], np.float32),
      a([4, 1, 4, -2, 1, 0, 4], np.int32), tol=EXACT)
def _(x, i):
    return (jnp.argsort(x, axis=-1, stable=True), jnp.argsort(x, axis=0, stable=True),
            jnp.argsort(x, axis=-1, stable=True, descending=True), jnp.argsort(i, stable=True),
            jnp.argsort(i, stable=True, descending=True))


# jax.ops.segment_sum: a scatter-add where ids outside [0, num_segments)
# are dropped; sorted and unsorted ids, 2-d data, int and float.
@case("segment_sum", np.arange(24, dtype=np.float32).reshape(8, 3) * 0.5 - 2,
      a([0, 2, -1, 2, 5, 1, 0, 9], np.int32), a([0, 0, 1, 1, 1, 3, 3, 4], np.int32),
      a([7, -3, 100, 2**30, 2**30, 5, 1, 8], np.int32), tol=EXACT)
def _(x, ids, sorted_ids, v):
    return (jax.ops.segment_sum(x, ids, num_segments=4),
            jax.ops.segment_sum(x[:, 0], sorted_ids, num_segments=5, indices_are_sorted=True),
            jax.ops.segment_sum(v, ids, num_segments=3), jax.ops.segment_max(x, ids, num_segments=3))


# ---- NumPy models for --check ----------------------------------------------
# Independent expectations for cases whose semantics NumPy can state exactly.

def _model_div_rem(x, y):
    info = np.iinfo(x.dtype)
    q, r = [], []
    for xi, yi in zip(x.tolist(), y.tolist()):
        if yi == 0:
            q.append(-1 if info.min < 0 else info.max)
            r.append(xi)
        elif info.min < 0 and xi == info.min and yi == -1:
            q.append(info.min)
            r.append(0)
        else:
            t = abs(xi) // abs(yi) * (1 if (xi < 0) == (yi < 0) else -1)
            q.append(t)
            r.append(xi - t * yi)
    return [np.array(q, x.dtype), np.array(r, x.dtype)]


def _model_f2i(x, d):
    def conv(v, t):
        info = np.iinfo(t)
        out = []
        for e in v.tolist():
            if e != e:
                out.append(0)
            else:
                out.append(int(min(max(np.trunc(e), info.min), info.max)))
        return np.array(out, t)
    ts = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)
    return [conv(x, t) for t in ts] + [conv(d, t) for t in (np.int32, np.uint32, np.int64)]


def _model_narrow(x):
    b = x.astype(bf16)
    h = x.astype(np.float16)
    return [b, h, b.astype(np.float16), h.astype(bf16), b.astype(np.float32), h.astype(np.float64)]


def _model_ipow(x, y):
    out = []
    for b, e in zip(x.tolist(), y.tolist()):
        if e < 0:
            v = 1 if b == 1 else ((-1) ** (-e) if b == -1 else 0)
        else:
            v = b ** e
        out.append((v + 2**31) % 2**32 - 2**31)  # s32 wrap-around
    return [np.array(out, np.int32)]


MODELS = {
    "integer_power": _model_ipow,
    "int_div_rem_s32": _model_div_rem,
    "int_div_rem_s8": _model_div_rem,
    "int_div_rem_u32": _model_div_rem,
    "int_div_rem_s64": _model_div_rem,
    "convert_float_to_int": _model_f2i,
    "convert_f32_to_narrow": _model_narrow,
    "conditional_index_out_of_range": lambda x, *_: [-x, -x, x * x],
}


# ---- writing ----------------------------------------------------------------

def hlo_text(fn, args):
    from jax._src.lib import xla_client as xc
    computation = jax.jit(fn).lower(*args).compiler_ir("hlo")
    options = xc.hlo.HloPrintOptions.short_parsable()
    options.print_large_constants = True  # as_hlo_text() would elide them as {...}
    options.print_metadata = False
    return computation.get_hlo_module().to_string(options)


def same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.dtype.kind in "fcV" or x.dtype == bf16:
        xf, yf = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), \
            y.astype(np.complex128 if y.dtype.kind == "c" else np.float64)
        return bool(np.all((xf == yf) | (np.isnan(xf) & np.isnan(yf))))
    return bool(np.array_equal(x, y))


def write_case(name, text, args, tol, check):
    folder = os.path.join(DATA, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    path = os.path.join(folder, "module.hlo")
    with open(path, "w") as f:
        f.write(text)
    module = xla_run.load_module(path)
    leaves = [np.require(x, requirements="C") for x in args]
    if len(leaves) != len(module.params):
        raise SystemExit("%s: %d args for %d parameters" % (name, len(leaves), len(module.params)))
    outputs = xla_run.run_module(module, leaves)
    for i, x in enumerate(leaves):
        np.save(os.path.join(folder, "input_%d.npy" % i), x, allow_pickle=False)
    for i, y in enumerate(outputs):
        np.save(os.path.join(folder, "output_%d.npy" % i), y, allow_pickle=False)
    if tol is not None:
        with open(os.path.join(folder, "tolerance.txt"), "w") as f:
            f.write("%g %g\n" % tol)
    if check and name in MODELS:
        want = MODELS[name](*leaves)
        for i, (got, exp) in enumerate(zip(outputs, want)):
            if not same(got, exp):
                raise SystemExit("%s output %d: XLA %s, NumPy model %s" % (name, i, got, exp))
    return len(leaves), len(outputs)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--check", action="store_true", help="compare XLA with the NumPy models")
    args = parser.parse_args(argv)
    names = sorted(list(CASES) + list(HLO_CASES))
    if args.only:
        names = [n for n in names if n in args.only]
    elif os.path.isdir(DATA):
        shutil.rmtree(DATA)
    for name in names:
        if name in CASES:
            fn, inputs, tol = CASES[name]
            text = hlo_text(fn, inputs)
        else:
            text, inputs, tol = HLO_CASES[name]
        n_in, n_out = write_case(name, text, inputs, tol, args.check)
        print("%-32s %d inputs, %d outputs" % (name, n_in, n_out))
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(DATA) for f in fs)
    print("%d cases, %.0f KiB in %s" % (len(names), total / 1024, os.path.relpath(DATA, ROOT)))


if __name__ == "__main__":
    main(sys.argv[1:])
