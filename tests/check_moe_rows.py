#!/usr/bin/env python3
"""check_moe_rows.py -- the work of a mixture-of-experts model's grouped matmuls, measured in ONNX Runtime.

    python tests/check_moe_rows.py MODEL.onnx INPUTS.npz --routed ROWS

A grouped matmul unrolled per expert is a Concat (axis 0) of per-expert MatMuls, each on a Slice of the
routed rows. The script makes every such MatMul's first input a graph output, runs the model on the
inputs, and prints (JSON) per grouped matmul the rows each expert's MatMul received and the
multiply-adds they cost; it fails unless every grouped matmul's experts received ROWS rows in all (the
tokens times the experts per token: each routed row once, the jagged product's own work) and no
MatMul in the model multiplies by a stack of every expert's weights (the G-times-the-work form).
Needs onnx, onnxruntime, numpy.
"""
import argparse
import json
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper, shape_inference


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("inputs")
    ap.add_argument("--routed", type=int, required=True)
    args = ap.parse_args()
    model = onnx.load(args.model)
    g = model.graph
    producer = {o: n for n in g.node for o in n.output}
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    axis0 = lambda n: next((a.i for a in n.attribute if a.name == "axis"), None) == 0

    def sliced_rows(v):
        p = producer.get(v)
        return p is not None and p.op_type == "Slice" and len(p.input) > 3 and \
            inits.get(p.input[3], np.array([1])).tolist() == [0]

    calls = []
    for n in g.node:
        if n.op_type == "Concat" and axis0(n):
            experts = [producer[i] for i in n.input if i in producer and producer[i].op_type == "MatMul"
                       and sliced_rows(producer[i].input[0])]
            if len(experts) >= 2:
                calls.append((n.name, experts))
    if not calls:
        sys.exit(f"{args.model}: no grouped matmul unrolled per expert")
    # A 3-D weight stack read by a MatMul: the form that multiplies every row by every expert.
    inferred = shape_inference.infer_shapes(model)
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in
             list(inferred.graph.value_info) + list(g.input) + list(g.output)}
    ranks.update({k: v.ndim for k, v in inits.items()})
    stacked = [n.name for n in g.node if n.op_type == "MatMul" and ranks.get(n.input[1]) == 3
               and ranks.get(n.input[0]) == 2]

    probes = [e.input[0] for _, experts in calls for e in experts]
    weights = [e.input[1] for _, experts in calls for e in experts]
    known = {o.name for o in g.output}
    for v in probes + weights:
        if v not in known:
            g.output.append(onnx.helper.make_empty_tensor_value_info(v))
            known.add(v)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    with np.load(args.inputs) as z:
        feeds = {i.name: z[f"input_{k}"] for k, i in enumerate(s.get_inputs())}
    names = [o.name for o in s.get_outputs()]
    values = dict(zip(names, s.run(None, feeds)))
    report, ok = [], not stacked
    for name, experts in calls:
        rows = [int(values[e.input[0]].shape[0]) for e in experts]
        k, n = values[experts[0].input[1]].shape[-2:]
        report.append({"concat": name, "experts": len(experts), "rows_per_expert": rows, "rows": sum(rows),
                       "multiply_adds": sum(rows) * int(k) * int(n),
                       "all_experts_every_row": len(experts) * args.routed * int(k) * int(n)})
        ok &= sum(rows) == args.routed
    print(json.dumps({"model": args.model, "routed_rows": args.routed, "ok": ok, "stacked_matmuls": stacked,
                      "grouped_matmuls": report}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
