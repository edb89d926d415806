"""Decoders for ONNX Runtime GenAI and Optimum.

A program whose inputs hold a transformers cache object (``DynamicCache``, ``EncoderDecoderCache``,
a static cache), registered as a pytree node the way ``transformers.exporters`` registers it, gets
the names ONNX Runtime GenAI and Optimum use, with no option: ``past_key_values.N.key`` /
``.value`` in, ``logits`` and ``present.N.key`` / ``.value`` out, dims ``batch_size``,
``sequence_length``, ``past_sequence_length``, ``total_sequence_length``.

    import fxonnx.genai
    fxonnx.genai.export_decoder(model, "out", model_dir="checkpoint")  # model.onnx, genai_config.json, tokenizer
    # or, for a program exported already:
    onnx_program.save("out/model.onnx", genai=True)         # genai=DIR: a checkpoint folder's values and tokenizer

then ``onnxruntime_genai.Model("out")`` generates with it.
"""

from __future__ import annotations

import copy
import os
import pathlib
from typing import Any

__all__ = ["decoder_inputs", "export_decoder", "write_config"]


def write_config(onnx_program: Any, model_path: str | os.PathLike,
                 model_dir: str | os.PathLike | None = None) -> list[pathlib.Path]:
    """Write ``genai_config.json`` beside the model saved at ``model_path`` (and copy the tokenizer
    files of ``model_dir``, a transformers checkpoint folder whose ``config.json`` and
    ``generation_config.json`` give the context length, special tokens and search defaults).
    Returns the files written; values no folder gave are reported as warnings."""
    return onnx_program._write_genai_config(model_path, model_dir)


def decoder_inputs(model: Any, batch: int = 2, past: int = 5, seq: int = 3) -> dict[str, Any]:
    """Example forward kwargs of a causal LM step: ``seq`` new tokens after a cache of ``past``
    (the model's own cache object, made by running it on a prefix), the mask and positions."""
    import torch

    g = torch.Generator().manual_seed(0)
    vocab = model.config.get_text_config().vocab_size
    prefix = torch.randint(0, vocab, (batch, past), generator=g)
    with torch.no_grad():
        cache = model(input_ids=prefix, attention_mask=torch.ones(batch, past, dtype=torch.int64),
                      use_cache=True).past_key_values
    return {
        "input_ids": torch.randint(0, vocab, (batch, seq), generator=g),
        "attention_mask": torch.ones(batch, past + seq, dtype=torch.int64),
        "position_ids": torch.arange(past, past + seq).expand(batch, seq).contiguous(),
        "past_key_values": cache,
        "use_cache": True,
    }


def _decoder_dynamic_shapes(model: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """Batch, new tokens and past tokens dynamic (the mask's length found by torch.export): one
    model for the prompt (an empty cache) and each next token, as ONNX Runtime GenAI runs it."""
    import torch
    import torch.utils._pytree as pytree
    from transformers.exporters.exporter_dynamo import register_cache_pytrees_for_model

    # The cache classes as pytree nodes, as transformers' exporters register them: its leaves.
    register_cache_pytrees_for_model(model)

    Dim = torch.export.Dim
    batch, seq, past = Dim("batch_size"), Dim("sequence_length"), Dim("past_sequence_length")
    cache = inputs["past_key_values"]
    leaves = pytree.tree_leaves(cache)
    if not leaves or any(t.dim() != 4 for t in leaves):
        raise ValueError("export_decoder needs a cache of [batch, heads, length, head size] tensors (a DynamicCache)")
    # In the cache's own structure, whichever flattening is registered for it (transformers'
    # exporters give a flat list; `register_dynamic_cache_export_support` a dict of two lists).
    def spec_shapes(spec: Any) -> Any:
        if spec.is_leaf():
            return {0: batch, 2: past}
        children = spec.children() if hasattr(spec, "children") else spec.children_specs
        return [spec_shapes(child) for child in children]

    shapes = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: Dim.AUTO},
              "position_ids": {0: batch, 1: seq}, "past_key_values": spec_shapes(pytree.tree_structure(cache))}
    return {k: v for k, v in shapes.items() if k in inputs}


def export_decoder(model: Any, folder: str | os.PathLike, *, model_dir: str | os.PathLike | None = None,
                   inputs: dict[str, Any] | None = None, filename: str = "model.onnx", **export_options: Any) -> Any:
    """Export a transformers causal LM for ONNX Runtime GenAI into ``folder``: the forward step on
    its own cache object (a ``DynamicCache``), captured as ``transformers.exporters`` captures (the
    cache classes registered as pytree nodes, its export patches), converted by fxonnx, saved as
    ``folder/filename`` with ``genai_config.json`` (and ``model_dir``'s tokenizer files).

    ``inputs`` are forward kwargs to capture on (default: :func:`decoder_inputs`); batch, new
    tokens and past tokens are dynamic. ``export_options`` go to :func:`fxonnx.export`. Returns the
    ``ONNXProgram``."""
    import torch
    from transformers.exporters import DynamoConfig, DynamoExporter

    from ._api import export

    inputs = decoder_inputs(model) if inputs is None else inputs
    config = DynamoConfig(dynamic_shapes=_decoder_dynamic_shapes(model, inputs))
    with torch.no_grad():
        program = DynamoExporter().export(model, copy.deepcopy(inputs), config).program
    onnx_program = export(program, **export_options)
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    onnx_program.save(folder / filename)
    write_config(onnx_program, folder / filename, model_dir)
    return onnx_program
