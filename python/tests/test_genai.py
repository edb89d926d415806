"""Greedy generation in ONNX Runtime GenAI with decoders fxonnx exported from transformers' own cache
objects, token for token against transformers' `generate`.

Each tiny decoder (Llama, Qwen2, Qwen3, Phi-3 styles; random weights) is saved as a transformers
checkpoint with a byte-level BPE tokenizer trained here on a few sentences (nothing is downloaded),
exported with `fxonnx.genai.export_decoder(model, folder, model_dir=checkpoint)` (the forward step
on a `DynamicCache`, captured as `transformers.exporters` captures), and loaded by
`onnxruntime_genai.Model(folder)`: its tokenizer must encode and decode the prompts as transformers' does, and
its greedy search must generate the tokens `generate` does, 24 new tokens per prompt (end of text
suppressed until then in both, so that every step is compared).

Needs torch, transformers, tokenizers and onnxruntime-genai (the module is skipped without them):

    python -m pytest -q python/tests/test_genai.py
    python python/tests/test_genai.py --report reports/deploy.md   # its section of the report
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
og = pytest.importorskip("onnxruntime_genai")

import fxonnx  # noqa: E402
import fxonnx.genai  # noqa: E402

NEW_TOKENS = 24
PROMPTS = ["the quick brown fox", "onnx runtime genai runs the exported decoder and"]
CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "a tiny model generates the same tokens in onnx runtime genai",
    "transformers exports a decoder with its cache as inputs and outputs",
    "the exported decoder runs the prompt and then one token at a time",
]
SMALL = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
             max_position_embeddings=128, bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False)
ARCHS = {
    "llama": lambda v: transformers.LlamaForCausalLM(transformers.LlamaConfig(vocab_size=v, **SMALL)),
    "qwen2": lambda v: transformers.Qwen2ForCausalLM(transformers.Qwen2Config(vocab_size=v, **SMALL)),
    "qwen3": lambda v: transformers.Qwen3ForCausalLM(transformers.Qwen3Config(vocab_size=v, head_dim=16, **SMALL)),
    "phi3": lambda v: transformers.Phi3ForCausalLM(transformers.Phi3Config(vocab_size=v, **SMALL)),
}


def tiny_tokenizer():
    """A byte-level BPE tokenizer (GPT-2's scheme) of 300 tokens, trained on CORPUS."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 10, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                                pad_token="<pad>")


def generate_both(arch: str, tmp: pathlib.Path) -> dict:
    """Export `arch` for GenAI, generate in both; returns the prompts' tokens and timings."""
    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    model = ARCHS[arch](len(tokenizer)).eval()
    checkpoint, folder = tmp / f"{arch}-checkpoint", tmp / f"{arch}-genai"
    model.generation_config.do_sample = False
    model.save_pretrained(checkpoint)
    tokenizer.save_pretrained(checkpoint)
    start = time.perf_counter()
    fxonnx.genai.export_decoder(model, folder, model_dir=checkpoint)
    export_s = time.perf_counter() - start
    config = json.loads((folder / "genai_config.json").read_text())
    assert config["model"]["context_length"] == 128 and config["model"]["eos_token_id"] == 2, config["model"]
    assert (folder / "tokenizer.json").exists() and (folder / "tokenizer_config.json").exists()

    og_model = og.Model(str(folder))
    og_tokenizer = og.Tokenizer(og_model)
    results = []
    for prompt in PROMPTS:
        ids = tokenizer(prompt)["input_ids"]
        assert [int(t) for t in og_tokenizer.encode(prompt)] == ids, prompt
        assert og_tokenizer.decode(ids) == tokenizer.decode(ids) == prompt
        with torch.no_grad():
            hf = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.int64),
                                max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False)[0].tolist()
        params = og.GeneratorParams(og_model)
        params.set_search_options(max_length=len(ids) + NEW_TOKENS, min_length=len(ids) + NEW_TOKENS,
                                  do_sample=False)
        generator = og.Generator(og_model, params)
        generator.append_tokens([ids])
        while not generator.is_done():
            generator.generate_next_token()
        genai = [int(t) for t in generator.get_sequence(0)]
        results.append({"prompt": prompt, "prompt_len": len(ids), "hf": hf, "genai": genai})
    return {"arch": arch, "export_s": export_s, "results": results}


@pytest.mark.parametrize("arch", list(ARCHS))
def test_genai_generates_transformers_tokens(arch, tmp_path):
    out = generate_both(arch, tmp_path)
    for r in out["results"]:
        assert len(r["hf"]) == r["prompt_len"] + NEW_TOKENS
        assert r["genai"] == r["hf"], f"{arch}, {r['prompt']!r}: GenAI {r['genai']} != transformers {r['hf']}"


def test_save_with_genai_writes_the_config(tmp_path):
    """`ONNXProgram.save(path, genai=True)`: the config beside the model, named after its file,
    with a warning for what no checkpoint folder gave; a model with no cache is refused."""
    torch.manual_seed(0)
    model = ARCHS["llama"](300).eval()
    onnx_program = fxonnx.genai.export_decoder(model, tmp_path / "first")
    with pytest.warns(UserWarning, match="context_length 2048"):
        onnx_program.save(tmp_path / "step.onnx", genai=True)
    config = json.loads((tmp_path / "genai_config.json").read_text())
    assert config["model"]["decoder"]["filename"] == "step.onnx"
    assert config["model"]["decoder"]["num_hidden_layers"] == 2
    plain = fxonnx.export(torch.nn.Linear(4, 2), (torch.randn(3, 4),))
    with pytest.raises(fxonnx.OptionsError, match="no past_key_values.N.key inputs"):
        plain.save(tmp_path / "linear.onnx", genai=True)


def main():
    import argparse
    import tempfile

    p = argparse.ArgumentParser()
    p.add_argument("--report", help="write the results as the `genai` section of this report")
    args = p.parse_args()
    start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ARCHS:
            out = generate_both(arch, pathlib.Path(tmp))
            for r in out["results"]:
                new = r["prompt_len"]
                same = sum(a == b for a, b in zip(r["hf"][new:], r["genai"][new:]))
                rows.append(f"| {arch} | {r['prompt']!r} | {new} | {same} of {NEW_TOKENS} | "
                            f"{'yes' if r['genai'] == r['hf'] else 'NO'} | {out['export_s']:.1f} |")
    total = time.perf_counter() - start
    text = "\n".join([
        "## ONNX Runtime GenAI: greedy tokens against transformers",
        "",
        f"`python python/tests/test_genai.py --report reports/deploy.md` (the same checks as "
        f"`pytest python/tests/test_genai.py`; {total:.0f} s in all on the shared machine). Decoders with 2 layers, "
        "hidden 64, 4 query and 2 key/value heads, a 300-token byte-level BPE tokenizer trained offline; exported "
        "by `fxonnx.genai.export_decoder(model, folder, model_dir=checkpoint)`, which wrote `model.onnx`, "
        "`genai_config.json` and the checkpoint's tokenizer files; generated by `onnxruntime_genai` "
        f"{og.__version__} (greedy, {NEW_TOKENS} new tokens, end of text suppressed until then in both) and by "
        "transformers' `generate`. ONNX Runtime GenAI's tokenizer (read from the files "
        "copied beside the model) encodes and decodes the prompts as transformers' does (asserted).",
        "",
        "| decoder | prompt | prompt tokens | new tokens equal | sequence equal | export s |",
        "|---|---|---:|---:|---|---:|",
        *rows,
    ])
    print(text)
    if args.report:
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benches"))
        from deploy_cases import write_section

        write_section(args.report, "genai", text)


if __name__ == "__main__":
    main()
