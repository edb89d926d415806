"""Export speed and memory with ``dynamo=False``: fxonnx against the TorchScript exporter
(``torch.onnx.export(..., dynamo=False)``) on models of the kinds PyTorch's TorchScript-exporter suite
exports (issue 39): traced CNNs and a transformer, packed and scripted RNNs, scripted control flow,
an eager-mode quantized CNN.

    python benches/torchscript_speed.py                  # 3 paired rounds, report into reports/performance.md
    python benches/torchscript_speed.py --rounds 5 --only resnet50_traced

Each export runs in a fresh process (the model built there with seed 0, then exported once to a
file), the two exporters alternating round by round so that the machine's drift falls on both.
Per export: wall and CPU time of the export call only (building the model and ``import torch``
excluded), and its peak memory: the process's peak RSS is reset (``/proc/self/clear_refs``) just
before the export and read after it, less the RSS before it (what the export itself adds). Both
exporters' models are checked in ONNX Runtime against eager on the example (max abs error shown).
Ratios are TorchScript exporter / fxonnx (above 1: fxonnx faster or lighter); medians over rounds.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ("resnet50_traced", "transformer_traced", "lstm_packed_traced", "gru_scripted",
         "loop_scripted", "quantized_resnet18_traced")
MARK = "<!-- torchscript_speed -->"


def build(case: str):
    """(model, args, export keywords) for ``case``, seeded."""
    import torch

    torch.manual_seed(0)
    if case == "resnet50_traced":
        import torchvision

        return torchvision.models.resnet50().eval(), (torch.randn(1, 3, 224, 224),), {
            "input_names": ["x"], "dynamic_axes": {"x": [0]}}
    if case == "transformer_traced":
        layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, 6, enable_nested_tensor=False).eval()
        return model, (torch.randn(2, 64, 512),), {"input_names": ["x"], "dynamic_axes": {"x": [0, 1]}}
    if case == "lstm_packed_traced":
        class Packed(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = torch.nn.LSTM(256, 512, num_layers=2, bidirectional=True)

            def forward(self, x, lengths):
                packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths)
                out, _ = self.rnn(packed)
                return torch.nn.utils.rnn.pad_packed_sequence(out)[0]

        return Packed().eval(), (torch.randn(32, 8, 256), torch.arange(32, 24, -1)), {
            "input_names": ["x", "lengths"], "dynamic_axes": {"x": [0, 1], "lengths": [0]}}
    if case == "gru_scripted":
        class Gru(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = torch.nn.GRU(256, 512, num_layers=2, batch_first=True)

            def forward(self, x):
                return self.rnn(x)[0]

        return torch.jit.script(Gru().eval()), (torch.randn(4, 32, 256),), {
            "input_names": ["x"], "dynamic_axes": {"x": [0, 1]}}
    if case == "loop_scripted":
        class Loop(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.ModuleList(torch.nn.Linear(256, 256) for _ in range(8))

            def forward(self, x):
                for layer in self.fc:
                    x = torch.relu(layer(x))
                y = x
                for i in range(x.size(0)):
                    y = y + x[i]
                if y.sum() > 0:
                    y = y * 2
                return y

        return torch.jit.script(Loop().eval()), (torch.randn(4, 256),), {
            "input_names": ["x"], "dynamic_axes": {"x": [0]}}
    if case == "quantized_resnet18_traced":
        import torchvision

        model = torchvision.models.quantization.resnet18(quantize=False).eval()
        model.fuse_model()
        model.qconfig = torch.ao.quantization.get_default_qconfig("fbgemm")
        torch.ao.quantization.prepare(model, inplace=True)
        model(torch.randn(2, 3, 224, 224))
        torch.ao.quantization.convert(model, inplace=True)
        return model, (torch.randn(1, 3, 224, 224),), {}
    raise SystemExit(f"unknown case {case}")


def rss_kib(field: str) -> int:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def worker(case: str, exporter: str, out: str) -> None:
    import warnings

    import numpy as np
    import onnxruntime as ort
    import torch

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    model, args, kw = build(case)
    path = os.path.join(out, f"{case}-{exporter}.onnx")
    def export() -> None:
        if exporter == "fxonnx":
            import fxonnx

            fxonnx.export(model, args, path, dynamo=False, verbose=False, **kw)
        else:
            torch.onnx.export(model, args, path, dynamo=False, opset_version=18, **kw)

    base = rss_kib("VmRSS")
    pathlib.Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts again from now
    wall, cpu = time.perf_counter(), time.process_time()
    export()  # the first export of the process: what a script that exports once pays
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = rss_kib("VmHWM")
    again = time.perf_counter()
    export()  # the same export again: the exporter's own work, its imports and caches warm
    again = time.perf_counter() - again
    # The exported model against eager, on the example.
    with torch.no_grad():
        want = model(*args)
    want = [t for t in torch.utils._pytree.tree_leaves(want) if isinstance(t, torch.Tensor)]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    flat = [a for a in torch.utils._pytree.tree_leaves(args) if isinstance(a, torch.Tensor)]
    feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), flat)}
    got = sess.run(None, feeds)
    err = max(float(np.max(np.abs(g.astype(np.float64) - w.detach().double().numpy()))) if g.size else 0.0
              for g, w in zip(got, want))
    print(json.dumps({"wall": wall, "cpu": cpu, "again": again, "peak_mib": max(peak - base, 0) / 1024, "rss_mib": base / 1024,
                      "max_abs_err": err, "file_mib": sum(os.path.getsize(p) for p in glob.glob(path + "*")) / 2**20}))


def run_one(case: str, exporter: str, tmp: str) -> dict:
    p = subprocess.run([sys.executable, __file__, "--worker", case, exporter, tmp], capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore"), timeout=1800)
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs=3, metavar=("CASE", "EXPORTER", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", help="comma-separated cases")
    ap.add_argument("--report", default=str(ROOT / "reports" / "performance.md"))
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    cases = [c for c in CASES if not args.only or c in args.only.split(",")]
    results: dict = {c: {"torchscript": [], "fxonnx": []} for c in cases}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for case in cases:
                order = ("torchscript", "fxonnx") if r % 2 == 0 else ("fxonnx", "torchscript")
                for e in order:
                    res = run_one(case, e, tmp)
                    results[case][e].append(res)
                    print(f"round {r} {case} {e}: {res}", flush=True)
    import torch

    import fxonnx

    rows = []
    for case in cases:
        ts, fx = results[case]["torchscript"], results[case]["fxonnx"]
        err = next((x["error"] for x in ts + fx if "error" in x), None)
        if err:
            rows.append(f"| {case} | failed: {err} | | | | | | | |")
            continue

        def med(rs, k):
            return statistics.median(x[k] for x in rs)

        rows.append(
            f"| {case} | {med(ts, 'wall'):.2f} / {med(fx, 'wall'):.2f} | **{med(ts, 'wall') / med(fx, 'wall'):.1f}×** "
            f"| {med(ts, 'again'):.3f} / {med(fx, 'again'):.3f} | **{med(ts, 'again') / med(fx, 'again'):.1f}×** "
            f"| {med(ts, 'peak_mib'):.0f} / {med(fx, 'peak_mib'):.0f} "
            f"| **{med(ts, 'peak_mib') / max(med(fx, 'peak_mib'), 1):.1f}×** "
            f"| {max(x['max_abs_err'] for x in ts):.1e} / {max(x['max_abs_err'] for x in fx):.1e} "
            f"| {med(ts, 'file_mib'):.1f} / {med(fx, 'file_mib'):.1f} |")
    section = "\n".join([
        MARK,
        "## `dynamo=False`: fxonnx against the TorchScript exporter (issue 39)",
        "",
        f"`python benches/torchscript_speed.py --rounds {args.rounds}` ({time.strftime('%Y-%m-%d')}, torch "
        f"{torch.__version__}, fxonnx {getattr(fxonnx, '__version__', '?')}): each export in a fresh process, one "
        "thread, the two exporters alternating round by round; medians of the rounds. Cells: TorchScript exporter / "
        "fxonnx. Time: the export call only (building the model and `import torch` excluded), first in the "
        "process (imports and caches cold: fxonnx's capture imports `torch._dynamo`, ~1.5 s here), then the same "
        "export again in that process. Peak: what the first export adds to the process's RSS at its peak (peak reset just before the call). "
        "File: the model with its data file. Error: max abs difference from eager in ONNX Runtime on the example. The machine: 2 cores shared with "
        "other work during the run (ratios are paired, absolute times rough).",
        "",
        "| model | first export, wall s | ratio | again, wall s | ratio | peak MiB | peak ratio | max abs error "
        "| file MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        MARK,
    ])
    report = pathlib.Path(args.report)
    text = report.read_text(encoding="utf-8") if report.exists() else "# Performance\n"
    if MARK in text:
        head, _, rest = text.partition(MARK)
        _, _, tail = rest.partition(MARK)
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    report.write_text(text, encoding="utf-8")
    (report.parent / "torchscript_speed.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(section)


if __name__ == "__main__":
    main()
