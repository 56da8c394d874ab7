#!/usr/bin/env python3
"""Generates tests/e2e/data/cudnn_conv: cuDNN convolution custom calls as
XLA's optimized GPU dumps hold them, each beside the plain HLO JAX writes
for the same computation.

  .venv/bin/python tests/e2e/data/cudnn_conv/generate.py

Why: XLA's GPU compiler rewrites convolutions into custom calls
(__cudnn$convForward, __cudnn$convBackwardInput, __cudnn$convBackwardFilter,
__cudnn$convBiasActivationForward) that keep the *forward* convolution's
window and dim_labels and put scales and the activation in a
cudnn_conv_backend_config. kiln rewrites them back into HLO
(compiler/passes/cudnn_conv_custom_call_rewriter.h). The expected values
must not come from that same derivation, so for every case:
  <case>.hlo            the custom call, written here in XLA's textual form
                        (operands, tuple result with a u8[0] scratch, JSON
                        backend_config) from the case's parameters
  <case>.reference.hlo  what it computes, as JAX lowers it on CPU
                        (jax.jit(f).lower(...).compiler_ir('hlo')): the
                        gradients come from jax.linear_transpose of
                        lax.conv_general_dilated, i.e. from JAX's own rules
tests/e2e/cudnn_conv_custom_call_e2e_test.cc compiles <case>.hlo, runs it on
the host (and the emulated CUDA device) and compares with the reference
evaluator on <case>.reference.hlo, on the same random inputs.
Made with jax/jaxlib 0.10.2.
"""

import json
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32

# name -> dict(kind, lhs, rhs (shapes), specs (lhs, rhs, out), strides, padding,
#              rhs_dilation, groups, dtype, scale, bias, side_scale, activation, alpha)
CASES = {
    "forward_nhwc_stride_scale": dict(
        kind="forward", lhs=(2, 7, 6, 3), rhs=(3, 2, 3, 4), specs=("NHWC", "HWIO", "NHWC"),
        strides=(2, 1), padding=((1, 1), (0, 1)), scale=0.5),
    "forward_nchw_grouped_dilated": dict(
        kind="forward", lhs=(1, 4, 6, 6), rhs=(6, 2, 2, 2), specs=("NCHW", "OIHW", "NCHW"),
        strides=(1, 1), padding=((1, 0), (0, 0)), rhs_dilation=(2, 1), groups=2),
    "bias_relu_side_input_nhwc": dict(
        kind="bias_activation", lhs=(2, 5, 5, 3), rhs=(3, 3, 3, 4), specs=("NHWC", "HWIO", "NHWC"),
        strides=(1, 1), padding=((1, 1), (1, 1)), bias=True, side_scale=0.75, scale=1.5,
        activation="kRelu"),
    "bias_leaky_relu_nchw": dict(
        kind="bias_activation", lhs=(1, 3, 6, 5), rhs=(4, 3, 3, 2), specs=("NCHW", "OIHW", "NCHW"),
        strides=(2, 1), padding=((0, 0), (1, 0)), bias=True, activation="kLeakyRelu", alpha=0.2),
    "bias_elu_1d": dict(
        kind="bias_activation", lhs=(2, 9, 3), rhs=(3, 3, 5), specs=("NHC", "HIO", "NHC"),
        strides=(1,), padding=((1, 1),), bias=True, activation="kElu"),
    "bias_relu6_1d": dict(
        kind="bias_activation", lhs=(2, 9, 3), rhs=(3, 3, 5), specs=("NHC", "HIO", "NHC"),
        strides=(1,), padding=((1, 1),), bias=True, activation="kRelu6", scale=4.0),
    "bias_sigmoid_1d": dict(
        kind="bias_activation", lhs=(2, 9, 3), rhs=(3, 3, 5), specs=("NHC", "HIO", "NHC"),
        strides=(2,), padding=((1, 1),), bias=True, activation="kSigmoid"),
    "bias_tanh_1d": dict(
        kind="bias_activation", lhs=(2, 9, 3), rhs=(3, 3, 5), specs=("NHC", "HIO", "NHC"),
        strides=(1,), padding=((0, 2),), bias=True, activation="kTanh"),
    "bias_gelu_1d": dict(
        kind="bias_activation", lhs=(2, 9, 3), rhs=(3, 3, 5), specs=("NHC", "HIO", "NHC"),
        strides=(1,), padding=((1, 1),), bias=True, activation="kGeluExact"),
    "bias_none_side_input_1d": dict(
        kind="bias_activation", lhs=(2, 9, 3), rhs=(3, 3, 5), specs=("NHC", "HIO", "NHC"),
        strides=(1,), padding=((1, 1),), bias=True, side_scale=1.0, activation="kNone"),
    "backward_input_nhwc_stride": dict(
        kind="backward_input", lhs=(2, 7, 6, 3), rhs=(3, 3, 3, 4), specs=("NHWC", "HWIO", "NHWC"),
        strides=(2, 2), padding=((1, 1), (0, 1))),
    "backward_input_nchw_grouped_dilated": dict(
        kind="backward_input", lhs=(2, 4, 7, 5), rhs=(6, 2, 2, 3), specs=("NCHW", "OIHW", "NCHW"),
        strides=(2, 1), padding=((0, 1), (1, 1)), rhs_dilation=(1, 2), groups=2),
    "backward_input_1d_wide_padding": dict(  # XLA's GPU convolution regression test shape
        kind="backward_input", lhs=(1, 23, 136), rhs=(31, 136, 257), specs=("NHC", "HIO", "NHC"),
        strides=(2,), padding=((23, 23),)),
    "backward_filter_nhwc_stride": dict(
        kind="backward_filter", lhs=(2, 7, 6, 3), rhs=(3, 3, 3, 4), specs=("NHWC", "HWIO", "NHWC"),
        strides=(2, 2), padding=((1, 1), (0, 1))),
    "backward_filter_nchw_grouped_dilated": dict(
        kind="backward_filter", lhs=(2, 4, 7, 6), rhs=(6, 2, 2, 2), specs=("NCHW", "OIHW", "NCHW"),
        strides=(1, 2), padding=((1, 0), (0, 1)), rhs_dilation=(2, 1), groups=2),
    "backward_filter_3d": dict(
        kind="backward_filter", lhs=(1, 4, 5, 4, 2), rhs=(2, 3, 2, 2, 3), specs=("NDHWC", "DHWIO", "NDHWC"),
        strides=(1, 2, 1), padding=((0, 1), (1, 1), (0, 0))),
}

TARGETS = {"forward": "__cudnn$convForward", "backward_input": "__cudnn$convBackwardInput",
           "backward_filter": "__cudnn$convBackwardFilter",
           "bias_activation": "__cudnn$convBiasActivationForward"}
SPATIAL = "DHW"  # spec letters of the spatial dimensions, outermost first


def dim_labels(specs):
    def labels(spec, batch, feature):
        out = ""
        spatial = [c for c in SPATIAL if c in spec]
        for c in spec:
            out += batch if c == batch_char[spec is specs[1]] else feature if c == feature_char[spec is specs[1]] \
                else str(spatial.index(c))
        return out
    batch_char = {False: "N", True: "O"}
    feature_char = {False: "C", True: "I"}
    lhs = labels(specs[0], "b", "f")
    rhs = labels(specs[1], "o", "i")
    out = labels(specs[2], "b", "f")
    return f"{lhs}_{rhs}->{out}"


def window_text(rhs_shape, specs, strides, padding, rhs_dilation):
    spatial = [c for c in SPATIAL if c in specs[1]]
    sizes = [rhs_shape[specs[1].index(c)] for c in spatial]
    parts = ["size=" + "x".join(map(str, sizes))]
    if any(s != 1 for s in strides):
        parts.append("stride=" + "x".join(map(str, strides)))
    if any(p != (0, 0) for p in padding):
        parts.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in padding))
    if any(d != 1 for d in rhs_dilation):
        parts.append("rhs_dilate=" + "x".join(map(str, rhs_dilation)))
    return "{" + " ".join(parts) + "}"


def shape_text(shape, dtype="f32"):
    return f"{dtype}[{','.join(map(str, shape))}]"


def conv_fn(c):
    def conv(x, w):
        return lax.conv_general_dilated(
            x, w, window_strides=c["strides"], padding=c["padding"], rhs_dilation=c["rhs_dilation"],
            dimension_numbers=c["specs"], feature_group_count=c["groups"],
            precision=lax.Precision.HIGHEST)
    return conv


def activation(name, alpha):
    return {
        "kNone": lambda y: y,
        "kRelu": lambda y: jnp.maximum(y, 0),
        "kRelu6": lambda y: jnp.clip(y, 0, 6),
        "kSigmoid": jax.nn.sigmoid,
        "kTanh": jnp.tanh,
        "kElu": lambda y: jnp.where(y > 0, y, jnp.expm1(y)),
        "kLeakyRelu": lambda y: jnp.where(y > 0, y, alpha * y),
        "kGeluExact": lambda y: jax.nn.gelu(y, approximate=False),
    }[name]


def build(name, c):
    c = dict(dict(rhs_dilation=(1,) * len(c["strides"]), groups=1, scale=1.0, bias=False, side_scale=0.0,
                  activation="kNone", alpha=0.0), **c)
    conv = conv_fn(c)
    x = jax.ShapeDtypeStruct(c["lhs"], F32)
    w = jax.ShapeDtypeStruct(c["rhs"], F32)
    y = jax.eval_shape(conv, x, w)
    out_feature = c["specs"][2].index("C")
    kind = c["kind"]
    if kind == "forward":
        params, result = [x, w], y.shape
        ref = lambda x, w: c["scale"] * conv(x, w)  # noqa: E731
    elif kind == "backward_input":
        params, result = [y, w], x.shape
        ref = lambda dy, w: c["scale"] * jax.linear_transpose(lambda x: conv(x, w), x)(dy)[0]  # noqa: E731
    elif kind == "backward_filter":
        params, result = [x, y], w.shape
        ref = lambda x, dy: c["scale"] * jax.linear_transpose(lambda w: conv(x, w), w)(dy)[0]  # noqa: E731
    else:
        bias = jax.ShapeDtypeStruct((y.shape[out_feature],), F32)
        params, result = [x, w, bias], y.shape
        if c["side_scale"] != 0:
            params.append(jax.ShapeDtypeStruct(y.shape, F32))
        act = activation(c["activation"], c["alpha"])
        shape = [1] * len(y.shape)
        shape[out_feature] = -1

        def ref(x, w, b, *side):
            r = c["scale"] * conv(x, w)
            if side:
                r = r + c["side_scale"] * side[0]
            return act(r + b.reshape(shape))

    config = {"conv_result_scale": c["scale"], "activation_mode": c["activation"],
              "side_input_scale": c["side_scale"], "leakyrelu_alpha": c["alpha"]}
    backend = {"operation_queue_id": "0", "wait_on_operation_queues": [], "cudnn_conv_backend_config": config,
               "force_earliest_schedule": False}
    lines = [f"HloModule {name}", "", "ENTRY main {"]
    names = []
    for i, p in enumerate(params):
        lines.append(f"  p{i} = {shape_text(p.shape)} parameter({i})")
        names.append(f"p{i}")
    attrs = f"window={window_text(c['rhs'], c['specs'], c['strides'], c['padding'], c['rhs_dilation'])}, " \
            f"dim_labels={dim_labels(c['specs'])}"
    if c["groups"] != 1:
        attrs += f", feature_group_count={c['groups']}"
    lines.append(f"  conv = ({shape_text(result)}, u8[0]{{0}}) custom-call({', '.join(names)}), {attrs}, "
                 f"custom_call_target=\"{TARGETS[kind]}\", backend_config={json.dumps(backend, separators=(',', ':'))}")
    lines.append(f"  ROOT result = {shape_text(result)} get-tuple-element(conv), index=0")
    lines.append("}")
    with open(os.path.join(HERE, name + ".hlo"), "w") as f:
        f.write("\n".join(lines) + "\n")

    options = xc.hlo.HloPrintOptions.short_parsable()
    options.print_large_constants = True
    options.print_metadata = False
    text = jax.jit(ref).lower(*params).compiler_ir("hlo").get_hlo_module().to_string(options)
    with open(os.path.join(HERE, name + ".reference.hlo"), "w") as f:
        f.write(text)


def main():
    for name, case in CASES.items():
        build(name, case)
        print(name)


if __name__ == "__main__":
    main()
