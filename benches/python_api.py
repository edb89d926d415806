#!/usr/bin/env python3
"""`fxonnx.export(ep)` on the DEV zoo (issue 29): peak memory over the loaded program and time,
against the `fxonnx` CLI on the same program's archive and torch.onnx.export on the same program.

    python benches/python_api.py ZOO_DIR [--runs N] [--out reports/python_api.md]

Needs torch, onnx, onnxruntime and the fxonnx package installed. ZOO_DIR holds the cases of
../shared/tools/zoo.py (each `<case>/model.pt2`). Each measurement runs in a process of its own:

- the program is loaded (`torch.export.load`), the imports warmed up by a tiny export, the
  process's peak RSS reset (`/proc/self/clear_refs`); then `fxonnx.export(ep)` runs, and "peak
  over the loaded program" is VmHWM minus the RSS before it (what the export added at its worst);
- time: median of N runs of `fxonnx.export(ep)` (the model in memory, as torch.onnx returns it),
  and of `fxonnx.export(ep)` + `save` (what the CLI does);
- the CLI: `fxonnx export model.pt2 -o model.onnx -q`, the whole process, median of N, and its
  peak RSS (`/usr/bin/time -f %M`);
- torch.onnx.export(ep, dynamo=True) in the same way (one timed run: it takes seconds), its peak
  over the loaded program measured like fxonnx's.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WORKER = r"""
import gc, json, os, statistics, sys, tempfile, time, warnings
warnings.filterwarnings("ignore")
import torch
case, method, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
ep = torch.export.load(os.path.join(case, "model.pt2"))
weights = sum(t.numel() * t.element_size() for t in list(ep.state_dict.values()) + list(ep.constants.values())
              if isinstance(t, torch.Tensor))
import fxonnx
fxonnx.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),), verbose=False)  # imports warmed up
gc.collect()
open("/proc/self/clear_refs", "w").write("5")
base = rss("VmRSS:")
out = tempfile.mkdtemp()
t0 = time.perf_counter()
if method == "fxonnx":
    program = fxonnx.export(ep, verbose=False)
elif method == "fxonnx_save":
    program = fxonnx.export(ep, verbose=False)
    program.save(os.path.join(out, "model.onnx"))
else:
    program = torch.onnx.export(ep, dynamo=True, verbose=False)
first = time.perf_counter() - t0
peak = rss("VmHWM:") - base
del program
times = [first]
for _ in range(runs - 1):
    gc.collect()
    t0 = time.perf_counter()
    p = fxonnx.export(ep, verbose=False)
    if method == "fxonnx_save":
        p.save(os.path.join(out, "model.onnx"))
    times.append(time.perf_counter() - t0)
    del p
print(json.dumps({"seconds": statistics.median(times), "peak": peak, "weights": weights}))
"""


def worker(case: pathlib.Path, method: str, runs: int) -> dict:
    out = subprocess.run([sys.executable, "-c", WORKER, str(case), method, str(runs)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def cli(case: pathlib.Path, runs: int) -> dict:
    exe = shutil.which("fxonnx") or str(pathlib.Path(sys.executable).parent / "fxonnx")
    times, peaks = [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(runs):
            # /usr/bin/time reports the command's own peak RSS (a child's ru_maxrss would count the
            # pages it shared with this process, torch included, before exec).
            t0 = time.perf_counter()
            out = subprocess.run(["/usr/bin/time", "-f", "%M", exe, "export", str(case / "model.pt2"), "-o",
                                  os.path.join(d, "m.onnx"), "-q", "--force"], capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if out.returncode != 0:
                return {"error": f"exit status {out.returncode}"}
            peaks.append(int(out.stderr.strip().splitlines()[-1]) * 1024)
    return {"seconds": statistics.median(times), "peak": max(peaks)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("zoo", type=pathlib.Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("reports/python_api.md"))
    a = ap.parse_args()
    import torch

    import fxonnx

    rows = []
    for case in sorted(p for p in a.zoo.iterdir() if (p / "model.pt2").exists()):
        fx = worker(case, "fxonnx", a.runs)
        fxs = worker(case, "fxonnx_save", a.runs)
        c = cli(case, a.runs)
        to = worker(case, "torch_onnx", 1)
        rows.append((case.name, fx, fxs, c, to))
        print(case.name, json.dumps([fx, fxs, c, to]), flush=True)

    def ms(r):
        return f"{r['seconds'] * 1e3:.0f}" if "seconds" in r else "fails"

    def mib(b):
        return f"{b / 2**20:.1f}"

    lines = [
        "# fxonnx.export(ep) on the DEV zoo: memory and time",
        "",
        f"Generated by `python benches/python_api.py /work/cache/zoo --runs {a.runs}` (fxonnx {fxonnx.__version__} "
        f"installed with `pip install .`, torch {torch.__version__}, {os.cpu_count()} cores); one process per "
        "measurement (see the script's docstring).",
        "",
        "The program reaches Rust as archive entries in memory (`fxonnx._serialize`): its JSON from torch's graph "
        "serializer and each tensor storage read in place, no `torch.export.save`. **peak over program**: the most "
        "the export added to the process's RSS once the program was loaded (VmHWM − RSS before), next to the "
        "weights' size; **fxonnx.export**: the model in memory (what torch.onnx.export returns), **+ save**: with "
        "`ONNXProgram.save`, what the CLI does; **CLI**: `fxonnx export model.pt2 -o m.onnx`, the whole process. "
        "torch.onnx.export(ep, dynamo=True) on the same program in the same run (one timed run).",
        "",
        "| model | weights (MiB) | fxonnx peak over program (MiB) | % of weights | fxonnx.export (ms) "
        "| + save (ms) | CLI (ms) | (+ save) / CLI | CLI peak RSS (MiB) | torch.onnx peak over program (MiB) "
        "| torch.onnx.export (ms) | torch.onnx / fxonnx.export |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, fx, fxs, c, to in rows:
        if "seconds" not in fx:
            lines.append(f"| {name} | | fails: {fx['error']} | | | | | | | | | |")
            continue
        w = fx["weights"]
        ratio = f"{fxs['seconds'] / c['seconds']:.2f}×" if "seconds" in fxs and "seconds" in c else "–"
        speed = f"{to['seconds'] / fx['seconds']:.0f}×" if "seconds" in to else "–"
        lines.append(
            f"| {name} | {mib(w)} | {mib(fx['peak'])} | {100 * fx['peak'] / w:.1f} % | {ms(fx)} | {ms(fxs)} "
            f"| {ms(c)} | {ratio} | {mib(c['peak']) if 'peak' in c else '–'} "
            f"| {mib(to['peak']) if 'peak' in to else 'fails'} | {ms(to)} | {speed} |"
        )
    # The "Wheels" section (python/release.sh's figures, written by hand) is kept as it is.
    old = a.out.read_text() if a.out.exists() else ""
    kept = old[old.find("\n## Wheels"):] if "\n## Wheels" in old else ""
    a.out.write_text("\n".join(lines) + "\n" + kept)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
