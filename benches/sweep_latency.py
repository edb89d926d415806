#!/usr/bin/env python3
"""sweep_latency.py -- ONNX Runtime latency of fxonnx's and torch.onnx's models, side by side.

    python benches/sweep_latency.py SWEEP_DIR [CASE...] >> reports/sweep.md

SWEEP_DIR is what ../shared/tools/sweep.py writes (onnx-torch/<case>/model.onnx,
onnx-fxonnx/<case>/model.onnx, cases/<case>/inputs.npz). Without CASE, every case both models
pass (results-*.jsonl). Both sessions (CPU, one thread) live in this process and run alternately
(ABAB, then BABA) on the case's inputs, about two seconds each, so that the machine's load hits
both alike; the table gives each median and their ratio. Needs onnxruntime and numpy.
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def passing(d):
    ok = []
    for tool in ("torch", "fxonnx"):
        with open(os.path.join(d, f"results-{tool}.jsonl")) as f:
            ok.append({r["case"] for r in map(json.loads, filter(str.strip, f)) if r.get("all_ok")})
    return sorted(ok[0] & ok[1])


def main():
    d, cases = sys.argv[1], sys.argv[2:] or passing(sys.argv[1])
    print("\n## ONNX Runtime latency, side by side\n")
    print("Both models in one process, run alternately on inputs.npz (`benches/sweep_latency.py`); "
          "medians in ms, 1 thread.\n")
    print("| model | fxonnx ms | torch.onnx ms | fxonnx / torch.onnx |")
    print("|---|---:|---:|---:|")
    ratios = []
    for c in cases:
        with np.load(os.path.join(d, "cases", c, "inputs.npz")) as z:
            inputs = [z[f"input_{i}"] for i in range(len(z.files))]
        sessions = {k: session(os.path.join(d, f"onnx-{k}", c, "model.onnx")) for k in ("fxonnx", "torch")}
        feeds = {k: {i.name: a for i, a in zip(s.get_inputs(), inputs)} for k, s in sessions.items()}
        times = {k: [] for k in sessions}
        t = time.perf_counter()
        sessions["fxonnx"].run(None, feeds["fxonnx"])
        runs = max(5, min(300, int(2.0 / max(time.perf_counter() - t, 1e-4))))
        for r in range(runs):
            for k in (("fxonnx", "torch") if r % 2 == 0 else ("torch", "fxonnx")):
                t = time.perf_counter()
                sessions[k].run(None, feeds[k])
                times[k].append(time.perf_counter() - t)
        m = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        ratios.append(m["fxonnx"] / m["torch"])
        print(f"| {c} | {m['fxonnx']:.3f} | {m['torch']:.3f} | {ratios[-1]:.3f} |", flush=True)
    if ratios:
        print(f"\n{len(ratios)} models: ratio median {statistics.median(ratios):.3f}, "
              f"max {max(ratios):.3f}; {sum(r > 1.1 for r in ratios)} above 1.1.")


if __name__ == "__main__":
    main()
