#!/usr/bin/env python3
"""hf_backend.py -- fxonnx as a transformers exporter backend, on the deployment benchmark's cases.

    python benches/hf_backend.py [--cases bert,llama_decode] [--report reports/deploy.md]

For each case of benches/deploy_cases.py: `import fxonnx.transformers` registers the export format
"fxonnx"; `AutoHfExporter.from_config(FxonnxConfig(dynamic=True))` picks fxonnx's exporter by that
name, which captures as transformers' `OnnxExporter` does and converts with fxonnx; the
`ExportedModel` runs in ONNX Runtime through transformers' own runner (`OnnxModelRunner`) on the
export inputs and on batch 4 x 128 tokens, every output leaf compared with the model run eagerly;
then `save_pretrained` and `ExportedModel.from_pretrained` (the format found in `export.json`),
and the reloaded model runs the large inputs again. Needs torch, transformers, onnxscript (for
onnx_ir and the runner), onnxruntime and fxonnx.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def leaves(out) -> dict:
    from transformers.exporters.utils import get_leaf_tensors

    return {k: v.detach().cpu().numpy() for k, v in get_leaf_tensors(out).items()}


def max_error(got: dict, want: dict) -> float:
    missing = set(want) - set(got)
    if missing:
        raise AssertionError(f"outputs missing: {sorted(missing)[:4]}")
    return max((float(np.max(np.abs(got[k].astype(np.float64) - v.astype(np.float64)))) if v.size else 0.0)
               for k, v in want.items())


def run_case(name, case, folder) -> dict:
    import torch
    from transformers.exporters import AutoHfExporter, ExportedModel

    from fxonnx.transformers import FORMAT, FxonnxConfig

    model = case.build()
    sizes = {s: case.inputs(model, s) for s in ("small", "large")}
    with torch.no_grad():
        want = {s: leaves(model(**copy.deepcopy(kw))) for s, kw in sizes.items()}
    config = FxonnxConfig(dynamic=True)
    exporter = AutoHfExporter.from_config(config)
    assert type(exporter).__name__ == "FxonnxExporter", type(exporter)
    start = time.perf_counter()
    exported = exporter.export(model, copy.deepcopy(sizes["small"]), config)
    record = {"case": name, "export_s": time.perf_counter() - start, "nodes": len(list(exported.program.graph))}
    record["error"] = {s: max_error(leaves(exported(**copy.deepcopy(kw))), want[s]) for s, kw in sizes.items()}
    path = os.path.join(folder, name)
    exported.save_pretrained(path)
    loaded = ExportedModel.from_pretrained(path)
    assert str(loaded.export_format) == FORMAT, loaded.export_format
    record["reloaded_error"] = max_error(leaves(loaded(**copy.deepcopy(sizes["large"]))), want["large"])
    record["files"] = sorted(os.listdir(path))
    return record


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases")
    p.add_argument("--report", help="write the results as the `backend` section of this report")
    args = p.parse_args()
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    logging.getLogger("torch").setLevel(logging.ERROR)
    import fxonnx.transformers  # noqa: F401 -- registers the backend
    from deploy_cases import CASES, write_section

    names = args.cases.split(",") if args.cases else list(CASES)
    rows, passed, start, files = [], 0, time.perf_counter(), None
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            try:
                r = run_case(name, CASES[name], tmp)
                ok = max(*r["error"].values(), r["reloaded_error"]) < 1e-3
                passed += ok
                files = files or r["files"]
                rows.append(f"| {name} | {r['nodes']} | {r['export_s']:.1f} | {r['error']['small']:.1e} | "
                            f"{r['error']['large']:.1e} | {r['reloaded_error']:.1e} | {'pass' if ok else 'FAIL'} |")
            except Exception as e:  # noqa: BLE001 -- a failing case is a result
                traceback.print_exc()
                rows.append(f"| {name} | — | — | — | — | — | FAIL: {type(e).__name__}: {str(e)[:200]} |")
            print(rows[-1], file=sys.stderr, flush=True)
    total = time.perf_counter() - start
    import transformers as tf

    text = "\n".join([
        "## fxonnx as a transformers exporter backend",
        "",
        f"`python benches/hf_backend.py --report reports/deploy.md` ({total:.0f} s on the shared machine), "
        f"transformers {tf.__version__}: `import fxonnx.transformers` registers the format `\"fxonnx\"` "
        "(`register_backend(FxonnxExporter, OnnxModelRunner)`); `AutoHfExporter.from_config(FxonnxConfig(dynamic=True))` "
        "picks fxonnx's exporter, which captures as `OnnxExporter` does (less the FX rewrites it makes for torch.onnx's "
        "translations) and converts with fxonnx; the "
        "`ExportedModel` runs through transformers' own ONNX runner on the export inputs (small) and on batch 4 × 128 "
        "tokens (large), then is saved with `save_pretrained`, loaded with `ExportedModel.from_pretrained` and run on "
        "the large inputs again. Errors: max abs difference from eager over every output leaf (logits, cache).",
        "",
        f"{passed} of {len(names)} cases pass (every error below 1e-3). `save_pretrained` writes "
        + ", ".join(f"`{f}`" for f in files or []) + ".",
        "",
        "| case | nodes | export s | error small | error large | error after from_pretrained | result |",
        "|---|---:|---:|---:|---:|---:|---|",
        *rows,
    ])
    print(text)
    if args.report:
        write_section(args.report, "backend", text)


if __name__ == "__main__":
    main()
