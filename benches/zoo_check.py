#!/usr/bin/env python3
"""Export every case of a model-zoo folder with fxonnx and check it with the shared checker.

    python benches/zoo_check.py ZOO_DIR CHECK_ONNX_PY [--fxonnx target/release/fxonnx] [--out reports/zoo.md]

ZOO_DIR is what `tools/zoo.py export --out ZOO_DIR` writes. CHECK_ONNX_PY is the shared
`tools/check_onnx.py`, which runs onnx.checker, ONNX Runtime on both input sets (original and
alternative dynamic sizes), and measures latency. Then every dynamic model is checked at the
example size, the alternative size and the edges of its range constraints (benches/sizes.py, which
needs torch: the ExportedProgram is the reference at the edges); `--no-sizes` skips that, and then
this script needs only onnx, onnxruntime and numpy. The table goes to reports/zoo.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def sizes_ok(rec: dict) -> bool:
    return "error" not in rec and rec.get("ok", True)


def sizes_cell(rec) -> str:
    """benches/sizes.py's record of a case as a table cell: sizes right / checked and the worst ratio."""
    if rec is None:
        return "not checked"
    if "error" in rec:
        return "error: " + rec["error"].replace("|", "/")[:120]
    if rec.get("static"):
        return "static"
    checked = [s for s in rec["sizes"] if "ok" in s]
    right = sum(1 for s in checked if s["ok"])
    worst = max((s.get("tol_ratio", 0.0) for s in checked), default=0.0)
    refused = sum(1 for s in rec["sizes"] if "refused_by_program" in s)
    skipped = sum(1 for s in rec["sizes"] if "skipped" in s)
    return (f"{right}/{len(checked)} (worst tol ratio {worst:.2g})"
            + (f", {refused} torch refuses to run" if refused else "")
            + (f", {skipped} skipped as too large" if skipped else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("zoo")
    ap.add_argument("checker")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--fxonnx", default=os.path.join(here, "..", "target", "release", "fxonnx"))
    ap.add_argument("--out", default=os.path.join(here, "..", "reports", "zoo.md"))
    ap.add_argument("--no-sizes", action="store_true", help="skip the range edges (no torch needed)")
    args = ap.parse_args()
    sizes, checker = None, None
    if not args.no_sizes:
        sys.path.insert(0, here)
        import sizes
        import torch
        torch.set_num_threads(1)
        checker = sizes.load_checker(args.checker)
    cases = sorted(d for d in os.listdir(args.zoo) if os.path.exists(os.path.join(args.zoo, d, "model.pt2")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in cases:
            onnx_path = os.path.join(tmp, c + ".onnx")
            t = time.perf_counter()
            r = subprocess.run([args.fxonnx, "export", os.path.join(args.zoo, c, "model.pt2"), "-o", onnx_path],
                               capture_output=True, text=True)
            export_s = time.perf_counter() - t
            if r.returncode != 0:
                rows.append({"case": c, "error": r.stderr.strip().splitlines()[0]})
                continue
            out = subprocess.run([sys.executable, args.checker, onnx_path, os.path.join(args.zoo, c)],
                                 capture_output=True, text=True)
            d = json.loads(out.stdout.strip().splitlines()[-1])
            d["export_s"] = export_s
            if sizes is not None:
                try:
                    d["sizes"] = sizes.check_case(os.path.join(args.zoo, c), args.fxonnx, None, checker, onnx_path)
                except Exception as e:  # noqa: BLE001 -- recorded as the case's failure
                    d["sizes"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
                d["all_ok"] = d.get("all_ok") and sizes_ok(d["sizes"])
            rows.append(d)
            print(json.dumps({k: d.get(k) for k in ("case", "all_ok", "onnx_nodes", "max_abs_err", "alt_max_abs_err")}), flush=True)
    lines = [
        "# Model zoo (DEV): fxonnx exports checked with tools/check_onnx.py",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} by `benches/zoo_check.py` ({os.cpu_count()} cores). `ok` means "
        "onnx.checker (full) passed and ONNX Runtime matched the eager outputs within the case's tolerance on both "
        "input sets (the second with other dynamic sizes). *Every size in range*: sizes right / sizes checked by "
        "`benches/sizes.py` (example, alternative, range edges; [sizes.md](sizes.md)). `ok` now also requires every "
        "size in range.",
        "",
        "| model | ok | export s | ONNX nodes | max abs err | alt max abs err | every size in range | ORT latency ms |",
        "|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for d in rows:
        if "error" in d:
            lines.append(f"| {d['case']} | export failed: {d['error']} | | | | | | |")
            continue
        lines.append(
            f"| {d['case']} | {'yes' if d.get('all_ok') else 'NO'} | {d['export_s']:.3f} | {d.get('onnx_nodes')} "
            f"| {d.get('max_abs_err', 0):.2e} | {d.get('alt_max_abs_err', 0):.2e} | {sizes_cell(d.get('sizes'))} "
            f"| {d.get('ort_latency_ms_median', 0):.1f} |"
        )
    passed = sum(1 for d in rows if d.get("all_ok"))
    lines += ["", f"{passed}/{len(rows)} models pass.", ""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    sys.exit(0 if passed == len(rows) else 1)


if __name__ == "__main__":
    main()
