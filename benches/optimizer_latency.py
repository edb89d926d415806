#!/usr/bin/env python3
"""The optimizer side by side with torch.onnx's, on every model of a zoo folder.

    python benches/optimizer_latency.py ZOO_DIR CHECK_ONNX_PY [--torch-python PY] [--fxonnx BIN]
                                        [--runs 100] [--rounds 5] [--exports 7]
                                        [--out reports/optimizer.md] [--work DIR]

For each case (ZOO_DIR/<case>/model.pt2 with its input sets) it makes three models:
  - fxonnx --no-optimize,
  - fxonnx (optimized), exported --exports times to time its stages,
  - torch.onnx.export(torch.export.load(pt2), dynamo=True) with its default optimizer (needs a
    Python with torch: --torch-python; files are cached in --work),
then runs the shared checker (CHECK_ONNX_PY: onnx.checker, ONNX Runtime numerics on both input
sets, node counts) on each. Latency: both models are loaded in this process (ONNX Runtime CPU,
one thread) and run alternately on the case's inputs (ABAB ..., then BABA ... in the next round, with
fresh sessions created in the same flipped order), so that load from other processes on the machine
and the placement of each session's memory hit both alike; each round gives a median per model,
and the table shows the median over rounds and the range of the per-round ratio fxonnx / torch.onnx
(the run-to-run noise: identical graphs straddle 1.0).

Optimize share: the optimized model is exported --exports times; each run's stage times come from
the CLI's stderr lines (`[fxonnx] <stage>: ok (<ms> ms)`); the table gives the median share and the
largest.

Writes a markdown table to --out and the raw JSON lines next to it (.jsonl).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

TORCH_EXPORT = """
import sys, torch
ep = torch.export.load(sys.argv[1])
torch.onnx.export(ep, dynamo=True, optimize=True).save(sys.argv[2])
"""


def run_checker(py, checker, onnx_path, case_dir, runs, label):
    out = subprocess.run([py, checker, onnx_path, case_dir, "--runs", str(runs), "--label", label],
                         capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return {"all_ok": False, "error": (out.stderr or out.stdout).strip()[-400:]}
    return json.loads(lines[-1])


def ab_latency(path_a, path_b, case_dir, runs, rounds):
    """Per round, the median ms of A and of B, run alternately in this process."""
    import statistics
    import numpy as np
    import onnxruntime as ort

    inputs = dict(np.load(os.path.join(case_dir, "inputs.npz")))

    def session(path):
        o = ort.SessionOptions()
        o.intra_op_num_threads = 1
        o.inter_op_num_threads = 1
        s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
        names = [i.name for i in s.get_inputs()]
        feed = {k: inputs[k] for k in names} if all(k in inputs for k in names) else dict(zip(names, inputs.values()))
        return s, feed

    def timed(s, f):
        t = time.perf_counter()
        s.run(None, f)
        return time.perf_counter() - t

    per_round = []
    for r in range(rounds):
        # Fresh sessions each round, created and run in flipped order: with one pair of sessions,
        # the first one created ran ~1.5 % slower than the second even for two copies of one model
        # (memory placement), which read as a latency difference between identical graphs.
        if r % 2 == 0:
            (sa, fa), (sb, fb) = session(path_a), session(path_b)
        else:
            (sb, fb), (sa, fa) = session(path_b), session(path_a)
        warm = time.perf_counter()
        for _ in range(3):
            sa.run(None, fa)
            sb.run(None, fb)
        # Slow models (ViT-B/16: 0.8 s a run) get fewer runs: about 3 s per model and round.
        n = max(15, min(runs, int(3.0 / ((time.perf_counter() - warm) / 6))))
        ta, tb = [], []
        for _ in range(n):
            if r % 2 == 0:
                ta.append(timed(sa, fa))
                tb.append(timed(sb, fb))
            else:
                tb.append(timed(sb, fb))
                ta.append(timed(sa, fa))
        per_round.append((statistics.median(ta) * 1e3, statistics.median(tb) * 1e3))
        del sa, sb
    return per_round


STAGE_LINE = re.compile(r"^\[fxonnx\] (.+?): ok \(([0-9.]+) ms\)", re.M)


def export_shares(fxonnx, pt2, out, n):
    """Optimize share of the export, per run: (optimize ms, total ms of all stages)."""
    shares = []
    for _ in range(n):
        r = subprocess.run([fxonnx, "export", pt2, "-o", out], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip()[-300:])
        times = {m.group(1): float(m.group(2)) for m in STAGE_LINE.finditer(r.stderr)}
        opt = next(v for k, v in times.items() if k.lower().startswith("optimize"))
        shares.append((opt, sum(times.values())))
    return shares


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("zoo")
    ap.add_argument("checker")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--fxonnx", default=os.path.join(here, "..", "target", "release", "fxonnx"))
    ap.add_argument("--torch-python", default=None, help="a Python with torch, to make torch.onnx's models")
    ap.add_argument("--runs", type=int, default=100, help="alternating latency runs per model and round")
    ap.add_argument("--rounds", type=int, default=5, help="latency rounds (the noise estimate)")
    ap.add_argument("--exports", type=int, default=7, help="timed exports per model (optimize share)")
    ap.add_argument("--work", default="/tmp/fxonnx_optimizer_bench")
    ap.add_argument("--out", default=os.path.join(here, "..", "reports", "optimizer.md"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    py = sys.executable
    cases = sorted(d for d in os.listdir(args.zoo) if os.path.exists(os.path.join(args.zoo, d, "model.pt2")))
    rows = []
    for c in cases:
        case_dir = os.path.join(args.zoo, c)
        pt2 = os.path.join(case_dir, "model.pt2")
        row = {"case": c}
        paths = {k: os.path.join(args.work, f"{c}.{k}.onnx") for k in ("unopt", "opt", "torch")}
        r = subprocess.run([args.fxonnx, "export", pt2, "-o", paths["unopt"], "--no-optimize", "-q"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            row["error"] = "fxonnx --no-optimize: " + r.stderr.strip()[-300:]
            rows.append(row)
            continue
        try:
            runs = export_shares(args.fxonnx, pt2, paths["opt"], args.exports)
        except RuntimeError as e:
            row["error"] = f"fxonnx: {e}"
            rows.append(row)
            continue
        row["export_runs"] = runs
        shares = sorted(o / t for o, t in runs)
        row["optimize_share_median"] = statistics.median(shares)
        row["optimize_share_max"] = shares[-1]
        row["optimize_ms"] = statistics.median(o for o, _ in runs)
        row["export_ms"] = statistics.median(t for _, t in runs)
        if args.torch_python and not os.path.exists(paths["torch"]):
            t = time.perf_counter()
            r = subprocess.run([args.torch_python, "-c", TORCH_EXPORT, pt2, paths["torch"]], capture_output=True, text=True)
            row["torch_export_s"] = time.perf_counter() - t
            if r.returncode != 0:
                row["torch_error"] = r.stderr.strip()[-300:]
        row["unopt"] = run_checker(py, args.checker, paths["unopt"], case_dir, 5, "fxonnx --no-optimize")
        have_torch = os.path.exists(paths["torch"])
        row["opt"] = run_checker(py, args.checker, paths["opt"], case_dir, 1, "fxonnx")
        if have_torch:
            row["torch"] = run_checker(py, args.checker, paths["torch"], case_dir, 1, "torch.onnx")
            rounds = ab_latency(paths["opt"], paths["torch"], case_dir, args.runs, args.rounds)
            row["latency_rounds"] = rounds
            row["opt"]["latency_ms"] = statistics.median(a for a, _ in rounds)
            row["torch"]["latency_ms"] = statistics.median(b for _, b in rounds)
            ratios = [a / b for a, b in rounds]
            row["latency_ratio"] = (statistics.median(ratios), min(ratios), max(ratios))
            # The noise floor: the same harness on fxonnx's model against itself.
            control = [a / b for a, b in ab_latency(paths["opt"], paths["opt"], case_dir, args.runs, args.rounds)]
            row["control_ratio"] = (statistics.median(control), min(control), max(control))
        rows.append(row)
        print(json.dumps({k: (v if not isinstance(v, dict) else {kk: v.get(kk) for kk in ("onnx_nodes", "all_ok", "latency_ms", "error")}) for k, v in row.items()}), flush=True)

    with open(os.path.splitext(args.out)[0] + ".jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    write_markdown(rows, args)


def fmt(x, spec="{:.2f}"):
    return "–" if x is None else spec.format(x)


def write_markdown(rows, args):
    lines = [
        "# Optimizer: fxonnx vs torch.onnx",
        "",
        "Made by `benches/optimizer_latency.py` (`python benches/optimizer_latency.py ZOO tools/check_onnx.py"
        " --torch-python PY`). Node counts are main-graph nodes as the shared checker counts them; torch.onnx"
        " is `torch.onnx.export(torch.export.load(pt2), dynamo=True)` with its default optimizer, opset 20."
        " Latency: ONNX Runtime CPU, one thread, both models in one process run alternately on the case's"
        f" inputs, {args.rounds} rounds of {args.runs} runs each (at least 15, fewer when a run takes over 30 ms;"
        " fresh sessions every round, created and run in an order that flips every round); the times are"
        " medians over rounds of each round's median, and the ratio column gives fxonnx / torch.onnx as the"
        " median over rounds with its range; the control column runs fxonnx's model against itself through the"
        " same harness: the noise floor. `ok`: onnx.checker and numerics on both input"
        " sets within the case's tolerances (shared checker). Optimize share: the optimize stage over the sum"
        f" of all export stages, from the CLI's stage times, {args.exports} exports: median (largest).",
        "",
        "| model | fxonnx unoptimized | fxonnx optimized | torch.onnx | ok (unopt / opt / torch) "
        "| latency fxonnx (ms) | latency torch.onnx (ms) | ratio (range) | control: fxonnx / itself (range) "
        "| optimize (ms) | export total (ms) | optimize share |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['error']} | | | | | | | | | | |")
            continue
        u, o, t = r.get("unopt", {}), r.get("opt", {}), r.get("torch", {})
        ok = " / ".join("yes" if x.get("all_ok") else ("–" if not x else "NO") for x in (u, o, t))
        ratio = r.get("latency_ratio")
        ratio_s = f"{ratio[0]:.3f} ({ratio[1]:.3f}–{ratio[2]:.3f})" if ratio else "–"
        control = r.get("control_ratio")
        control_s = f"{control[0]:.3f} ({control[1]:.3f}–{control[2]:.3f})" if control else "–"
        share = f"{r['optimize_share_median'] * 100:.1f} % ({r['optimize_share_max'] * 100:.1f} %)"
        lines.append(
            f"| {r['case']} | {fmt(u.get('onnx_nodes'), '{}')} | {fmt(o.get('onnx_nodes'), '{}')} "
            f"| {fmt(t.get('onnx_nodes'), '{}')} | {ok} | {fmt(o.get('latency_ms'))} | {fmt(t.get('latency_ms'))} "
            f"| {ratio_s} | {control_s} | {fmt(r.get('optimize_ms'))} | {fmt(r.get('export_ms'))} | {share} |"
        )
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
