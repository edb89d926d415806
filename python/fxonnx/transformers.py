"""fxonnx as a ``transformers.exporters`` backend: the export format ``"fxonnx"``.

Importing this module registers it (``transformers.exporters.register_backend``); transformers
has no plugin discovery, so import it before ``AutoHfExporter`` or ``ExportedModel.from_pretrained``
looks the format up::

    import fxonnx.transformers
    from fxonnx.transformers import FxonnxConfig
    from transformers.exporters import AutoHfExporter, ExportedModel

    exporter = AutoHfExporter.from_config(FxonnxConfig(dynamic=True))
    exported = exporter.export(model, inputs, FxonnxConfig(dynamic=True))
    outputs = exported(**inputs)                    # ONNX Runtime, through transformers' own runner
    exported.save_pretrained("exported")            # model.onnx (+ .data), export.json, config.json
    again = ExportedModel.from_pretrained("exported")

The program is captured as transformers' ``OnnxExporter`` captures it (its flat forward
signature, cache pytrees, export patches, outputs flattened to named leaves; not the FX rewrites it
makes for torch.onnx's translations), then converted by fxonnx instead of ``torch.onnx.export``, with the input and output names
``OnnxExporter`` gives; the model is an ``onnx_ir.Model``, so transformers' ONNX runner and
``OnnxExporter``'s save and load serve it unchanged.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import weakref
from collections.abc import MutableMapping
from typing import Any

from transformers.exporters import register_backend
from transformers.exporters.configs import OnnxConfig
from transformers.exporters.exporter_dynamo import DynamoExporter
from transformers.exporters.exporter_onnx import OnnxExporter
from transformers.exporters.metadata import ExportMetadata, record_output_structure
from transformers.exporters.runners.runner_onnx import OnnxModelRunner
from transformers.exporters.utils import (
    apply_patches,
    disambiguate_io_names,
    patch_model_outputs,
    quantize_converted_model,
)

__all__ = ["FORMAT", "FxonnxConfig", "FxonnxExporter"]

FORMAT = "fxonnx"

# Graph outputs fxonnx adds after the user outputs for state the program mutates.
_MUTATION_PREFIXES = ("buffer_mutation_", "user_input_mutation_")


@dataclasses.dataclass
class FxonnxConfig(OnnxConfig):
    """``OnnxConfig`` for the fxonnx backend: ``dynamic``, ``dynamic_shapes``, ``strict``,
    ``opset_version`` (13 to 23; ``None``: fxonnx's default, 20) and ``optimize`` mean what they
    mean there. ``ort_fusions`` is onnxscript's rewriter, which fxonnx does not run."""

    export_format: str = FORMAT

    def __post_init__(self):
        super().__post_init__()
        if self.ort_fusions is not None:
            raise ValueError("FxonnxConfig: `ort_fusions` is the onnxscript rewriter's; fxonnx's export does not "
                             "run it. Export with OnnxConfig for ONNX Runtime's fused operators.")


class FxonnxExporter(OnnxExporter):
    """Exporter that converts a [`PreTrainedModel`] to ONNX with fxonnx (an ``onnx_ir.Model``)."""

    export_format = FORMAT
    config_class = FxonnxConfig

    def export_program(
        self,
        model: Any,
        sample_inputs: MutableMapping[str, Any],
        config: FxonnxConfig,
    ) -> tuple[Any, ExportMetadata]:
        import onnx_ir

        from ._api import export

        # OnnxExporter's capture. Not its FX rewrites (`apply_fx_node_fixes`): they work around
        # torch.onnx's translations (in-place ops, symbolic scalars) and leave nodes without the
        # metadata torch.export.save needs; fxonnx translates the program as captured.
        with patch_model_outputs(model) as (inputs_names, outputs_names, traced_outputs), apply_patches("onnx"):
            exported_program, metadata = DynamoExporter.export_program(self, model, sample_inputs, config=config)
            inputs_names, outputs_names = disambiguate_io_names(inputs_names, outputs_names)
        onnx_program = export(
            exported_program,
            input_names=inputs_names,
            output_names=outputs_names,
            opset_version=config.opset_version,
            optimize=config.optimize,
            # transformers' runner feeds a static cache's updates back (torch.onnx drops them).
            mutations_as_outputs=True,
        )
        # Through a file with external data, as OnnxExporter saves: the weights stay in the file,
        # which the runner opens itself (`meta["path"]`) and which lives as long as the model.
        folder = tempfile.TemporaryDirectory(prefix="fxonnx-hf-")
        path = os.path.join(folder.name, "model.onnx")
        onnx_program.save(path, external_data=True)
        onnx_model = onnx_ir.load(path)
        weakref.finalize(onnx_model, folder.cleanup)
        _mutations_first(onnx_model.graph)
        if not any(v.name.startswith(_MUTATION_PREFIXES) for v in onnx_model.graph.outputs):
            onnx_model.meta["path"] = path
        onnx_model = quantize_converted_model(onnx_model, sample_inputs, config)
        record_output_structure(metadata, traced_outputs[-1])
        return onnx_model, metadata


def _mutations_first(graph: Any) -> None:
    """transformers' runner reads the model's outputs from the end (torch.onnx puts the program's
    mutated state first): fxonnx's mutation outputs, last, move to the front."""
    outputs = list(graph.outputs)
    mutations = [v for v in outputs if v.name.startswith(_MUTATION_PREFIXES)]
    if not mutations:
        return
    graph.outputs.clear()
    graph.outputs.extend(mutations + [v for v in outputs if v not in mutations])


register_backend(FxonnxExporter, OnnxModelRunner)
