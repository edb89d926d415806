#!/usr/bin/env python3
"""sdpa_semantics.py -- what eager scaled_dot_product_attention gives, per backend and overload, on the rows
where attention is ill-defined, next to fxonnx's models in ONNX Runtime (reports/deploy_ops.md).

    python benches/sdpa_semantics.py [--fxonnx target/release/fxonnx]

Query rows: 0 ordinary; 1 hidden from every key by the mask; 2 NaN logits (a NaN in the query); 3 NaN logits
and hidden from every key; 4 a +inf query (logits of both signs' infinities). Masks: none, boolean, additive
float (-inf where the boolean one is false). Backends: the default dispatch on CPU (the CPU flash kernel where
it applies), `SDPBackend.MATH`, and the kernel `_scaled_dot_product_flash_attention_for_cpu` called directly
(float masks only). fxonnx: the same calls exported (torch.export) and run in ONNX Runtime at opsets 20
(Softmax lowering) and 23 (ONNX Attention). Each cell says what a row holds: `0` zeros, `NaN`, `x` finite
values matching the math backend's, `≠` finite values that do not. Needs torch, onnxruntime.
"""
import argparse
import math
import os
import subprocess
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROWS = ["ordinary", "masked at every key", "NaN logits", "NaN logits, masked at every key", "+inf query"]


def inputs():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 4, generator=g), torch.randn(1, 2, 6, 4, generator=g),
               torch.randn(1, 2, 6, 4, generator=g))
    q[..., 2, 0] = q[..., 3, 0] = float("nan")
    q[..., 4, :] = float("inf")
    keep = torch.ones(1, 1, 5, 6, dtype=torch.bool)
    keep[..., 1, :] = keep[..., 3, :] = False
    keep[..., 0, 4:] = False
    return q, k, v, keep, torch.zeros(1, 1, 5, 6).masked_fill(~keep, -math.inf)


class Call(torch.nn.Module):
    def forward(self, q, k, v, *mask):
        return F.scaled_dot_product_attention(q, k, v, *mask)


def cell(row, ref_row):
    if np.isnan(row).all():
        return "NaN"
    if np.isnan(row).any():
        return "NaN (some)"
    if (row == 0).all():
        return "0"
    return "x" if ref_row is not None and np.allclose(row, ref_row, atol=1e-5) else "≠"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fxonnx", default="target/release/fxonnx")
    args = ap.parse_args()
    import onnxruntime as ort
    q, k, v, keep, additive = inputs()
    masks = {"none": (), "boolean": (keep,), "float": (additive,)}
    with sdpa_kernel([SDPBackend.MATH]):
        math_out = {m: F.scaled_dot_product_attention(q, k, v, *a).numpy() for m, a in masks.items()}
    columns = {}
    for m, a in masks.items():
        columns[("default (CPU flash)", m)] = F.scaled_dot_product_attention(q, k, v, *a).numpy()
        columns[("MATH", m)] = math_out[m]
        if m != "boolean":
            kw = {"attn_mask": a[0]} if a else {}
            columns[("_scaled_dot_product_flash_attention_for_cpu", m)] = \
                torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, **kw)[0].numpy()
    tmp = tempfile.mkdtemp()
    for m, a in masks.items():
        ep = torch.export.export(Call(), (q, k, v, *a))
        pt2 = os.path.join(tmp, f"{m}.pt2")
        torch.export.save(ep, pt2)
        for opset in (20, 23):
            out = os.path.join(tmp, f"{m}.{opset}.onnx")
            subprocess.run([args.fxonnx, "export", pt2, "-o", out, "--opset", str(opset)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            s = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
            feeds = {i.name: t.numpy() for i, t in zip(s.get_inputs(), (q, k, v, *a))}
            columns[(f"fxonnx opset {opset}", m)] = s.run(None, feeds)[0]
    names = sorted({c for c, _ in columns}, key=lambda c: list(dict.fromkeys(c for c, _ in columns)).index(c))
    print(f"torch {torch.__version__}, onnxruntime {ort.__version__}\n")
    for m in masks:
        print(f"\nMask: {m}\n")
        cols = [c for c in names if (c, m) in columns]
        print("| query row | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        for i, r in enumerate(ROWS):
            if m == "none" and "masked" in r:
                continue
            ref = math_out[m][0, :, i]
            print(f"| {r} | " + " | ".join(cell(columns[(c, m)][0, :, i], ref) for c in cols) + " |")


if __name__ == "__main__":
    main()
