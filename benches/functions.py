#!/usr/bin/env python3
"""Module functions on the DEV zoo (issue 20): each model exported as usual and with
`--functions auto`, both checked against PyTorch's outputs by ../shared/tools/check_onnx.py
(onnx.checker full, onnxruntime on the example inputs and the other-size inputs, latency), and the
two exports compared with each other in onnxruntime on both input sets.

    python benches/functions.py ZOO_DIR [--fxonnx target/release/fxonnx] [--check-onnx PATH]
                                [--runs 20] [--out reports/functions.md]

Needs onnx, onnxruntime and numpy; no torch.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort

DOMAIN = "pkg.fxonnx"


def check(check_onnx, model, case, runs):
    out = subprocess.run([sys.executable, check_onnx, model, case, "--runs", str(runs)], capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def outputs(model, inputs):
    s = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return s.run(None, {i.name: x for i, x in zip(s.get_inputs(), inputs)})


def npz_inputs(path):
    data = np.load(path)
    return [data[f"input_{i}"] for i in range(len(data.files))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zoo", type=pathlib.Path)
    ap.add_argument("--fxonnx", default="target/release/fxonnx")
    ap.add_argument("--check-onnx", default=str(pathlib.Path(__file__).resolve().parents[2] / "shared/tools/check_onnx.py"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out", default="reports/functions.md")
    a = ap.parse_args()
    rows = []
    for case in sorted(p for p in a.zoo.iterdir() if (p / "model.pt2").exists()):
        with tempfile.TemporaryDirectory() as d:
            inline, fn = pathlib.Path(d) / "inline.onnx", pathlib.Path(d) / "functions.onnx"
            for path, extra in ((inline, []), (fn, ["--functions", "auto"])):
                r = subprocess.run([a.fxonnx, "export", case / "model.pt2", "-o", path, "-q", *extra],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"{case.name}: {r.stderr}")
            ci, cf = check(a.check_onnx, inline, case, a.runs), check(a.check_onnx, fn, case, a.runs)
            m = onnx.load(str(fn), load_external_data=False)
            calls = Counter(n.op_type for n in m.graph.node if n.domain == DOMAIN)
            # The two exports against each other, on both input sets.
            diff = 0.0
            for name in ("inputs.npz", "inputs_alt.npz"):
                if not (case / name).exists():
                    continue
                xs = npz_inputs(case / name)
                for p, q in zip(outputs(inline, xs), outputs(fn, xs)):
                    if p.dtype.kind in "fc":
                        diff = max(diff, float(np.max(np.abs(p.astype(np.float64) - q.astype(np.float64)), initial=0)))
                    elif not np.array_equal(p, q):
                        diff = float("inf")
            rows.append({
                "case": case.name,
                "functions": len(m.functions),
                "calls": sum(calls.values()),
                "repeated": ", ".join(f"{k} ×{v}" for k, v in calls.most_common() if v > 1) or "-",
                "main_nodes": len(m.graph.node),
                "inline_nodes": ci["onnx_nodes"],
                "fn_nodes_inlined": cf["onnx_nodes"],
                "inline_mb": ci["file_bytes"] / 1e6,
                "fn_mb": cf["file_bytes"] / 1e6,
                "inline_ms": ci.get("ort_latency_ms_median"),
                "fn_ms": cf.get("ort_latency_ms_median"),
                "inline_ok": ci["all_ok"],
                "fn_ok": cf["all_ok"] and cf["checker_ok"],
                "fn_tol": max(cf.get("tol_ratio") or 0, cf.get("alt_tol_ratio") or 0),
                "diff": diff,
            })
            print(rows[-1], flush=True)
    lines = [
        "# Module functions (`--functions auto`) on the DEV zoo",
        "",
        f"Made by `python benches/functions.py ZOO_DIR` with `{a.fxonnx}` ({a.runs} timed runs each, 1 thread).",
        "`checker + torch` is check_onnx.py on the functions export: onnx.checker (full) and onnxruntime",
        "against PyTorch's outputs on the example inputs and on inputs of other sizes (worst tolerance",
        "ratio, passing at <= 1). `vs inline` is the largest difference between the two exports' outputs",
        "in onnxruntime on both input sets. Main nodes: the functions export's main graph (calls",
        "included); nodes inlined: what onnxruntime runs once the functions are inlined.",
        "",
        "| model | functions | calls | repeated calls | main nodes | nodes inlined | inline export nodes | size MB (fn / inline) | ORT ms (fn / inline) | checker + torch | worst tol ratio | vs inline |",
        "|---|---:|---:|---|---:|---:|---:|---|---|---|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['functions']} | {r['calls']} | {r['repeated']} | {r['main_nodes']} | "
            f"{r['fn_nodes_inlined']} | {r['inline_nodes']} | {r['fn_mb']:.1f} / {r['inline_mb']:.1f} | "
            f"{r['fn_ms']} / {r['inline_ms']} | {'pass' if r['fn_ok'] else 'FAIL'} | {r['fn_tol']:.4f} | {r['diff']:.2e} |"
        )
    pathlib.Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
