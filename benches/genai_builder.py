"""fxonnx's decoders for ONNX Runtime GenAI against ONNX Runtime GenAI's own model builder (issue 40).

For each decoder style (Llama, Qwen2, Qwen3, Phi-3, Mistral, Gemma; transformers' config classes) and size
(tiny: hidden 256 x 4 layers; medium: hidden 1024 x 8 layers, 16 query / 4 key-value heads, vocabulary
32,000, about 150 M parameters), a random-weight checkpoint is written with ``save_pretrained`` (with a
small byte-level BPE tokenizer trained here: nothing is downloaded) and exported twice, each export in a
process of its own:

- by the builder: ``python -m onnxruntime_genai.models.builder -i CKPT -o OUT -p fp32|int4 -e cpu``
  (int4: ``--extra_options block_size=32``; its CPU default ``accuracy_level`` 4);
- by fxonnx: ``fxonnx.genai.export_decoder(model, OUT, model_dir=CKPT, target="onnxruntime",
  quantize="int4", quantize_block=32)`` on the checkpoint loaded by ``AutoModelForCausalLM``.

Both models are then loaded in this process by ``onnxruntime_genai`` (one intra-op thread, one inter-op
thread: ``og.Config.overlay``) and measured paired, round by round (the order alternating), in CPU time of
this process: prefill of 16 tokens, prefill of 256, a decode step after 256 (the mean of the 4 steps
after the prompt), and tokens per second generating 64 tokens after a 16-token prompt (the prompt's
prefill included). Each measurement runs rounds for ``--seconds`` (at least a few rounds); the ratio
reported is the median over rounds of fxonnx's time over the builder's (tokens/s: fxonnx's rate over
the builder's, so above 1 is better there and below 1 is better everywhere else).

Also: each export's CPU time and peak RSS (``os.wait4`` on the export's process: user + system time of
the whole process, imports and model loading included, as a user runs either tool); the first step's
logits (the 16-token prompt) against eager torch float32 (max abs and relative RMS error, every position);
for fp32, the 64 greedy tokens against transformers' ``generate`` (end of text suppressed in both); the
node counts of both graphs.

    python benches/genai_builder.py                       # everything, report into reports/deploy.md
    python benches/genai_builder.py --models llama,qwen2 --sizes tiny --precisions int4 --seconds 2 --no-report

The report is the section between ``<!-- genai-builder:begin -->`` and ``<!-- genai-builder:end -->`` of
``reports/deploy.md`` (other sections kept) and ``reports/genai_builder.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODELS = ["llama", "qwen2", "qwen3", "phi3", "mistral", "gemma"]
SIZES = {
    # hidden, layers, heads, kv heads, intermediate, vocabulary
    "tiny": dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2,
                 intermediate_size=768, vocab_size=8192),
    "medium": dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4,
                   intermediate_size=2816, vocab_size=32000),
}
PRECISIONS = ["fp32", "int4"]
BLOCK = 32
PROMPT, LONG, NEW = 16, 256, 64
DECODE_STEPS = 4
CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "a tiny model generates the same tokens in onnx runtime genai",
    "transformers exports a decoder with its cache as inputs and outputs",
    "the exported decoder runs the prompt and then one token at a time",
]
BEGIN, END = "<!-- genai-builder:begin -->", "<!-- genai-builder:end -->"


# ---------------------------------------------------------------------------------------------------
# checkpoints


def make_config(name: str, size: str):
    import transformers

    dims = dict(SIZES[size])
    head_dim = dims["hidden_size"] // dims["num_attention_heads"]
    common = dict(max_position_embeddings=2048, bos_token_id=1, eos_token_id=2, pad_token_id=0, **dims)
    if name == "llama":
        return transformers.LlamaConfig(**common)
    if name == "qwen2":
        return transformers.Qwen2Config(**common)
    if name == "qwen3":
        return transformers.Qwen3Config(head_dim=head_dim, **common)
    if name == "phi3":
        return transformers.Phi3Config(original_max_position_embeddings=2048, **common)
    if name == "mistral":
        return transformers.MistralConfig(sliding_window=None, head_dim=head_dim, **common)
    if name == "gemma":
        return transformers.GemmaConfig(head_dim=head_dim, **common)
    raise ValueError(name)


def tiny_tokenizer():
    """A byte-level BPE tokenizer of 300 tokens trained on CORPUS (the builder copies a checkpoint's
    tokenizer; the benchmark feeds token ids)."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 10, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                                pad_token="<pad>")


def write_checkpoint(name: str, size: str, folder: pathlib.Path):
    import torch
    import transformers

    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(make_config(name, size)).eval()
    # Random init draws weights of std 0.02: large enough logits to make the greedy choices distinct.
    model.generation_config.do_sample = False
    model.save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return model


# ---------------------------------------------------------------------------------------------------
# exports, each in a process of its own


def fxonnx_export_main(ckpt: str, out: str, precision: str) -> None:
    """The fxonnx export as a user runs it (``_fxonnx_export`` subcommand)."""
    import torch
    import transformers

    import fxonnx.genai

    model = transformers.AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32).eval()
    options = dict(target="onnxruntime")
    if precision == "int4":
        options.update(quantize="int4", quantize_block=BLOCK)
    fxonnx.genai.export_decoder(model, out, model_dir=ckpt, **options)


def run_measured(cmd: list[str], log: pathlib.Path) -> dict:
    """Run `cmd`; its CPU time (user + system) and peak RSS from wait4, and its wall time."""
    start = time.perf_counter()
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=log.parent)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}); see {log}:\n" + log.read_text()[-3000:])
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024, "wall_s": wall}


def export_builder(ckpt: pathlib.Path, out: pathlib.Path, precision: str) -> dict:
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(ckpt), "-o", str(out),
           "-p", precision, "-e", "cpu", "-c", str(out.parent / f"{out.name}-cache")]
    if precision == "int4":
        cmd += ["--extra_options", f"block_size={BLOCK}"]
    out.mkdir(parents=True, exist_ok=True)
    stats = run_measured(cmd, out.parent / f"{out.name}.log")
    shutil.rmtree(out.parent / f"{out.name}-cache", ignore_errors=True)
    return stats


def export_fxonnx(ckpt: pathlib.Path, out: pathlib.Path, precision: str) -> dict:
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "_fxonnx_export", str(ckpt), str(out), precision]
    out.mkdir(parents=True, exist_ok=True)
    return run_measured(cmd, out.parent / f"{out.name}.log")


def node_counts(folder: pathlib.Path) -> dict:
    import onnx

    config = json.loads((folder / "genai_config.json").read_text())
    model = onnx.load(str(folder / config["model"]["decoder"]["filename"]), load_external_data=False)
    counts = collections.Counter(n.op_type for n in model.graph.node)
    return {"total": sum(counts.values()), "ops": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            "inputs": [i.name for i in model.graph.input]}


# ---------------------------------------------------------------------------------------------------
# measurements in onnxruntime_genai


def load_genai(folder: pathlib.Path):
    import onnxruntime_genai as og

    config = og.Config(str(folder))
    config.overlay(json.dumps({"model": {"decoder": {"session_options": {
        "intra_op_num_threads": 1, "inter_op_num_threads": 1}}}}))
    return og.Model(config)


def generator(model, tokens: list[int], max_length: int, min_length: int | None = None):
    import onnxruntime_genai as og

    params = og.GeneratorParams(model)
    params.set_search_options(max_length=max_length, min_length=min_length or 0, do_sample=False)
    return og.Generator(model, params)


def prefill(model, tokens: list[int]) -> float:
    g = generator(model, tokens, len(tokens) + 1)
    start = time.process_time()
    g.append_tokens([tokens])
    return time.process_time() - start


def long_prompt_decode(model, tokens: list[int]) -> tuple[float, float]:
    """Prefill of the long prompt, then the mean of DECODE_STEPS steps after it (the first
    `generate_next_token` only picks the token the prompt's logits give)."""
    g = generator(model, tokens, len(tokens) + DECODE_STEPS + 2)
    start = time.process_time()
    g.append_tokens([tokens])
    t_prefill = time.process_time() - start
    g.generate_next_token()
    start = time.process_time()
    for _ in range(DECODE_STEPS):
        g.generate_next_token()
    return t_prefill, (time.process_time() - start) / DECODE_STEPS


def generate(model, tokens: list[int]) -> tuple[float, list[int]]:
    """CPU time generating NEW tokens greedily after `tokens` (prefill included), and the sequence."""
    n = len(tokens) + NEW
    g = generator(model, tokens, n, n)
    start = time.process_time()
    g.append_tokens([tokens])
    while not g.is_done():
        g.generate_next_token()
    elapsed = time.process_time() - start
    return elapsed, [int(t) for t in g.get_sequence(0)]


def first_logits(model, tokens: list[int]):
    import numpy as np

    g = generator(model, tokens, len(tokens) + 1)
    g.append_tokens([tokens])
    return np.asarray(g.get_output("logits"), dtype=np.float64).reshape(len(tokens), -1)


def paired(fn_a, fn_b, seconds: float, min_rounds: int) -> list[tuple]:
    """Rounds of (fn_a(), fn_b()), the order alternating, until `seconds` of wall time and
    `min_rounds` rounds have passed."""
    rounds, start = [], time.perf_counter()
    while len(rounds) < min_rounds or time.perf_counter() - start < seconds:
        if len(rounds) % 2 == 0:
            a = fn_a()
            b = fn_b()
        else:
            b = fn_b()
            a = fn_a()
        rounds.append((a, b))
    return rounds


def median_ratio(rounds: list[tuple[float, float]]) -> float:
    return statistics.median(a / b for a, b in rounds)


def errors(logits, reference) -> dict:
    import numpy as np

    d = logits - reference
    return {"max_abs": float(np.abs(d).max()),
            "rel_rms": float(np.sqrt((d * d).mean()) / np.sqrt((reference * reference).mean()))}


# ---------------------------------------------------------------------------------------------------
# one case: model x size x precision


def run_case(name: str, size: str, precisions: list[str], work: pathlib.Path, seconds: float) -> list[dict]:
    import torch

    folder = work / f"{name}-{size}"
    shutil.rmtree(folder, ignore_errors=True)
    ckpt = folder / "checkpoint"
    model = write_checkpoint(name, size, ckpt)
    params = sum(p.numel() for p in model.parameters())
    g = torch.Generator().manual_seed(1)
    vocab = model.config.vocab_size
    # Token ids past the special ones, the same for every tool.
    prompt = torch.randint(3, vocab, (PROMPT,), generator=g).tolist()
    long_prompt = torch.randint(3, vocab, (LONG,), generator=g).tolist()
    with torch.no_grad():
        reference = model(torch.tensor([prompt])).logits[0].double().numpy()
        hf_tokens = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, PROMPT, dtype=torch.int64),
                                   max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False)[0].tolist()
    del model
    results = []
    for precision in precisions:
        case = {"model": name, "size": size, "precision": precision, "parameters": params}
        print(f"== {name} {size} {precision} ({params / 1e6:.1f} M parameters)", flush=True)
        out = {"builder": folder / f"builder-{precision}", "fxonnx": folder / f"fxonnx-{precision}"}
        try:
            measure_case(case, out, prompt, long_prompt, reference, hf_tokens, seconds)
        except Exception as e:  # a tool that fails on one case: reported, the others still run
            case["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
            print(f"   failed: {case['error']}", flush=True)
        results.append(case)
        for path in out.values():
            shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    return results


def measure_case(case, out, prompt, long_prompt, reference, hf_tokens, seconds) -> None:
    """Export with both tools, load both in onnxruntime_genai and measure them paired, into `case`."""
    precision = case["precision"]
    ckpt = out["builder"].parent / "checkpoint"
    case["export"] = {"builder": export_builder(ckpt, out["builder"], precision),
                      "fxonnx": export_fxonnx(ckpt, out["fxonnx"], precision)}
    case["nodes"] = {tool: node_counts(out[tool]) for tool in out}
    models = {tool: load_genai(out[tool]) for tool in out}
    fx, bu = models["fxonnx"], models["builder"]

    case["logit_error"] = {tool: errors(first_logits(models[tool], prompt), reference) for tool in models}

    r16 = paired(lambda: prefill(fx, prompt), lambda: prefill(bu, prompt), seconds, 5)
    r256 = paired(lambda: long_prompt_decode(fx, long_prompt), lambda: long_prompt_decode(bu, long_prompt),
                  seconds, 3)
    rgen = paired(lambda: generate(fx, prompt), lambda: generate(bu, prompt), seconds, 2)
    case["rounds"] = {"prefill_16": len(r16), "prefill_256": len(r256), "generate": len(rgen)}
    case["ratio"] = {
        "prefill_16": median_ratio(r16),
        "prefill_256": median_ratio([(a[0], b[0]) for a, b in r256]),
        "decode_256": median_ratio([(a[1], b[1]) for a, b in r256]),
        # tokens/s of fxonnx over the builder's: the builder's time over fxonnx's.
        "tokens_per_s": statistics.median(b[0] / a[0] for a, b in rgen),
        "export_cpu": case["export"]["fxonnx"]["cpu_s"] / case["export"]["builder"]["cpu_s"],
        "export_rss": case["export"]["fxonnx"]["peak_rss_mb"] / case["export"]["builder"]["peak_rss_mb"],
    }
    case["ms"] = {
        tool: {
            "prefill_16": 1e3 * statistics.median(r[i] for r in r16),
            "prefill_256": 1e3 * statistics.median(r[i][0] for r in r256),
            "decode_256": 1e3 * statistics.median(r[i][1] for r in r256),
            "tokens_per_s": statistics.median(NEW / r[i][0] for r in rgen),
        }
        for i, tool in enumerate(["fxonnx", "builder"])
    }
    tokens = {"fxonnx": rgen[0][0][1], "builder": rgen[0][1][1]}
    case["tokens_equal_transformers"] = {tool: tokens[tool] == hf_tokens for tool in tokens}
    # New tokens until the first that differs from transformers' (int4 drifts away from float32).
    case["tokens_agree_with_transformers"] = {
        tool: next((i for i, (a, b) in enumerate(zip(tokens[tool][PROMPT:], hf_tokens[PROMPT:])) if a != b), NEW)
        for tool in tokens}
    print(json.dumps({k: case[k] for k in ("ratio", "logit_error", "tokens_equal_transformers")}), flush=True)


# ---------------------------------------------------------------------------------------------------
# report


def fmt(x: float) -> str:
    return f"{x:.2f}"


def section(results: list[dict], meta: dict) -> str:
    import onnxruntime
    import onnxruntime_genai
    import transformers

    lines = [
        "## fxonnx against ONNX Runtime GenAI's model builder",
        "",
        f"Measured {meta['date']} by `python benches/genai_builder.py {meta['argv']}` (git {meta['git']}; "
        f"{meta['minutes']:.0f} min on the shared 2-core machine); transformers {transformers.__version__}, "
        f"onnxruntime {onnxruntime.__version__}, onnxruntime-genai {onnxruntime_genai.__version__}. "
        "Random-weight checkpoints (transformers' config classes, `save_pretrained`): tiny = hidden 256 x 4 layers, "
        "8 / 2 heads, vocabulary 8,192; medium = hidden 1024 x 8 layers, 16 / 4 heads, intermediate 2,816, "
        "vocabulary 32,000. Builder: `python -m onnxruntime_genai.models.builder -i CKPT -o OUT -p fp32|int4 -e cpu` "
        f"(int4: `block_size={BLOCK}`, its default `accuracy_level` 4); fxonnx: `fxonnx.genai.export_decoder(model, OUT, "
        f"model_dir=CKPT, target=\"onnxruntime\", quantize=\"int4\", quantize_block={BLOCK})`. Both run in "
        "`onnxruntime_genai` with 1 intra-op thread, paired round by round in one process, CPU time. Ratios are "
        "fxonnx / builder, medians over rounds: times (prefill, decode, export) below 1.00 mean fxonnx is faster, "
        "tokens/s above 1.00 means fxonnx generates faster. Decode: mean of the 4 steps after a 256-token prompt; "
        f"tokens/s: {NEW} greedy tokens after a {PROMPT}-token prompt, its prefill included. Export: the whole "
        "process of each tool (imports, loading the checkpoint), user + system CPU and peak RSS. Logit error: the "
        f"{PROMPT}-token prompt's logits at every position against eager torch float32 (max abs; relative RMS = "
        "RMS of the difference over RMS of the logits).",
        "",
        "| model | size | precision | prefill 16 | prefill 256 | decode after 256 | tokens/s | export CPU | "
        "export peak RSS | logit max abs fxonnx / builder | logit rel RMS fxonnx / builder | tokens = transformers "
        "fxonnx / builder | nodes fxonnx / builder |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|",
    ]
    for c in results:
        if "error" in c:
            lines.append(f"| {c['model']} | {c['size']} | {c['precision']} | failed: {c['error'][:200]} |||||||||")
            continue
        r, e = c["ratio"], c["logit_error"]
        tok = c["tokens_equal_transformers"]
        yn = lambda b: "yes" if b else "no"  # noqa: E731
        tokens = f"{yn(tok['fxonnx'])} / {yn(tok['builder'])}" if c["precision"] == "fp32" else (
            f"first {c['tokens_agree_with_transformers']['fxonnx']} / {c['tokens_agree_with_transformers']['builder']} of {NEW}")
        lines.append(
            f"| {c['model']} | {c['size']} | {c['precision']} | {fmt(r['prefill_16'])} | {fmt(r['prefill_256'])} | "
            f"{fmt(r['decode_256'])} | {fmt(r['tokens_per_s'])} | {fmt(r['export_cpu'])} | {fmt(r['export_rss'])} | "
            f"{e['fxonnx']['max_abs']:.2e} / {e['builder']['max_abs']:.2e} | "
            f"{e['fxonnx']['rel_rms']:.2e} / {e['builder']['rel_rms']:.2e} | {tokens} | "
            f"{c['nodes']['fxonnx']['total']} / {c['nodes']['builder']['total']} |")
    lines += ["", "Absolute values (median per round; ms of CPU; tokens/s; export CPU s and peak RSS MB):", "",
              "| model | size | precision | tool | prefill 16 | prefill 256 | decode after 256 | tokens/s | export CPU s | "
              "export peak MB |", "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for c in (c for c in results if "error" not in c):
        for tool in ("fxonnx", "builder"):
            m, x = c["ms"][tool], c["export"][tool]
            lines.append(f"| {c['model']} | {c['size']} | {c['precision']} | {tool} | {m['prefill_16']:.2f} | "
                         f"{m['prefill_256']:.1f} | {m['decode_256']:.2f} | {m['tokens_per_s']:.1f} | "
                         f"{x['cpu_s']:.1f} | {x['peak_rss_mb']:.0f} |")
    lines += ["", "Operators per graph (the largest counts; `reports/genai_builder.json` has every count):", "",
              "| model | size | precision | fxonnx | builder |", "|---|---|---|---|---|"]
    for c in (c for c in results if "error" not in c):
        top = lambda ops: ", ".join(f"{k} {v}" for k, v in list(ops.items())[:8])  # noqa: E731
        lines.append(f"| {c['model']} | {c['size']} | {c['precision']} | {top(c['nodes']['fxonnx']['ops'])} | "
                     f"{top(c['nodes']['builder']['ops'])} |")
    return "\n".join(lines)


def write_report(path: pathlib.Path, text: str) -> None:
    old = path.read_text() if path.exists() else ""
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + block + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(new)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_fxonnx_export":
        fxonnx_export_main(*sys.argv[2:5])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--medium-models", default=None, help="models measured at medium size (default: --models)")
    ap.add_argument("--precisions", default=",".join(PRECISIONS))
    ap.add_argument("--seconds", type=float, default=4.0, help="wall time per measurement (at least a few rounds)")
    ap.add_argument("--work", default="/tmp/fxonnx-genai-builder", help="folder for checkpoints and exports")
    ap.add_argument("--report", default=str(ROOT / "reports" / "deploy.md"))
    ap.add_argument("--json", default=str(ROOT / "reports" / "genai_builder.json"))
    ap.add_argument("--no-report", action="store_true", help="print the section; write neither file")
    args = ap.parse_args()
    pick = lambda s, allowed: [x for x in s.split(",") if x] if all(x in allowed for x in s.split(",") if x) else \
        ap.error(f"choose from {', '.join(allowed)}: {s}")  # noqa: E731
    models, sizes, precisions = pick(args.models, MODELS), pick(args.sizes, list(SIZES)), pick(args.precisions, PRECISIONS)

    import fxonnx

    print(f"fxonnx from {fxonnx.__file__}", flush=True)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    results = []
    medium = pick(args.medium_models, MODELS) if args.medium_models else models
    for size in sizes:
        for name in (medium if size == "medium" else models):
            results.extend(run_case(name, size, precisions, work, args.seconds))
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    meta = {"date": time.strftime("%Y-%m-%d"), "git": git, "minutes": (time.perf_counter() - start) / 60,
            "argv": " ".join(sys.argv[1:]), "fxonnx": fxonnx.__file__}
    text = section(results, meta)
    print(text)
    if not args.no_report:
        pathlib.Path(args.json).write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        write_report(pathlib.Path(args.report), text)


if __name__ == "__main__":
    main()
