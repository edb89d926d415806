#!/usr/bin/env python3
"""deploy_ops.py -- ONNX Runtime latency of fxonnx's models against transformers' own exporter, for the
attention and mixture-of-experts lowerings (issue 32; figures in reports/deploy_ops.md).

    python benches/deploy_ops.py OUT_DIR [--fxonnx BIN[@OPSET][,BIN2[@OPSET]]] [--cases mixtral,qwen3_moe,bert]
                                 [--batch 4 --seq 128] [--profile] [--opset N]

Per case: a tiny transformers model (random weights, seed 0) is captured by transformers'
`DynamoExporter` (dynamic shapes, example input batch 2 × 16 tokens) and saved as a .pt2, which each
fxonnx binary exports (at `--opset`, or the opset after its `@`); transformers' `OnnxExporter` (plain: no
ONNX Runtime fusions, its default opset 20 unless `--opset`) exports the same model. Each model is checked against eager at batch × seq (max |diff| of the logits / last hidden
state), then all sessions (CPU, 1 thread) live in this process and run alternately, in rotating
order, on the same inputs; the table gives each median wall time and the paired ratio to transformers' model (the
median over rounds of the ratio within a round), of wall time and, in parentheses, of the running thread's CPU time.
`--profile` also runs ONNX Runtime's profiler on each model and prints the time per operator type.
Needs torch, transformers, onnxruntime, onnx_ir.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def configs(transformers):
    return {
        "mixtral": (transformers.MixtralConfig(
            vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, num_local_experts=8, num_experts_per_tok=2, max_position_embeddings=256),
            "causal"),
        "qwen3_moe": (transformers.Qwen3MoeConfig(
            vocab_size=1000, hidden_size=64, intermediate_size=128, moe_intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_experts=8, num_experts_per_tok=2,
            max_position_embeddings=256, decoder_sparse_step=1), "causal"),
        "bert": (transformers.BertConfig(
            vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=256), "base"),
        "llama": (transformers.LlamaConfig(
            vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=256), "causal"),
    }


def inputs_of(batch, seq, pad):
    import torch
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 1000, (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    if pad:
        mask[-1, seq - seq // 4:] = 0  # one padded row: masked keys, as a real batch has
    return {"input_ids": ids, "attention_mask": mask}


def build(case, out, binaries, opset):
    import torch
    import transformers
    from transformers.exporters import DynamoConfig, DynamoExporter, OnnxConfig, OnnxExporter
    import onnx_ir

    cfg, kind = configs(transformers)[case]
    torch.manual_seed(0)
    auto = transformers.AutoModelForCausalLM if kind == "causal" else transformers.AutoModel
    model = auto.from_config(cfg).eval()
    sample = inputs_of(2, 16, pad=True)
    paths = {}
    pt2 = os.path.join(out, f"{case}.pt2")
    if not os.path.exists(pt2):
        ep, _ = DynamoExporter().export_program(model, dict(sample), DynamoConfig(dynamic=True))
        torch.export.save(ep, pt2)
    hf = os.path.join(out, f"{case}.hf{opset or ''}.onnx")
    if not os.path.exists(hf):
        exported = OnnxExporter().export(model, dict(sample), OnnxConfig(dynamic=True, opset_version=opset))
        onnx_ir.save(exported.program, hf, external_data=os.path.basename(hf) + ".data")
    paths["hf"] = hf
    for i, entry in enumerate(binaries):
        binary, _, own = entry.partition("@")
        at = int(own) if own else opset
        path = os.path.join(out, f"{case}.fx{i}.onnx")
        cmd = [binary, "export", pt2, "-o", path, "--force"] + (["--opset", str(at)] if at else [])
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        print(f"{case}: {binary} export {time.perf_counter() - t:.2f} s", file=sys.stderr)
        paths[f"fx{i}"] = path
    return model, paths


def session(path, profile=None):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    if profile:
        so.enable_profiling = True
        so.profile_file_prefix = profile
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def feeds_for(sess, inputs):
    names = [i.name for i in sess.get_inputs()]
    values = [v.numpy() for v in inputs.values()]
    if all(n in inputs for n in names):
        return {n: inputs[n].numpy() for n in names}
    return dict(zip(names, values))


def profile_ops(path, inputs, prefix, runs=50):
    """Kernel time per operator type in ONNX Runtime's profiler: per run, the sum over the type's nodes;
    then the median over the runs (a run another process slowed down does not skew it)."""
    import bisect
    s = session(path, profile=prefix)
    feeds = feeds_for(s, inputs)
    for _ in range(runs):
        s.run(None, feeds)
    trace = s.end_profiling()
    with open(trace) as f:
        events = json.load(f)
    os.remove(trace)
    starts = sorted(e["ts"] for e in events if e.get("name") == "model_run")
    per_run = collections.defaultdict(lambda: [0.0] * len(starts))
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_run[e["args"]["op_name"]][bisect.bisect_right(starts, e["ts"]) - 1] += e["dur"]
    per_op = {k: statistics.median(v[5:]) for k, v in per_run.items()}
    return dict(sorted(per_op.items(), key=lambda kv: -kv[1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--fxonnx", default="target/release/fxonnx")
    ap.add_argument("--cases", default="mixtral,qwen3_moe")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--opset", type=int, default=None)
    args = ap.parse_args()
    import torch
    os.makedirs(args.out, exist_ok=True)
    binaries = args.fxonnx.split(",")
    print(f"batch {args.batch} × {args.seq} tokens (last row padded by a quarter), ONNX Runtime CPU, 1 thread, "
          f"paired runs in rotating order, ~{args.seconds:.0f} s per model\n")
    names = ["hf"] + [f"fx{i}" for i in range(len(binaries))]
    print("| case | " + " | ".join(f"{n} ms" for n in names) + " | " +
          " | ".join(f"{n} / hf paired (CPU)" for n in names[1:]) + " | max abs diff vs eager |")
    print("|---|" + "---:|" * (2 * len(names) - 1) + "---|")
    for case in args.cases.split(","):
        model, paths = build(case, args.out, binaries, args.opset)
        inputs = inputs_of(args.batch, args.seq, pad=True)
        with torch.no_grad():
            out = model(**inputs)
            ref = (out.logits if hasattr(out, "logits") else out.last_hidden_state).numpy()
        sessions = {k: session(p) for k, p in paths.items()}
        feeds = {k: feeds_for(s, inputs) for k, s in sessions.items()}
        diffs = []
        for k, s in sessions.items():
            got = s.run(None, feeds[k])[0]
            valid = inputs["attention_mask"].numpy().astype(bool)  # padded positions are not compared
            diffs.append(f"{k} {float(np.abs(got - ref)[valid].max()):.1e}")
        times = {k: [] for k in sessions}
        cpu = {k: [] for k in sessions}
        order = list(sessions)
        t = time.perf_counter()
        for k in order:
            sessions[k].run(None, feeds[k])
        runs = max(10, int(args.seconds / max(time.perf_counter() - t, 1e-4)))
        for r in range(runs):
            for k in order[r % len(order):] + order[:r % len(order)]:
                t, c = time.perf_counter(), time.thread_time()
                sessions[k].run(None, feeds[k])
                times[k].append(time.perf_counter() - t)
                cpu[k].append(time.thread_time() - c)
        m = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        # The ratio within each round (the runs next to each other), then its median: load that
        # comes and goes between rounds hits both sides of a ratio alike. With one intra-op thread
        # ONNX Runtime runs in the calling thread, whose CPU time leaves out the time other
        # processes hold the core (this machine is shared).
        paired = {k: statistics.median(a / b for a, b in zip(times[k], times["hf"])) for k in names[1:]}
        paired_cpu = {k: statistics.median(a / b for a, b in zip(cpu[k], cpu["hf"])) for k in names[1:]}
        print(f"| {case} | " + " | ".join(f"{m[k]:.3f}" for k in names) + " | " +
              " | ".join(f"{paired[k]:.3f} ({paired_cpu[k]:.3f})" for k in names[1:]) + f" | {', '.join(diffs)} |",
              flush=True)
        if args.profile:
            for k, p in paths.items():
                ops = profile_ops(p, inputs, os.path.join(args.out, f"prof_{case}_{k}"))
                total = sum(ops.values())
                top = ", ".join(f"{o} {us:.0f}" for o, us in list(ops.items())[:12])
                print(f"\n{case} {k}: kernels {total:.0f} µs per run (medians); {top}"
                      f"; Where {ops.get('Where', 0):.0f}, IsNaN {ops.get('IsNaN', 0):.0f}", flush=True)
            print()


if __name__ == "__main__":
    main()
