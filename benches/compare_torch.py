#!/usr/bin/env python3
"""Side by side: torch.onnx.export(dynamo=True) and `fxonnx export` on the same .pt2 archives.

Needs a Python with torch, onnx, onnxscript (never part of the build or tests):

    python benches/compare_torch.py ZOO_DIR [--fxonnx target/release/fxonnx] [--runs 3]

ZOO_DIR holds case folders with a model.pt2 each (`tools/zoo.py export --out ZOO_DIR`). For every
case, each converter runs in fresh child processes, `--runs` times; the table reports the median
conversion time and the largest peak RSS:

- torch.onnx: the time of `torch.onnx.export(ep, dynamo=True)` on the program already loaded with
  `torch.export.load` (what torch.onnx's own conversion costs; loading and `import torch` are not
  counted in time, but are in memory, as they are part of any torch.onnx run);
- fxonnx: the whole `fxonnx export model.pt2 -o out.onnx` process (reading the archive included).

fxonnx's time includes writing the .onnx file and torch.onnx's conversion time does not, so a second
ratio compares equal work: torch.onnx's conversion plus `ONNXProgram.save` (the file a user of
`torch.onnx.export(..., "model.onnx", dynamo=True)` gets) against the same fxonnx run.

How peak memory is measured. Linux starts every exec'd process with a fresh `VmHWM` (peak RSS of
its own address space), but the `ru_maxrss` that wait4 reports for a child is at least the RSS
high-water mark of the process it was forked from: a parent that imported onnx and loaded models
(~190 MB) floored every fxonnx figure at its own size. So:

- the parent stays small: it imports neither torch nor onnx; ONNX node counts come from a child;
- torch.onnx's child reads its own `VmHWM` from /proc/self/status after saving (exact);
- fxonnx runs once more, without timing, under GNU `/usr/bin/time -f %M`, a ~2 MB C program whose
  child's `ru_maxrss` is exact above ~2 MB. Without GNU time, wait4's `ru_maxrss` of the timed runs
  is used, floored at this script's own peak RSS (printed in the report).

The results replace the "Zoo" section of reports/performance.md (other sections are kept).
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BEGIN = "<!-- zoo side-by-side: begin (benches/compare_torch.py) -->"
END = "<!-- zoo side-by-side: end -->"

TORCH_CHILD = r"""
import sys, time, json, warnings
warnings.filterwarnings("ignore")
import torch
ep = torch.export.load(sys.argv[1])
t = time.perf_counter()
prog = torch.onnx.export(ep, dynamo=True, verbose=False)
elapsed = time.perf_counter() - t
prog.save(sys.argv[2])
saved = time.perf_counter() - t
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
print(json.dumps({"seconds": elapsed, "saved_seconds": saved, "nodes": len(prog.model_proto.graph.node),
                  "hwm_kib": int(hwm[0].split()[1]) if hwm else None}))
"""

# Counted in a child so that this process never imports onnx (its RSS would floor the children's).
NODES_CHILD = r"""
import sys, onnx
print(len(onnx.load(sys.argv[1], load_external_data=False).graph.node))
"""


def run_timed(argv):
    """Run argv and wait for it with wait4, keeping its rusage (Popen.wait would discard it)."""
    # Each timed run starts with no dirty pages left by the previous one (a saved model is
    # hundreds of MB): otherwise the kernel's writeback of one tool's file lands in the next run.
    os.sync()
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, out.decode(), wall, usage.ru_maxrss / 1024.0


def gnu_time():
    """GNU time, if installed (it prints the child's peak RSS in KiB with -f %M)."""
    path = "/usr/bin/time" if os.path.exists("/usr/bin/time") else shutil.which("time")
    if not path:
        return None
    p = subprocess.run([path, "-f", "%M", "true"], capture_output=True, text=True)
    return path if p.returncode == 0 and p.stderr.strip().isdigit() else None


def onnx_nodes(path):
    p = subprocess.run([sys.executable, "-c", NODES_CHILD, path], capture_output=True, text=True)
    return int(p.stdout.strip()) if p.returncode == 0 and p.stdout.strip().isdigit() else None


def measure(case_dir, fxonnx, runs, tmp, time_cmd):
    pt2 = os.path.join(case_dir, "model.pt2")
    name = os.path.basename(case_dir.rstrip("/"))
    row = {"model": name}
    t_times, t_saved, t_rss, f_times, f_rss = [], [], [], [], []
    for i in range(runs):
        out = os.path.join(tmp, f"{name}.torch.onnx")
        code, stdout, _, rss = run_timed([sys.executable, "-c", TORCH_CHILD, pt2, out])
        if code != 0:
            row["torch_error"] = f"exit {code}"
            break
        info = json.loads(stdout.strip().splitlines()[-1])
        t_times.append(info["seconds"])
        t_saved.append(info["saved_seconds"])
        t_rss.append(info["hwm_kib"] / 1024.0 if info.get("hwm_kib") else rss)
        row["torch_nodes"] = info["nodes"]
    out = os.path.join(tmp, f"{name}.fxonnx.onnx")
    for i in range(runs):
        # Every run writes a new file, like torch.onnx's save: replacing the previous output
        # would add the kernel's freeing of its pages to the timed run.
        for old in (out, out + ".data"):
            if os.path.exists(old):
                os.remove(old)
        code, _, wall, rss = run_timed([fxonnx, "export", pt2, "-o", out, "-q"])
        if code != 0:
            row["fxonnx_error"] = f"exit {code}"
            break
        f_times.append(wall)
        f_rss.append(rss)
    if f_times and time_cmd:
        # One more run for memory only: GNU time's child starts from time's own small RSS.
        p = subprocess.run([time_cmd, "-f", "%M", fxonnx, "export", pt2, "-o", out, "-q"], capture_output=True, text=True)
        last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
        if p.returncode == 0 and last.isdigit():
            f_rss = [int(last) / 1024.0]
    if f_times:
        row["fxonnx_nodes"] = onnx_nodes(out)
    if t_times:
        row["torch_s"], row["torch_mb"] = statistics.median(t_times), max(t_rss)
        row["torch_saved_s"] = statistics.median(t_saved)
    if f_times:
        row["fxonnx_s"], row["fxonnx_mb"] = statistics.median(f_times), max(f_rss)
    return row


def fmt(row, key, spec):
    return format(row[key], spec) if key in row else "–"


def render(rows, runs, mem_method, parent_mb):
    lines = [
        BEGIN,
        "## Zoo: fxonnx vs torch.onnx, side by side",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores, {runs} run(s) each in fresh processes "
        "(median time, largest peak RSS). torch.onnx: `torch.onnx.export(torch.export.load(pt2), dynamo=True)` "
        "(conversion only; peak RSS includes `import torch`). fxonnx: the whole `fxonnx export` process, "
        "which includes writing the .onnx file; the last two time columns compare that equal work: torch.onnx's "
        "conversion plus `ONNXProgram.save`.",
        "",
        f"Peak RSS: torch.onnx's child reads its own `VmHWM`; fxonnx's is {mem_method}. "
        f"The measuring script imports neither torch nor onnx (its own peak RSS: {parent_mb:.0f} MB), "
        "because wait4's `ru_maxrss` of a child is at least the RSS of the process it was forked from.",
        "",
        "| model | torch.onnx s | fxonnx s | speed-up | torch.onnx peak MB | fxonnx peak MB | memory ratio | torch.onnx nodes | fxonnx nodes | torch.onnx + save s | speed-up, both writing the file |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        speed = f"{r['torch_s'] / r['fxonnx_s']:.0f}×" if "torch_s" in r and "fxonnx_s" in r else "–"
        mem = f"{r['torch_mb'] / r['fxonnx_mb']:.1f}×" if "torch_mb" in r and "fxonnx_mb" in r else "–"
        saved = f"{r['torch_saved_s'] / r['fxonnx_s']:.0f}×" if "torch_saved_s" in r and "fxonnx_s" in r else "–"
        t_s = fmt(r, "torch_s", ".2f") if "torch_error" not in r else f"fails ({r['torch_error']})"
        f_s = fmt(r, "fxonnx_s", ".3f") if "fxonnx_error" not in r else f"fails ({r['fxonnx_error']})"
        lines.append(
            f"| {r['model']} | {t_s} | {f_s} | {speed} | {fmt(r, 'torch_mb', '.0f')} | {fmt(r, 'fxonnx_mb', '.0f')} "
            f"| {mem} | {r.get('torch_nodes', '–')} | {r.get('fxonnx_nodes', '–')} "
            f"| {fmt(r, 'torch_saved_s', '.2f')} | {saved} |"
        )
    lines += ["", END]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("zoo")
    ap.add_argument("--fxonnx", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "fxonnx"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--report", default=os.path.join(os.path.dirname(__file__), "..", "reports", "performance.md"))
    args = ap.parse_args()
    cases = sorted(d for d in os.listdir(args.zoo) if os.path.exists(os.path.join(args.zoo, d, "model.pt2")))
    if args.only:
        cases = [c for c in cases if c in args.only.split(",")]
    rows = []
    time_cmd = gnu_time()
    mem_method = (
        "the `ru_maxrss` GNU `time -f %M` reports for it (one extra, untimed run)"
        if time_cmd
        else "wait4's `ru_maxrss` (no GNU time here: figures below the script's own peak RSS are floored at it)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for c in cases:
            row = measure(os.path.join(args.zoo, c), args.fxonnx, args.runs, tmp, time_cmd)
            print(json.dumps(row), flush=True)
            rows.append(row)
    parent_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    section = render(rows, args.runs, mem_method, parent_mb)
    old = open(args.report).read() if os.path.exists(args.report) else "# Performance\n\n"
    if BEGIN in old and END in old:
        new = old[: old.index(BEGIN)] + section + old[old.index(END) + len(END) + 1 :]
    else:
        new = old.rstrip("\n") + "\n\n" + section
    with open(args.report, "w") as f:
        f.write(new)


if __name__ == "__main__":
    main()
