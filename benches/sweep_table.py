#!/usr/bin/env python3
"""sweep_table.py -- the per-model table of a sweep folder, appended to its summary.

    python benches/sweep_table.py SWEEP_DIR >> reports/sweep.md

SWEEP_DIR is what ../shared/tools/sweep.py writes (results-torch.jsonl, results-fxonnx.jsonl).
One row per exported case: pass or failure of each exporter, ONNX node counts, ONNX Runtime latency
(median of check_onnx.py's runs, measured one after the other on the same machine, not alternated),
export wall time and peak RSS (torch.onnx: its whole worker process, import and load included, and
the convert + save part alone). Needs only the standard library.
"""
import json
import os
import sys


def load(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    out[r["case"]] = r
    return out


def status(r):
    if r is None:
        return "–"
    if r.get("all_ok"):
        return "pass"
    if not r.get("export_ok"):
        return "no file"
    return "wrong"


def num(v, fmt):
    return format(v, fmt) if isinstance(v, (int, float)) else "–"


def latency(r):
    for key in ("ort_latency_ms_median",):
        if r and isinstance(r.get(key), (int, float)):
            return r[key]
    return None


def main():
    d = sys.argv[1]
    torch, fx = load(os.path.join(d, "results-torch.jsonl")), load(os.path.join(d, "results-fxonnx.jsonl"))
    cases = sorted(set(torch) | set(fx))
    print("\n## Every model, side by side\n")
    print("Latency: ONNX Runtime median ms (1 thread) on inputs.npz, as check_onnx.py measured it after each "
          "conversion (not alternated: a loaded machine skews single rows). Export: fxonnx's process wall time; "
          "torch.onnx's worker wall time (import and load included) / its convert + save.\n")
    print("| model | torch.onnx | fxonnx | nodes torch.onnx / fxonnx | latency ms torch.onnx / fxonnx | "
          "export s torch.onnx / fxonnx | peak RSS MB torch.onnx / fxonnx |")
    print("|---|---|---|---|---|---|---|")
    for c in cases:
        t, f = torch.get(c), fx.get(c)
        nodes = f"{num(t and t.get('onnx_nodes'), 'd')} / {num(f and f.get('onnx_nodes'), 'd')}"
        lat = f"{num(latency(t), '.2f')} / {num(latency(f), '.2f')}"
        ex = (f"{num(t and t.get('worker_wall_s'), '.1f')} ({num(t and t.get('export_s'), '.2f')}) / "
              f"{num(f and f.get('wall_s'), '.3f')}")
        rss = f"{num(t and t.get('peak_rss_mb'), '.0f')} / {num(f and f.get('peak_rss_mb'), '.0f')}"
        print(f"| {c} | {status(t)} | {status(f)} | {nodes} | {lat} | {ex} | {rss} |")


if __name__ == "__main__":
    main()
