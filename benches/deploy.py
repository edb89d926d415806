#!/usr/bin/env python3
"""deploy.py -- the models people deploy: fxonnx against transformers' own ONNX exporter, in ONNX
Runtime on the CPU.

    python benches/deploy.py [--cases bert,llama_decode] [--seconds 3] [--fxonnx target/release/fxonnx]
                             [--out reports/deploy.md] [--json reports/deploy.json] [--work DIR]
    python benches/deploy.py --render reports/deploy.json --out reports/deploy.md

Each case of benches/deploy_cases.py (tiny random transformers configs) is exported by
`transformers.exporters.OnnxExporter` (torch.onnx inside) with `OnnxConfig(dynamic=True)`, plain
and with `ort_fusions="cpu"`; the program HF's exporter captures is saved with `torch.export.save` as its
capture returns it (before the FX rewrites OnnxExporter makes for torch.onnx's translations), and
the fxonnx CLI converts that same program, given HF's input and output names (`fxonnx export program.pt2 -o model.onnx --input-names ...
--output-names ...`). When `fxonnx export --help` lists `--target`, fxonnx's ONNX Runtime target
(`--target onnxruntime`) is a fourth candidate.

Every candidate runs in ONNX Runtime (CPU, 1 intra-op and 1 inter-op thread, default graph
optimizations) at two sizes: the export inputs ("small") and batch 4 x 128 tokens ("large"),
each output compared with the model run eagerly in torch. Latency: all sessions live in this
process and run in rounds, one run of each per round in an order that rotates from round to round,
for `--seconds` (of CPU time) per size, at least 15 rounds. A run's time is the CPU time of the
calling thread, on which ONNX Runtime computes with one thread: on a shared machine the wall time
also counts the time other processes hold the core (8x the CPU time at a load of 14 on 2 cores),
the thread's CPU time does not (cache and memory-bandwidth contention still reach it). A ratio is
the median over rounds of the two candidates' times in the same round, so that what load remains
hits both alike. The load average before and after each case is recorded with it, and the wall
times too (reports/deploy.json).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = pathlib.Path(__file__).resolve().parent.parent
ANCHORS = ("hf", "hf_fused")
LABEL = {"hf": "HF plain", "hf_fused": "HF + ort_fusions=\"cpu\"", "fx": "fxonnx", "fx_ort": "fxonnx --target onnxruntime"}


def quiet_logs():
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    os.environ.setdefault("TORCH_LOGS", "-all")
    import transformers

    transformers.logging.set_verbosity_error()
    logging.getLogger("torch").setLevel(logging.ERROR)


@contextlib.contextmanager
def capture_program(folder: pathlib.Path, seen: dict):
    """While HF's exporter runs: the program it captured, saved as a .pt2 archive as its
    `DynamoExporter` capture returns it (within OnnxExporter's ONNX patches and flattened outputs,
    before the FX rewrites that work around torch.onnx's translations and leave nodes without the
    metadata torch.export.save needs), and the input names it hands to torch.onnx.export."""
    import torch
    from transformers.exporters.exporter_dynamo import DynamoExporter

    capture, convert = DynamoExporter.export_program, torch.onnx.export

    def captured(self, *args, **kwargs):
        program, metadata = capture(self, *args, **kwargs)
        torch.export.save(program, str(folder / "program.pt2"))
        return program, metadata

    def converting(program, *args, **kwargs):
        seen["input_names"] = list(kwargs.get("input_names") or [])
        return convert(program, *args, **kwargs)

    DynamoExporter.export_program, torch.onnx.export = captured, converting
    try:
        yield
    finally:
        DynamoExporter.export_program, torch.onnx.export = capture, convert


def hf_export(model, inputs, folder: pathlib.Path, fused: bool, seen: dict | None):
    """HF's OnnxExporter on `inputs`; the model saved as HF saves it (weights in model.onnx.data)."""
    from transformers.exporters import OnnxConfig, OnnxExporter

    folder.mkdir(parents=True, exist_ok=True)
    config = OnnxConfig(dynamic=True, ort_fusions="cpu" if fused else None)
    start = time.perf_counter()
    with capture_program(folder, seen) if seen is not None else contextlib.nullcontext():
        exported = OnnxExporter().export(model, copy.deepcopy(inputs), config)
    seconds = time.perf_counter() - start
    path = folder / "model.onnx"
    OnnxExporter.save_program(exported.program, path)
    return path, seconds


def fx_export(fxonnx: str, program: pathlib.Path, out: pathlib.Path, input_names, output_names, target=None):
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [fxonnx, "export", str(program), "-o", str(out), "-q", "--force"]
    if input_names:
        cmd += ["--input-names", ",".join(input_names)]
    if output_names:
        cmd += ["--output-names", ",".join(output_names)]
    if target:
        cmd += ["--target", target]
    start = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"fxonnx failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    return out, time.perf_counter() - start


def session(path):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def node_count(path) -> int:
    import onnx

    return len(onnx.load(str(path), load_external_data=False).graph.node)


def leaves(kwargs) -> dict:
    """Tensor leaves by HF's dotted path (`past_key_values.layers.0.keys`), as numpy arrays."""
    from transformers.exporters.utils import get_leaf_tensors

    return {k: v.detach().cpu().numpy() for k, v in get_leaf_tensors(kwargs).items()}


def eager(model, kwargs) -> dict:
    """The model's output leaves by dotted path, as HF's exporter names the graph outputs."""
    import torch
    from transformers.exporters.utils import duplicate_leaf_tensors, get_leaf_tensors

    with torch.no_grad():
        out = model(**copy.deepcopy(kwargs))
    return {k: v.detach().cpu().numpy() for k, v in get_leaf_tensors(duplicate_leaf_tensors(out)).items()}


def feeds(sess, values: dict) -> dict:
    """The session's inputs by name (a mutated input's name has an `input.` prefix)."""
    out = {}
    for i in sess.get_inputs():
        path = i.name.removeprefix("input.")
        if path not in values:
            raise KeyError(f"no value for input {i.name}")
        out[i.name] = values[path]
    return out


def max_error(sess, feed, expected: dict) -> float:
    names = [o.name for o in sess.get_outputs()]
    got = sess.run(None, feed)
    worst = 0.0
    for name, value in zip(names, got):
        ref = expected.get(name.removeprefix("output."))
        if ref is None:
            continue
        if ref.shape != value.shape:
            return float("inf")
        if ref.size:
            worst = max(worst, float(np.max(np.abs(value.astype(np.float64) - ref.astype(np.float64)))))
    return worst


def paired(sessions: dict, feed_of: dict, seconds: float) -> dict:
    """Per candidate and round, the CPU time of this thread and the wall time of one run; rounds
    rotate the order. With one intra-op and one inter-op thread ONNX Runtime computes on the
    calling thread (its process and thread CPU times agree), so the thread's CPU time leaves out
    the time other processes hold the cores; the wall time is kept for reference."""
    names = list(sessions)
    for _ in range(3):
        for n in names:
            sessions[n].run(None, feed_of[n])
    one = {}
    for n in names:
        start = time.thread_time()
        sessions[n].run(None, feed_of[n])
        one[n] = time.thread_time() - start
    rounds = int(max(15, min(400, seconds / max(sum(one.values()), 1e-5))))
    cpu = {n: [] for n in names}
    wall = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        if (r // len(names)) % 2:
            order.reverse()
        for n in order:
            w, c = time.perf_counter(), time.thread_time()
            sessions[n].run(None, feed_of[n])
            cpu[n].append(time.thread_time() - c)
            wall[n].append(time.perf_counter() - w)
    return {"rounds": rounds, "times": cpu, "wall": wall}


def ratio(result: dict, a: str, b: str) -> float | None:
    t = result["times"]
    if a not in t or b not in t:
        return None
    return statistics.median(x / y for x, y in zip(t[a], t[b]))


def has_target(fxonnx: str) -> bool:
    run = subprocess.run([fxonnx, "export", "--help"], capture_output=True, text=True)
    return "--target" in run.stdout


def run_case(name: str, case, args, work: pathlib.Path, target: bool) -> dict:
    import torch

    record: dict = {"case": name, "kind": case.kind, "load_before": os.getloadavg()[0]}
    torch.manual_seed(0)
    model = case.build()
    sizes = {s: case.inputs(model, s) for s in ("small", "large")}
    expected = {s: eager(model, kw) for s, kw in sizes.items()}
    values = {s: leaves(kw) for s, kw in sizes.items()}
    folder = work / name
    paths, seen = {}, {}
    record["export_s"] = {}
    for key, fused in (("hf", False), ("hf_fused", True)):
        try:
            paths[key], record["export_s"][key] = hf_export(model, sizes["small"], folder / key, fused,
                                                            seen if key == "hf" else None)
        except Exception as e:  # noqa: BLE001 -- a failing candidate is a result
            record[f"{key}_error"] = f"{type(e).__name__}: {e}"[:500]
    program = folder / "hf" / "program.pt2"
    if program.exists():
        outputs = [o.name for o in session(paths["hf"]).get_outputs()] if "hf" in paths else []
        for key, tgt in (("fx", None), ("fx_ort", "onnxruntime")):
            if tgt and not target:
                continue
            try:
                paths[key], record["export_s"][key] = fx_export(args.fxonnx, program, folder / key / "model.onnx",
                                                                seen.get("input_names"), outputs, tgt)
            except Exception as e:  # noqa: BLE001
                record[f"{key}_error"] = f"{type(e).__name__}: {e}"[:2000]
    else:
        record["fx_error"] = "HF's exporter captured no program"
    record["nodes"] = {k: node_count(p) for k, p in paths.items()}
    sessions = {}
    for k, p in paths.items():
        try:
            sessions[k] = session(p)
        except Exception as e:  # noqa: BLE001
            record[f"{k}_error"] = f"session: {type(e).__name__}: {e}"[:500]
    record["error"] = {}
    record["latency_ms"] = {}
    record["ratios"] = {}
    record["rounds"] = {}
    for size in ("small", "large"):
        feed_of, ok = {}, {}
        for k, s in sessions.items():
            try:
                feed_of[k] = feeds(s, values[size])
                err = max_error(s, feed_of[k], expected[size])
                record["error"].setdefault(k, {})[size] = err
                ok[k] = s
            except Exception as e:  # noqa: BLE001
                record[f"{k}_error"] = f"run at {size}: {type(e).__name__}: {e}"[:500]
        if not ok:
            continue
        result = paired(ok, feed_of, args.seconds)
        record["rounds"][size] = result["rounds"]
        record["latency_ms"][size] = {k: statistics.median(v) * 1e3 for k, v in result["times"].items()}
        record.setdefault("wall_ms", {})[size] = {k: statistics.median(v) * 1e3 for k, v in result["wall"].items()}
        # How sure the median ratio of fxonnx to HF plain is: a bootstrap 95 % interval over the rounds.
        if "fx" in ok and "hf" in ok:
            paired_ratios = np.array(result["times"]["fx"]) / np.array(result["times"]["hf"])
            rng = np.random.default_rng(0)
            medians = np.median(rng.choice(paired_ratios, (1000, len(paired_ratios))), axis=1)
            record.setdefault("fx_hf_ci", {})[size] = [float(np.percentile(medians, 2.5)),
                                                        float(np.percentile(medians, 97.5))]
        pairs = [("fx", "hf"), ("fx", "hf_fused"), ("hf_fused", "hf"), ("fx_ort", "hf_fused"), ("fx_ort", "hf")]
        record["ratios"][size] = {f"{a}/{b}": ratio(result, a, b) for a, b in pairs if ratio(result, a, b) is not None}
    record["load_after"] = os.getloadavg()[0]
    return record


# Rendering.

def fmt(x, digits=2):
    if x is None:
        return "—"
    if isinstance(x, float) and (x != x or x == float("inf")):
        return "inf" if x == float("inf") else "nan"
    return f"{x:.{digits}f}"


def fmt_err(x):
    return "—" if x is None else ("inf" if x == float("inf") else f"{x:.1e}")


def summary(records, a, b, size):
    vals = [(r["ratios"].get(size, {}).get(f"{a}/{b}"), r["case"]) for r in records]
    vals = [(v, c) for v, c in vals if v is not None]
    if not vals:
        return None
    worst = max(vals)
    return statistics.median(v for v, _ in vals), worst[0], worst[1], len(vals), sum(v > 1.05 for v, _ in vals)


def render(data) -> str:
    records, meta = data["records"], data["meta"]
    lines = [
        "## Benchmark: fxonnx against transformers' ONNX exporter",
        "",
        f"Measured {meta['date']} by `{meta['command']}` (git {meta['git']}), {meta['machine']}; "
        f"torch {meta['versions']['torch']}, transformers {meta['versions']['transformers']}, onnxruntime "
        f"{meta['versions']['onnxruntime']}, onnxscript {meta['versions']['onnxscript']}.",
        "",
        "Cases: `benches/deploy_cases.py` (tiny random configs: 2 layers, hidden 128, 4 query and 2 key/value "
        "heads, vocabulary 1024). Candidates: transformers 5.23's `OnnxExporter` with `OnnxConfig(dynamic=True)` "
        "(**HF plain**), the same with `ort_fusions=\"cpu\"` (**HF fused**), and the fxonnx CLI on the program HF's "
        "exporter captured (before the FX rewrites it makes for torch.onnx's translations) (**fxonnx**), with HF's "
        "input and output names"
        + (", and with `--target onnxruntime` (**fxonnx ORT**)" if meta.get("target") else
           "; the ONNX Runtime target column runs once `fxonnx export` accepts `--target` (not yet)")
        + ". ONNX Runtime CPU, 1 thread, default graph optimizations; small = the export inputs (batch 2 × 7 "
        "tokens; decode: 1 token after 7), large = batch 4 × 128 tokens (decode: 1 token after 128; ViT 4 images "
        "of 122 patches, Whisper 4 × 128 decoder tokens). Time = CPU time of the thread ONNX Runtime computes on "
        "(with one thread it computes on the caller's), which leaves out the time other processes hold the core. "
        "Ratio = median over paired rounds (all candidates run once per round, order rotating) of fxonnx's time "
        "over the anchor's; < 1 means fxonnx is faster; the per-case table gives a bootstrap 95 % interval of the "
        "median ratio of fxonnx to HF plain.",
        "",
        f"Load average (1 min) on this 2-core machine, shared with other jobs: {meta['load_range']} over the run. "
        "CPU time is not inflated by waiting for the core, but caches and memory bandwidth are shared with the "
        "other jobs: the intervals show how far a case's ratio can be trusted.",
        "",
        "### Summary",
        "",
        "| ratio | small: median | small: worst (case) | small: > 1.05 | large: median | large: worst (case) | large: > 1.05 |",
        "|---|---:|---|---:|---:|---|---:|",
    ]
    pairs = [("fx", "hf"), ("fx", "hf_fused"), ("hf_fused", "hf")]
    if meta.get("target"):
        pairs += [("fx_ort", "hf_fused"), ("fx_ort", "hf")]
    for a, b in pairs:
        cells = []
        for size in ("small", "large"):
            s = summary(records, a, b, size)
            if s is None:
                cells += ["—", "—", "—"]
            else:
                cells += [fmt(s[0]), f"{fmt(s[1])} ({s[2]})", f"{s[4]} of {s[3]}"]
        lines.append(f"| {LABEL[a]} / {LABEL[b]} | " + " | ".join(cells) + " |")
    nodes = [r["nodes"]["fx"] / r["nodes"]["hf"] for r in records if "fx" in r["nodes"] and "hf" in r["nodes"]]
    if nodes:
        lines += ["", f"Nodes, fxonnx / HF plain: median {fmt(statistics.median(nodes))} "
                      f"(range {fmt(min(nodes))}–{fmt(max(nodes))})."]
    failures = [f"{r['case']}: {k[:-6]}: {v}" for r in records for k, v in r.items() if k.endswith("_error")]
    lines += ["", "### CPU time per run (ms, median) and ratios per case", ""]
    cands = ["hf", "hf_fused", "fx"] + (["fx_ort"] if meta.get("target") else [])
    head = "| case | " + " | ".join(
        f"{size} {c}" for size in ("small", "large") for c in
        [*(LABEL[k].replace("HF + ort_fusions=\"cpu\"", "HF fused") for k in cands), "fx/HF (95 % CI)", "fx/fused"]) + " | load |"
    lines += [head, "|---|" + "---:|" * (2 * (len(cands) + 2)) + "---|"]
    for r in records:
        cells = []
        for size in ("small", "large"):
            lat = r["latency_ms"].get(size, {})
            rat = r["ratios"].get(size, {})
            cells += [fmt(lat.get(k), 3) for k in cands]
            q = r.get("fx_hf_ci", {}).get(size)
            spread = f" ({fmt(q[0])}–{fmt(q[1])})" if q else ""
            cells += [fmt(rat.get("fx/hf")) + spread, fmt(rat.get("fx/hf_fused"))]
        load = f"{r['load_before']:.1f}→{r['load_after']:.1f}" if "load_after" in r else "—"
        lines.append(f"| {r['case']} | " + " | ".join(cells) + f" | {load} |")
    lines += ["", "### Nodes and max abs error against eager (both sizes)", "",
              "| case | kind | nodes HF | nodes HF fused | nodes fxonnx | " +
              " | ".join(f"error {LABEL[k]}" for k in cands) + " | rounds small / large |",
              "|---|---|---:|---:|---:|" + "---:|" * len(cands) + "---|"]
    for r in records:
        errs = [fmt_err(max(r["error"][k].values())) if r["error"].get(k) else "—" for k in cands]
        n = r["nodes"]
        lines.append(f"| {r['case']} | {r['kind']} | {n.get('hf', '—')} | {n.get('hf_fused', '—')} | "
                     f"{n.get('fx', '—')} | " + " | ".join(errs) +
                     f" | {r['rounds'].get('small', '—')} / {r['rounds'].get('large', '—')} |")
    if failures:
        lines += ["", "### Failures", ""] + [f"- {f}" for f in failures]
    return "\n".join(lines) + "\n"


def versions():
    import onnxruntime
    import onnxscript
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "onnxruntime": onnxruntime.__version__, "onnxscript": onnxscript.__version__}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", help="comma-separated case names (default: all)")
    p.add_argument("--seconds", type=float, default=3.0, help="paired timing per case and size")
    p.add_argument("--fxonnx", default=str(ROOT / "target" / "release" / "fxonnx"))
    p.add_argument("--out", default=str(ROOT / "reports" / "deploy.md"))
    p.add_argument("--json", default=str(ROOT / "reports" / "deploy.json"))
    p.add_argument("--work", help="folder for the exported models (default: a temporary one)")
    p.add_argument("--render", help="only render this JSON results file to --out")
    p.add_argument("--update", action="store_true",
                   help="measure --cases again and replace their records in --json (the others are kept)")
    args = p.parse_args()
    from deploy_cases import write_section

    if args.render:
        write_section(args.out, "bench", render(json.loads(pathlib.Path(args.render).read_text())))
        return
    quiet_logs()
    from deploy_cases import CASES

    names = args.cases.split(",") if args.cases else list(CASES)
    target = has_target(args.fxonnx)
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    meta = {"date": datetime.date.today().isoformat(), "command": "python benches/deploy.py " + " ".join(sys.argv[1:]),
            "git": git, "machine": f"{platform.machine()}, {os.cpu_count()} cores", "versions": versions(),
            "target": target, "seconds": args.seconds}
    records, kept = [], {}
    if args.update:
        old = json.loads(pathlib.Path(args.json).read_text())
        kept = {r["case"]: r for r in old["records"]}
        meta["command"] = old["meta"]["command"] + f"; then {meta['command']}"
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(args.work or tmp)
        for name in names:
            start = time.perf_counter()
            try:
                records.append(run_case(name, CASES[name], args, work, target))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                records.append({"case": name, "kind": CASES[name].kind, "case_error": f"{type(e).__name__}: {e}",
                                "nodes": {}, "error": {}, "latency_ms": {}, "ratios": {}, "rounds": {},
                                "load_before": os.getloadavg()[0]})
            r = records[-1]
            print(f"{name}: {time.perf_counter() - start:.0f} s, ratios {r['ratios']}, "
                  f"errors {[k for k in r if k.endswith('_error')]}", file=sys.stderr, flush=True)
            merged = [r for r in ({**kept, **{r["case"]: r for r in records}}).values()]
            loads = [x for r in merged for x in (r.get("load_before"), r.get("load_after")) if x is not None]
            meta["load_range"] = f"{min(loads):.1f}–{max(loads):.1f}"
            data = {"meta": meta, "records": merged}
            pathlib.Path(args.json).write_text(json.dumps(data, indent=1, default=float) + "\n")
            write_section(args.out, "bench", render(data))


if __name__ == "__main__":
    main()
