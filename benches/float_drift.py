#!/usr/bin/env python3
"""float_drift.py -- is a model wrong at a size, or is float32 rounding past the case's tolerance?

    python benches/float_drift.py CASE SYMBOL=SIZE... [--fxonnx target/release/fxonnx]
                                  [--checker ../shared/tools/check_onnx.py]

For a zoo or sweep case that benches/sizes.py finds over tolerance at some size: the inputs of that
size made as sizes.py makes them, then three results compared by check_onnx.py's rule and the case's
tolerance: the ExportedProgram in float32 (`ep.module()`, sizes.py's reference), the same program
in float64 (`ep.module().double()`, float inputs widened), and the fxonnx export in ONNX Runtime.
When ONNX Runtime is about as far from float64 as torch's float32 is, the error is the model's
rounding, not a translation; per sample (axis 0), the largest error of ONNX Runtime against float32.
Needs torch, onnxruntime and numpy.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sizes  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case")
    ap.add_argument("values", nargs="+", help="SYMBOL=SIZE, e.g. s77=8")
    ap.add_argument("--fxonnx", default=os.path.join(HERE, "..", "target", "release", "fxonnx"))
    ap.add_argument("--checker", default=os.environ.get("CHECK_ONNX", sizes.CHECKER))
    args = ap.parse_args(argv)
    import torch
    import torch.utils._pytree as pytree

    torch.set_num_threads(1)
    checker = sizes.load_checker(args.checker)
    name, pt2, inputs_path, rtol, atol, _ = sizes.case_info(args.case)
    ep = torch.export.load(pt2)
    values = {k: int(v) for k, v in (a.split("=", 1) for a in args.values)}
    inputs = sizes.edge_inputs(ep, sizes.leaves(inputs_path), values)
    f32 = sizes.reference(ep, inputs)
    kinds = sizes.user_inputs(ep)
    flat = [int(a) if kind == "symint" else torch.from_numpy(np.ascontiguousarray(a)) for a, (kind, _) in zip(inputs, kinds)]
    flat = [t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in flat]
    call_args, call_kwargs = pytree.tree_unflatten(flat, ep.call_spec.in_spec)
    with torch.no_grad():
        f64 = [v.detach().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)
               for v in pytree.tree_leaves(ep.module().double()(*call_args, **call_kwargs))]
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, "model.onnx")
        err = sizes.export(args.fxonnx, pt2, onnx_path)
        if err:
            raise SystemExit(err)
        graph_inputs = [a for a, (kind, _) in zip(inputs, kinds) if kind != "constant"]
        ort = sizes.run_ort(sizes.session_for(onnx_path), graph_inputs)
    ratio = (lambda a, e: checker.compare(a, e, rtol, atol)["tol_ratio"])
    print(f"{name} at {values} (rtol {rtol:g}, atol {atol:g}): tol ratio")
    print(f"  torch float32 vs float64:        {ratio(f32, f64):.3g}")
    print(f"  ONNX Runtime  vs float64:        {ratio(ort, f64):.3g}")
    print(f"  ONNX Runtime  vs torch float32:  {ratio(ort, f32):.3g}")
    for i, (a, e) in enumerate(zip(ort, f32)):
        a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
        if a.ndim and a.shape == e.shape and a.dtype.kind == "f":
            per = np.abs(a - e).reshape(a.shape[0], -1).max(axis=1)
            print(f"  output_{i} max abs error per sample: " + " ".join(f"{x:.2g}" for x in per))
    return 0


if __name__ == "__main__":
    sys.exit(main())
