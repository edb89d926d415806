#!/usr/bin/env python3
"""ort_fusions.py -- the measurements behind the ONNX Runtime target's rules (src/optimize/egraph/rules/,
ONNXRUNTIME_RULES, and the opset-23 rules the targets rely on): each candidate fusion against the standard
ONNX graph it would replace, in ONNX Runtime.

    python benches/ort_fusions.py [--seconds 3]

One small model per form (float32, hidden 128 and 256, batch 2 x 7 and 4 x 128 tokens), ONNX Runtime CPU,
1 intra-op and 1 inter-op thread, default graph optimizations (what ONNX Runtime fuses itself at load is
counted in); the forms of a row run in rounds, once each per round, and a ratio is the median over rounds of a
form's CPU time over the first form's in the same round. Each model also reads the norm's residual sum after
the norm where a decoder does (`+ sum`). Prints a markdown table and what ONNX Runtime made of each form.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper as h, numpy_helper as nh

MS = "com.microsoft"


def model(nodes, inputs, inits, opset=20, outputs=("o",)):
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                         [h.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                         [nh.from_array(v, k) for k, v in inits.items()])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset), h.make_opsetid(MS, 1)], ir_version=10)


def session(m):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


def loaded_ops(m) -> str:
    """The node types ONNX Runtime runs after its own load-time fusions."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.optimized_model_filepath = os.path.join(d, "m.onnx")
        ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return " ".join(n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node)


def paired(sessions: dict, feed: dict, seconds: float) -> dict:
    times = {k: [] for k in sessions}
    keys = list(sessions)
    end, r = time.process_time() + seconds, 0
    while time.process_time() < end or r < 50:
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            t = time.thread_time_ns()
            sessions[k].run(None, feed)
            times[k].append(time.thread_time_ns() - t)
        r += 1
    base = np.array(times[keys[0]], dtype=float)
    return {k: (np.median(times[k]) / 1e3, float(np.median(np.array(times[k], dtype=float) / base))) for k in keys}


def rms(x, out, div: bool, scale: bool):
    nodes = [h.make_node("Pow", [x, "two"], ["p"]), h.make_node("ReduceMean", ["p", "ax"], ["m"]),
             h.make_node("Add", ["m", "eps"], ["me"]), h.make_node("Sqrt", ["me"], ["s"])]
    n = "n" if scale else out
    if div:
        nodes.append(h.make_node("Div", [x, "s"], [n]))
    else:
        nodes += [h.make_node("Reciprocal", ["s"], ["r"]), h.make_node("Mul", [x, "r"], [n])]
    if scale:
        nodes.append(h.make_node("Mul", ["w", n], [out]))
    return nodes


def forms(shape, rng):
    hidden = shape[-1]
    consts = {"two": np.array(2, np.float32), "ax": np.array([-1], np.int64), "eps": np.array(1e-6, np.float32)}
    w = {"w": rng.standard_normal(hidden).astype(np.float32), "b": rng.standard_normal(hidden).astype(np.float32)}
    ones = {"one": np.ones(hidden, np.float32)}
    two_in = [("a", list(shape)), ("s2", list(shape))]
    feed2 = {"a": rng.standard_normal(shape).astype(np.float32), "s2": rng.standard_normal(shape).astype(np.float32)}
    feed1 = {"a": feed2["a"]}
    add = [h.make_node("Add", ["a", "s2"], ["x"])]
    out = [h.make_node("Add", ["x", "y"], ["o"])]  # the residual sum read after the norm
    i = {**consts, **w, **ones}
    skip_rms = lambda gamma: h.make_node("SkipSimplifiedLayerNormalization", ["a", "s2", gamma], ["y", "", "", "x"],
                                          domain=MS, epsilon=1e-6)
    yield "RMS norm with scale + sum", two_in, feed2, {
        "x * rsqrt(.) * w (as translated)": model(add + rms("x", "y", False, True) + out, two_in, i),
        "x / sqrt(.) * w (rms-norm-div)": model(add + rms("x", "y", True, True) + out, two_in, i),
        "SkipSimplifiedLayerNormalization": model([skip_rms("w")] + out, two_in, i),
    }
    yield "RMS norm without scale + sum", two_in, feed2, {
        "x * rsqrt(.) (as translated)": model(add + rms("x", "y", False, False) + out, two_in, i),
        "x / sqrt(.) (rms-norm-div)": model(add + rms("x", "y", True, False) + out, two_in, i),
        "SkipSimplifiedLayerNormalization (skip-simplified-layer-norm)": model([skip_rms("one")] + out, two_in, i),
    }
    ln = h.make_node("LayerNormalization", ["x", "w", "b"], ["y"], axis=-1, epsilon=1e-5)
    yield "Add + LayerNormalization + sum", two_in, feed2, {
        "Add + LayerNormalization": model(add + [ln] + out, two_in, w),
        "SkipLayerNormalization": model([h.make_node("SkipLayerNormalization", ["a", "s2", "w", "b"],
                                                     ["y", "", "", "x"], domain=MS, epsilon=1e-5)] + out, two_in, w),
    }
    post = h.make_node("LayerNormalization", ["x", "w", "b"], ["o"], axis=-1, epsilon=1e-5)
    yield "Add + LayerNormalization (post-norm)", two_in, feed2, {
        "Add + LayerNormalization": model(add + [post], two_in, w),
        "SkipLayerNormalization": model([h.make_node("SkipLayerNormalization", ["a", "s2", "w", "b"], ["o"],
                                                     domain=MS, epsilon=1e-5)], two_in, w),
    }
    # Opset 23 (the targets' opset for programs with attention): ONNX's RMSNormalization.
    yield "RMS norm with scale + sum (opset 23)", two_in, feed2, {
        "x / sqrt(.) * w (rms-norm-div)": model(add + rms("x", "y", True, True) + out, two_in, i, 23),
        "RMSNormalization (rms-norm)": model(add + [h.make_node("RMSNormalization", ["x", "w"], ["y"], axis=-1,
                                                                epsilon=1e-6)] + out, two_in, i, 23),
    }
    yield from attention_forms(shape, rng)
    one_in = [("a", list(shape))]
    yield "Gelu (tanh)", one_in, feed1, {
        "Gelu(approximate=tanh)": model([h.make_node("Gelu", ["a"], ["o"], approximate="tanh")], one_in, {}),
        "FastGelu": model([h.make_node("FastGelu", ["a"], ["o"], domain=MS)], one_in, {}),
    }
    yield "bias + Gelu (tanh)", one_in, feed1, {
        "Add + Gelu(approximate=tanh)": model([h.make_node("Add", ["a", "b"], ["x"]),
                                               h.make_node("Gelu", ["x"], ["o"], approximate="tanh")], one_in, w),
        "FastGelu with bias": model([h.make_node("FastGelu", ["a", "b"], ["o"], domain=MS)], one_in, w),
    }
    yield "bias + Gelu (erf)", one_in, feed1, {
        "Add + Gelu": model([h.make_node("Add", ["a", "b"], ["x"]), h.make_node("Gelu", ["x"], ["o"])], one_in, w),
        "BiasGelu": model([h.make_node("BiasGelu", ["a", "b"], ["o"], domain=MS)], one_in, w),
    }


def attention_forms(shape, rng):
    """A decoder layer's rotary embedding and attention over its KV cache (heads of 32, half as many
    key/value heads as query heads) at opset 23: as translated, and as `rotary-embedding` and
    `attention-kv` (src/optimize/egraph/rules/) write them. `tokens` are the past; a decode step
    adds one token."""
    batch, past, hidden = shape
    heads, kv, head = hidden // 32, hidden // 64, 32
    q_in = [("q", [batch, heads, 1, head]), ("k", [batch, kv, 1, head]), ("f", [batch, 1, head // 2])]
    feed = {"q": rng.standard_normal((batch, heads, 1, head)).astype(np.float32),
            "k": rng.standard_normal((batch, kv, 1, head)).astype(np.float32),
            "f": rng.standard_normal((batch, 1, head // 2)).astype(np.float32)}
    consts = {"zero": np.array([0], np.int64), "half": np.array([head // 2], np.int64), "one": np.array([1], np.int64),
              "end": np.array([2**63 - 1], np.int64), "last": np.array([3], np.int64)}
    angles = [h.make_node("Concat", ["f", "f"], ["cat"], axis=-1), h.make_node("Cos", ["cat"], ["cos"]),
              h.make_node("Sin", ["cat"], ["sin"]), h.make_node("Unsqueeze", ["cos", "one"], ["uc"]),
              h.make_node("Unsqueeze", ["sin", "one"], ["us"])]

    def rotate(x, out):
        return [h.make_node("Mul", [x, "uc"], [f"{x}c"]),
                h.make_node("Slice", [x, "zero", "half", "last", "one"], [f"{x}1"]),
                h.make_node("Slice", [x, "half", "end", "last", "one"], [f"{x}2"]),
                h.make_node("Neg", [f"{x}2"], [f"{x}n"]), h.make_node("Concat", [f"{x}n", f"{x}1"], [f"{x}r"], axis=-1),
                h.make_node("Mul", [f"{x}r", "us"], [f"{x}s"]), h.make_node("Add", [f"{x}c", f"{x}s"], [out])]

    fused = [h.make_node("Cos", ["f"], ["c"]), h.make_node("Sin", ["f"], ["s"])]
    yield "rotary embedding of queries and keys (opset 23)", q_in, feed, {
        "x * cos + rotate_half(x) * sin (as translated)": model(
            angles + rotate("q", "o") + rotate("k", "o2"), q_in, consts, 23, ("o", "o2")),
        "RotaryEmbedding (rotary-embedding)": model(
            fused + [h.make_node("RotaryEmbedding", ["q", "c", "s"], ["o"]),
                     h.make_node("RotaryEmbedding", ["k", "c", "s"], ["o2"])], q_in, consts, 23, ("o", "o2")),
    }
    # A prefill: positions 0.. for every sequence, one set of angles for the batch, which the rule
    # rotates with the batch and heads as one axis.
    p_in = [("q", [batch, heads, past, head]), ("k", [batch, kv, past, head]), ("f", [1, past, head // 2])]
    p_feed = {n: rng.standard_normal(sh).astype(np.float32) for n, sh in p_in}
    flat = {"flat": np.array([1, -1, 0, head], np.int64), "qh": np.array([-1, heads, 0, head], np.int64),
            "kh": np.array([-1, kv, 0, head], np.int64)}
    yield "prefill rotary embedding, angles shared by the batch (opset 23)", p_in, p_feed, {
        "x * cos + rotate_half(x) * sin (as translated)": model(
            angles + rotate("q", "o") + rotate("k", "o2"), p_in, consts, 23, ("o", "o2")),
        "Reshape + RotaryEmbedding + Reshape (rotary-embedding)": model(
            fused + [h.make_node("Reshape", ["q", "flat"], ["qf"]), h.make_node("RotaryEmbedding", ["qf", "c", "s"], ["qr"]),
                     h.make_node("Reshape", ["qr", "qh"], ["o"]), h.make_node("Reshape", ["k", "flat"], ["kf"]),
                     h.make_node("RotaryEmbedding", ["kf", "c", "s"], ["kr"]), h.make_node("Reshape", ["kr", "kh"], ["o2"])],
            p_in, {**consts, **flat}, 23, ("o", "o2")),
    }
    a_in = [("q", [batch, heads, 1, head]), ("k", [batch, kv, 1, head]), ("v", [batch, kv, 1, head]),
            ("pk", [batch, kv, past, head]), ("pv", [batch, kv, past, head]), ("mask", [batch, 1, 1, past + 1])]
    feed = {n: rng.standard_normal(s).astype(np.float32) for n, s in a_in}
    reps = {"ax": np.array([2], np.int64), "e": np.array([1, 1, heads // kv, 1, 1], np.int64),
            "r": np.array([batch, heads, past + 1, head], np.int64)}
    repeat = lambda x: [h.make_node("Unsqueeze", [f"c{x}", "ax"], [f"u{x}"]), h.make_node("Expand", [f"u{x}", "e"], [f"e{x}"]),
                        h.make_node("Reshape", [f"e{x}", "r"], [f"r{x}"])]
    outs = ("o", "ck", "cv")
    yield "decode step: attention over the KV cache, grouped heads (opset 23)", a_in, feed, {
        "Concat + repeated heads + Attention (as translated)": model(
            [h.make_node("Concat", ["pk", "k"], ["ck"], axis=2), h.make_node("Concat", ["pv", "v"], ["cv"], axis=2)]
            + repeat("k") + repeat("v")
            + [h.make_node("Attention", ["q", "rk", "rv", "mask"], ["o"], scale=head ** -0.5)], a_in, reps, 23, outs),
        "Attention with past and present (attention-kv)": model(
            [h.make_node("Attention", ["q", "k", "v", "mask", "pk", "pv"], list(outs), scale=head ** -0.5)],
            a_in, {}, 23, outs),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=3.0, help="paired timing per row")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    print(f"onnxruntime {ort.__version__}, CPU, 1 thread; ratio = median over paired rounds of the form's time "
          "over the first form's\n")
    print("| pattern | tokens x hidden | form | us per run | ratio | ONNX Runtime runs |")
    print("|---|---|---|---:|---:|---|")
    for shape in [(2, 7, 128), (4, 128, 128), (4, 128, 256)]:
        for name, _, feed, models in forms(shape, rng):
            sessions = {k: session(m) for k, m in models.items()}
            ref = next(iter(sessions.values())).run(None, feed)[0]
            for k, s in sessions.items():
                np.testing.assert_allclose(s.run(None, feed)[0], ref, rtol=1e-4, atol=1e-4, err_msg=k)
            result = paired(sessions, feed, args.seconds)
            for k, (us, ratio) in result.items():
                print(f"| {name} | {shape[0]}x{shape[1]} x {shape[2]} | {k} | {us:.1f} | {ratio:.2f} | "
                      f"{loaded_ops(models[k])} |", flush=True)


if __name__ == "__main__":
    main()
