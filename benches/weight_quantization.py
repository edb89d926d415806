#!/usr/bin/env python3
"""weight_quantization.py -- fxonnx's weight-only quantization for ONNX Runtime (`--quantize int4|int8`,
`com.microsoft.MatMulNBits`): its error against eager and its latency against the unquantized export.

    python benches/weight_quantization.py [--cases llama,llama_decode,qwen3_moe] [--seconds 3]
                                          [--fxonnx target/release/fxonnx] [--out reports/deploy.md]

Per case of benches/deploy_cases.py (tiny random configs): transformers' exporter captures the program
(as in benches/deploy.py), and the fxonnx CLI exports it with `--target onnxruntime` (the anchor) and
with `--quantize int4|int8` at blocks of 32 and 128. Each model runs in ONNX Runtime (CPU, 1 thread)
at the export inputs ("small") and batch 4 x 128 tokens ("large"); the error is the largest absolute
difference from the model run eagerly in torch over all outputs, and, for the logits, relative to the
largest logit; the latency ratio is the median over paired rounds of the quantized model's CPU time
over the anchor's. Writes the `quant` section of --out.
"""

from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = pathlib.Path(__file__).resolve().parent.parent
SETTINGS = [("int4", 32), ("int4", 128), ("int8", 32), ("int8", 128)]


def quantized_export(fxonnx, program, out, inputs, outputs, quantize, block):
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [fxonnx, "export", str(program), "-o", str(out), "-q", "--force", "--target", "onnxruntime",
           "--quantize", quantize, "--quantize-block", str(block)]
    if inputs:
        cmd += ["--input-names", ",".join(inputs)]
    if outputs:
        cmd += ["--output-names", ",".join(outputs)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"fxonnx failed: {run.stderr.strip()[-1000:]}")
    return out


def logits_error(sess, feed, expected) -> float:
    """Largest absolute error of the first output (the logits or last hidden state) over its largest
    magnitude in eager."""
    name = sess.get_outputs()[0].name
    got = sess.run([name], feed)[0].astype(np.float64)
    ref = expected[name.removeprefix("output.")].astype(np.float64)
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))


def run_case(name, case, args, work):
    import torch
    from deploy import eager, feeds, fx_export, hf_export, leaves, max_error, paired, session

    torch.manual_seed(0)
    model = case.build()
    sizes = {s: case.inputs(model, s) for s in ("small", "large")}
    expected = {s: eager(model, kw) for s, kw in sizes.items()}
    values = {s: leaves(kw) for s, kw in sizes.items()}
    folder = work / name
    seen: dict = {}
    hf, _ = hf_export(model, sizes["small"], folder / "hf", False, seen)
    outputs = [o.name for o in session(hf).get_outputs()]
    program = folder / "hf" / "program.pt2"
    paths = {"fx_ort": fx_export(args.fxonnx, program, folder / "fx_ort.onnx", seen.get("input_names"), outputs,
                                 "onnxruntime")[0]}
    for q, b in SETTINGS:
        paths[f"{q}/{b}"] = quantized_export(args.fxonnx, program, folder / f"{q}_{b}.onnx", seen.get("input_names"),
                                             outputs, q, b)
    sessions = {k: session(p) for k, p in paths.items()}
    record = {"case": name, "kind": case.kind, "error": {}, "relative": {}, "ratio": {}, "bytes": {}}
    for k, p in paths.items():
        record["bytes"][k] = sum(f.stat().st_size for f in p.parent.glob(p.name + "*"))
    for size in ("small", "large"):
        feed_of = {k: feeds(s, values[size]) for k, s in sessions.items()}
        for k, s in sessions.items():
            record["error"].setdefault(k, {})[size] = max_error(s, feed_of[k], expected[size])
            record["relative"].setdefault(k, {})[size] = logits_error(s, feed_of[k], expected[size])
        result = paired(sessions, feed_of, args.seconds)
        t = result["times"]
        for k in sessions:
            record["ratio"].setdefault(k, {})[size] = statistics.median(x / y for x, y in zip(t[k], t["fx_ort"]))
    return record


def render(records, meta) -> str:
    lines = ["## Weight-only quantization (`--quantize`)", "",
             f"Measured {meta['date']} by `{meta['command']}` (git {meta['git']}); onnxruntime {meta['ort']}, CPU, "
             "1 thread. Anchor: the same program exported with `--target onnxruntime` (float32 weights). "
             "Error: largest absolute difference from eager over every output; relative: the first output's "
             "(logits, or the last hidden state) largest error over its largest magnitude. Ratio: median over "
             "paired rounds of the quantized model's CPU time over the anchor's. The cases' weights are random "
             "(tiny configs, hidden 128): a trained model's error depends on its weights' spread.", "",
             "| case | setting | file bytes / anchor | small: max error | small: relative | small: time ratio "
             "| large: max error | large: relative | large: time ratio |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in records:
        if "case_error" in r:
            lines.append(f"| {r['case']} | failed: {r['case_error']} |||||||")
            continue
        for k in ["fx_ort"] + [f"{q}/{b}" for q, b in SETTINGS]:
            cells = [r["case"], "float32 (anchor)" if k == "fx_ort" else k, f"{r['bytes'][k] / r['bytes']['fx_ort']:.2f}"]
            for size in ("small", "large"):
                cells += [f"{r['error'][k][size]:.1e}", f"{r['relative'][k][size]:.1e}", f"{r['ratio'][k][size]:.2f}"]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="llama,llama_decode,qwen3,mixtral")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--fxonnx", default=str(ROOT / "target" / "release" / "fxonnx"))
    p.add_argument("--out", default=str(ROOT / "reports" / "deploy.md"))
    args = p.parse_args()
    from deploy import quiet_logs
    from deploy_cases import CASES, write_section

    quiet_logs()
    import onnxruntime

    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    meta = {"date": datetime.date.today().isoformat(), "git": git, "ort": onnxruntime.__version__,
            "command": "python benches/weight_quantization.py " + " ".join(sys.argv[1:])}
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            try:
                records.append(run_case(name, CASES[name], args, pathlib.Path(tmp)))
            except Exception as e:  # noqa: BLE001 -- a failing case is a result
                records.append({"case": name, "case_error": f"{type(e).__name__}: {e}"[:300]})
            print(records[-1], file=sys.stderr, flush=True)
            write_section(args.out, "quant", render(records, meta))


if __name__ == "__main__":
    main()
