#!/usr/bin/env python3
"""Record torch.onnx's result on every case of a corpus (torch_onnx_results.jsonl, the shared corpus's fields).

    nice -n 15 PYTHON tests/corpus/torch_onnx.py /work/corpus/opinfo:first /work/corpus/modules:all \
        /work/corpus/opinfo:other [--timeout 180] [--limit N]

Each argument is CORPUS_DIR:SELECTION, done in the order given; SELECTION is `first` (cases `<op>/<k>` and
`<op>/<k>-core`: float32, or the OpInfo's first dtype), `other` (the `<op>/<dtype>-<k>` cases) or `all`.
PYTHON: the venv with torch 2.15, onnx, onnxscript, onnxruntime, ml_dtypes (outside the repo; never in CI).

Per case: torch.export.load(model.pt2), then torch.onnx.export(ep, dynamo=True, opset_version=20) with the
default optimizer, saved to a temporary file; onnx.checker.check_model(path, full_check=True); onnxruntime
(CPU, one thread) on inputs.npz (graph inputs matched to input_i by the program's user-input names, else in
order) against expected.npz with the case's tolerances: same shape and dtype, np.isclose(rtol, atol,
equal_nan=True) for floats, exact for ints and bool (tests/check_onnx.py's compare, so fxonnx's runner and
this script apply one rule). export_cause: the first line of the innermost cause of an export error (torch.onnx's
ConversionError alone says only "Failed to convert ..."). Cases with inputs_alt.npz (dynamic module cases) are also run on those, and pass
only when both sets pass. A checker failure is recorded in ort_error as "checker: ..." (and checker_ok).
Appends one line per case to CORPUS_DIR/torch_onnx_results.jsonl; resumable (cases already there are skipped).
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/: check_onnx.compare
import common as C  # noqa: E402

import numpy as np  # noqa: E402

FIRST = re.compile(r"^\d+(-core)?$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def strip_ansi(text):
    return ANSI.sub("", text)


def select(root, which):
    cases = [r["case"] for r in C.read_jsonl(os.path.join(root, "index.jsonl"))]
    out = []
    for c in cases:
        last = c.rsplit("/", 1)[-1]
        if which == "all" or (which == "first") == bool(FIRST.match(last)):
            out.append(c)
    return out


def run_case(root, case, timeout, tmpdir):
    import onnx
    import onnxruntime as ort
    import torch
    from check_onnx import compare

    d = os.path.join(root, case)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    res = {"case": case, "op": meta["op"], "ir": meta["ir"], "dtype": meta["dtype"],
           "aten_targets": meta["aten_targets"], "exported": False, "export_error_class": None,
           "export_error": None, "ort_ran": False, "ort_error": None, "numerics_ok": None, "passed": False,
           "max_abs_err": None, "checker_ok": None}
    t0 = time.time()
    path = os.path.join(tmpdir, "model.onnx")
    for p in (path, path + ".data"):
        if os.path.exists(p):
            os.remove(p)
    try:
        ep = torch.export.load(os.path.join(d, "model.pt2"))
        user_inputs = list(ep.graph_signature.user_inputs)

        def export():
            prog = torch.onnx.export(ep, (), dynamo=True, opset_version=20, verbose=False)
            prog.save(path)

        C.with_timeout(timeout, export)
        res["exported"] = True
    except Exception as e:  # noqa: BLE001
        res["export_error_class"] = type(e).__name__
        res["export_error"] = strip_ansi(C.first_line(e).split(": ", 1)[-1])
        cause = e
        while cause.__cause__ is not None and cause.__cause__ is not cause:
            cause = cause.__cause__
        if cause is not e:  # torch.onnx's ConversionError says only "Failed to convert ...": the real reason
            res["export_cause"] = strip_ansi(C.first_line(cause))
        res["export_s"] = round(time.time() - t0, 2)
        return res
    res["export_s"] = round(time.time() - t0, 2)

    errors = []
    try:
        onnx.checker.check_model(path, full_check=True)
        res["checker_ok"] = True
    except Exception as e:  # noqa: BLE001
        res["checker_ok"] = False
        errors.append("checker: " + C.first_line(e))

    sets = [("inputs.npz", "expected.npz")]
    if os.path.exists(os.path.join(d, "inputs_alt.npz")):
        sets.append(("inputs_alt.npz", "expected_alt.npz"))
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads, so.log_severity_level = 1, 1, 3
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        model = onnx.load(path, load_external_data=False)
        inits = {t.name for t in model.graph.initializer}
        graph_inputs = [i.name for i in model.graph.input if i.name not in inits]
        onnx_names = [o.name for o in model.graph.output]
        numerics_ok, max_abs = True, []
        for inputs_file, expected_file in sets:
            inputs = C.load_npz(os.path.join(d, inputs_file))
            expected = C.load_npz(os.path.join(d, expected_file))
            arrays = [inputs[f"input_{i}"] for i in range(len(inputs))]
            if all(g in user_inputs for g in graph_inputs):
                feeds = {g: arrays[user_inputs.index(g)] for g in graph_inputs}
            elif len(graph_inputs) == len(arrays):
                feeds = dict(zip(graph_inputs, arrays))
            else:
                raise ValueError(f"{len(arrays)} inputs but the ONNX graph has {len(graph_inputs)}: {graph_inputs}")
            outs = sess.run(None, feeds)
            res["ort_ran"] = True
            n = len([k for k in expected if re.fullmatch(r"output_\d+", k)])
            if len(outs) < n:
                raise ValueError(f"{len(outs)} ONNX outputs, {n} expected")
            for i in range(n):
                tol = meta["tolerances"][i]
                problem, diff = compare(f"output_{i}", onnx_names[i], outs[i], expected[f"output_{i}"],
                                        tol["rtol"], tol["atol"])
                if problem:
                    numerics_ok = False
                    if len(errors) < 3:
                        errors.append(f"numerics ({inputs_file}): {problem}")
                if inputs_file == "inputs.npz":
                    max_abs.append(diff)
        res["numerics_ok"] = numerics_ok
        res["max_abs_err"] = max_abs
    except Exception as e:  # noqa: BLE001
        errors.append(C.first_line(e))
        res["ort_error"] = "; ".join(e for e in errors if not e.startswith("numerics"))[:1000]
    if res["checker_ok"] is False and res["ort_error"] is None:
        res["ort_error"] = "; ".join(e for e in errors if e.startswith("checker"))[:1000]
    if len(sets) > 1:
        res["alt_checked"] = True
    res["passed"] = bool(res["checker_ok"] and res["ort_ran"] and res["numerics_ok"] and res["ort_error"] is None)
    if not res["passed"] and errors:
        res["errors"] = [e[:600] for e in errors]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("passes", nargs="+", help="CORPUS_DIR:first|other|all")
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()

    import logging
    import warnings

    import torch
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    torch.set_num_threads(1)
    t_start = time.time()
    n = 0
    with tempfile.TemporaryDirectory(prefix="torch_onnx_") as tmpdir:
        for spec in args.passes:
            root, which = spec.rsplit(":", 1)
            results_path = os.path.join(root, "torch_onnx_results.jsonl")
            done = {r["case"] for r in C.read_jsonl(results_path)}
            todo = [c for c in select(root, which) if c not in done]
            print(f"[torch_onnx] {root}:{which}: {len(todo)} cases to do", flush=True)
            passed = 0
            for i, case in enumerate(todo):
                try:
                    res = run_case(root, case, args.timeout, tmpdir)
                except Exception as e:  # noqa: BLE001 - e.g. an unreadable case
                    res = {"case": case, "exported": False, "export_error_class": type(e).__name__,
                           "export_error": C.first_line(e), "ort_ran": False, "ort_error": None,
                           "numerics_ok": None, "passed": False, "max_abs_err": None}
                C.append_jsonl(results_path, res)
                passed += res["passed"]
                n += 1
                if i % 50 == 0 or i == len(todo) - 1:
                    print(f"[torch_onnx] {root}:{which}: {i + 1}/{len(todo)}, {passed} passed, "
                          f"{time.time() - t_start:.0f}s", flush=True)
                if args.limit and n >= args.limit:
                    return


if __name__ == "__main__":
    main()
