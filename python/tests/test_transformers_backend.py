"""fxonnx as a `transformers.exporters` backend (`fxonnx.transformers`): found by its format name,
exported models run through transformers' own ONNX runner and round-trip through
`save_pretrained` / `ExportedModel.from_pretrained`. Needs torch, transformers and onnxscript
(transformers' ONNX runner reads `onnx_ir` models); skipped without them. The benchmark's 25 cases
run the same way in `benches/hf_backend.py`."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("onnxscript")
pytest.importorskip("onnxruntime")

import fxonnx.transformers  # noqa: E402
from fxonnx.transformers import FORMAT, FxonnxConfig  # noqa: E402

from transformers.exporters import AutoExportConfig, AutoHfExporter, ExportedModel  # noqa: E402
from transformers.exporters.utils import get_leaf_tensors  # noqa: E402

TINY = dict(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=64)


def llama_decode():
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**TINY, num_key_value_heads=2)).eval()

    def inputs(batch, past):
        g = torch.Generator().manual_seed(past)
        with torch.no_grad():
            cache = model(input_ids=torch.randint(0, 96, (batch, past), generator=g), use_cache=True).past_key_values
        return {"input_ids": torch.randint(0, 96, (batch, 1), generator=g),
                "attention_mask": torch.ones(batch, past + 1, dtype=torch.int64),
                "past_key_values": cache, "use_cache": True}

    return model, inputs(2, 5), inputs(3, 11)


def bert():
    torch.manual_seed(0)
    model = transformers.BertModel(transformers.BertConfig(**TINY)).eval()

    def inputs(batch, seq):
        g = torch.Generator().manual_seed(seq)
        mask = torch.ones(batch, seq, dtype=torch.int64)
        mask[-1, -2:] = 0
        return {"input_ids": torch.randint(0, 96, (batch, seq), generator=g), "attention_mask": mask}

    return model, inputs(2, 7), inputs(3, 12)


def leaves(out):
    return {k: v.detach() for k, v in get_leaf_tensors(out).items()}


def assert_close(got, want):
    assert set(got) == set(want), (sorted(got), sorted(want))
    for k in want:
        torch.testing.assert_close(got[k], want[k], rtol=1e-4, atol=1e-4, msg=k)


def test_the_format_is_registered():
    config = FxonnxConfig(dynamic=True)
    assert type(AutoHfExporter.from_config(config)).__name__ == "FxonnxExporter"
    assert type(AutoHfExporter.from_config({"export_format": FORMAT})).__name__ == "FxonnxExporter"
    assert isinstance(AutoExportConfig.from_dict(dict(config.to_dict())), FxonnxConfig)
    with pytest.raises(ValueError, match="ort_fusions"):
        FxonnxConfig(ort_fusions="cpu")


@pytest.mark.parametrize("case", [bert, llama_decode])
def test_export_runs_through_transformers_runner_and_round_trips(case, tmp_path):
    model, example, other = case()
    config = FxonnxConfig(dynamic=True)
    exported = AutoHfExporter.from_config(config).export(model, copy.deepcopy(example), config)
    names = [v.name for v in exported.program.graph.inputs]
    assert names[0] == "input_ids"
    with torch.no_grad():
        want = {k: leaves(model(**copy.deepcopy(v))) for k, v in (("example", example), ("other", other))}
    assert_close(leaves(exported(**copy.deepcopy(example))), want["example"])
    assert_close(leaves(exported(**copy.deepcopy(other))), want["other"])
    exported.save_pretrained(tmp_path)
    assert {"model.onnx", "export.json", "config.json"} <= {p.name for p in tmp_path.iterdir()}
    loaded = ExportedModel.from_pretrained(tmp_path)
    assert str(loaded.export_format) == FORMAT
    assert_close(leaves(loaded(**copy.deepcopy(other))), want["other"])
