"""The transformers cases of the deployment benchmark (benches/deploy.py) and of fxonnx's
transformers backend demo (benches/hf_backend.py): tiny random configs (nothing is downloaded),
each with its forward kwargs at two sizes.

    CASES[name] = Case(build, inputs)
    model = case.build()                 # eval mode, seeded
    kwargs = case.inputs(model, "small")  # the export inputs; "large": batch 4 x 128 tokens

Text models take batch 2 x 7 tokens at export ("small"). Decode steps take one token after a
cache of 7 ("small") or 128 ("large") tokens, the cache made by running the model on that prefix.
Vision and speech models have a fixed number of positions: ViT 122 patches (+class token),
Whisper 128 encoder positions; their "small" is batch 2 (Whisper: 5 decoder tokens), "large"
batch 4 (Whisper: 128 decoder tokens).
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Callable

import torch
import transformers as tf

VOCAB = 1024
SIZES = {"small": (2, 7), "large": (4, 128)}

# One shape for every text model: 2 layers, hidden 128, 4 query heads, 2 key/value heads.
TEXT = dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=512)
GQA = dict(TEXT, num_key_value_heads=2)


@dataclasses.dataclass
class Case:
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[torch.nn.Module, str], dict[str, Any]]
    kind: str  # encoder, prefill, decode, moe, seq2seq, vision, speech


def _seeded(make):
    def build():
        torch.manual_seed(0)
        return make().eval()

    return build


def _gen(size, salt=0):
    return torch.Generator().manual_seed(1000 * salt + (1 if size == "small" else 2))


def encoder_inputs(model, size, token_types=False):
    batch, seq = SIZES[size]
    g = _gen(size)
    ids = torch.randint(0, VOCAB, (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[-1, seq - seq // 3:] = 0  # right padding in the last row
    out = {"input_ids": ids, "attention_mask": mask}
    if token_types:
        out["token_type_ids"] = torch.zeros(batch, seq, dtype=torch.int64)
    return out


def prefill_inputs(model, size):
    batch, seq = SIZES[size]
    g = _gen(size)
    return {"input_ids": torch.randint(0, VOCAB, (batch, seq), generator=g),
            "attention_mask": torch.ones(batch, seq, dtype=torch.int64), "use_cache": True}


def decode_inputs(model, size):
    """One new token after a cache of `seq` tokens, the cache the model's own (its type and layers)."""
    batch, past = SIZES[size]
    g = _gen(size, 1)
    prefix = torch.randint(0, VOCAB, (batch, past), generator=g)
    with torch.no_grad():
        cache = model(input_ids=prefix, attention_mask=torch.ones(batch, past, dtype=torch.int64),
                      use_cache=True).past_key_values
    return {"input_ids": torch.randint(0, VOCAB, (batch, 1), generator=g),
            "attention_mask": torch.ones(batch, past + 1, dtype=torch.int64),
            "position_ids": torch.full((batch, 1), past, dtype=torch.int64),
            "past_key_values": cache, "use_cache": True}


def seq2seq_inputs(model, size):
    batch, seq = SIZES[size]
    g = _gen(size, 2)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[-1, seq - seq // 3:] = 0
    return {"input_ids": torch.randint(0, VOCAB, (batch, seq), generator=g), "attention_mask": mask,
            "decoder_input_ids": torch.randint(0, VOCAB, (batch, max(seq - 2, 1)), generator=g), "use_cache": False}


def vit_inputs(model, size):
    batch = SIZES[size][0]
    return {"pixel_values": torch.randn(batch, 3, 88, 88, generator=_gen(size, 3))}


def whisper_inputs(model, size):
    batch = SIZES[size][0]
    g = _gen(size, 4)
    tokens = 5 if size == "small" else 128
    return {"input_features": torch.randn(batch, 80, 256, generator=g),
            "decoder_input_ids": torch.randint(0, VOCAB, (batch, tokens), generator=g), "use_cache": False}


def _decoders():
    """The GQA decoders (config class, model class), each a prefill and a decode case."""
    return {
        "llama": (lambda: tf.LlamaForCausalLM(tf.LlamaConfig(**GQA))),
        "qwen3": (lambda: tf.Qwen3ForCausalLM(tf.Qwen3Config(**GQA, head_dim=32))),
        "mistral": (lambda: tf.MistralForCausalLM(tf.MistralConfig(**GQA, sliding_window=None))),
        "phi3": (lambda: tf.Phi3ForCausalLM(tf.Phi3Config(**GQA, pad_token_id=0, bos_token_id=1, eos_token_id=2))),
        "gemma2": (lambda: tf.Gemma2ForCausalLM(tf.Gemma2Config(**GQA, head_dim=32, sliding_window=4096))),
        "gemma3": (lambda: tf.Gemma3ForCausalLM(tf.Gemma3TextConfig(**GQA, head_dim=32, sliding_window=4096))),
    }


def _cases():
    cases = {
        "bert": Case(_seeded(lambda: tf.BertModel(tf.BertConfig(**TEXT), add_pooling_layer=False)),
                     lambda m, s: encoder_inputs(m, s, token_types=True), "encoder"),
        "roberta": Case(_seeded(lambda: tf.RobertaModel(tf.RobertaConfig(**TEXT), add_pooling_layer=False)),
                        encoder_inputs, "encoder"),
        "deberta_v2": Case(_seeded(lambda: tf.DebertaV2Model(tf.DebertaV2Config(**TEXT))), encoder_inputs, "encoder"),
        "modernbert": Case(_seeded(lambda: tf.ModernBertModel(tf.ModernBertConfig(
            **TEXT, global_attn_every_n_layers=2, local_attention=64, pad_token_id=0, bos_token_id=1,
            eos_token_id=2, cls_token_id=1, sep_token_id=2))),
            encoder_inputs, "encoder"),
        "gpt2": Case(_seeded(lambda: tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=VOCAB, n_embd=128, n_layer=2, n_head=4, n_positions=512, bos_token_id=1, eos_token_id=2))), prefill_inputs, "prefill"),
        "gpt2_decode": Case(_seeded(lambda: tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=VOCAB, n_embd=128, n_layer=2, n_head=4, n_positions=512, bos_token_id=1, eos_token_id=2))), decode_inputs, "decode"),
    }
    for name, make in _decoders().items():
        cases[name] = Case(_seeded(make), prefill_inputs, "prefill")
        cases[f"{name}_decode"] = Case(_seeded(make), decode_inputs, "decode")
    moe = dict(GQA, num_experts_per_tok=2)
    cases.update({
        "qwen3_moe": Case(_seeded(lambda: tf.Qwen3MoeForCausalLM(tf.Qwen3MoeConfig(
            **moe, head_dim=32, num_experts=8, moe_intermediate_size=128, decoder_sparse_step=1))),
            prefill_inputs, "moe"),
        "mixtral": Case(_seeded(lambda: tf.MixtralForCausalLM(tf.MixtralConfig(**moe, num_local_experts=8))),
                        prefill_inputs, "moe"),
        # Multi-head latent attention has as many key/value heads as query heads (DeepSeek-V3's own
        # config); with fewer, eager runs but torch.export's SDPA shapes do not broadcast.
        "deepseek_v3": Case(_seeded(lambda: tf.DeepseekV3ForCausalLM(tf.DeepseekV3Config(
            **dict(moe, num_key_value_heads=4), n_routed_experts=8, n_shared_experts=1, moe_intermediate_size=128, first_k_dense_replace=1,
            n_group=2, topk_group=1, kv_lora_rank=32, q_lora_rank=64, qk_rope_head_dim=16, qk_nope_head_dim=16,
            v_head_dim=32))), prefill_inputs, "moe"),
        "bart": Case(_seeded(lambda: tf.BartForConditionalGeneration(tf.BartConfig(
            vocab_size=VOCAB, d_model=128, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, max_position_embeddings=512))),
            seq2seq_inputs, "seq2seq"),
        "t5": Case(_seeded(lambda: tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=VOCAB, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_heads=4,
            decoder_start_token_id=0))), seq2seq_inputs, "seq2seq"),
        "vit": Case(_seeded(lambda: tf.ViTModel(tf.ViTConfig(
            hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256, image_size=88,
            patch_size=8), add_pooling_layer=False)), vit_inputs, "vision"),
        "whisper": Case(_seeded(lambda: tf.WhisperForConditionalGeneration(tf.WhisperConfig(
            vocab_size=VOCAB, d_model=128, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, num_mel_bins=80,
            max_source_positions=128, max_target_positions=256, decoder_start_token_id=1, pad_token_id=0,
            eos_token_id=2, bos_token_id=1))), whisper_inputs, "speech"),
    })
    return cases


CASES = _cases()


def write_section(path, name: str, text: str) -> None:
    """Put `text` between `<!-- name:begin -->` and `<!-- name:end -->` in the report at `path`
    (appended when the markers are not there yet): reports/deploy.md gathers the benchmark's,
    the GenAI test's and the backend demo's results, each script rewriting its own section."""
    path = pathlib.Path(path)
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    old = path.read_text() if path.exists() else ""
    block = f"{begin}\n{text.rstrip()}\n{end}"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + block + rest.split(end, 1)[1]
    else:
        new = (old.rstrip() + "\n\n" if old.strip() else "") + block + "\n"
    path.write_text(new)
