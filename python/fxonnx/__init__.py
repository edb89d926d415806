"""fxonnx: export PyTorch programs to ONNX, the way ``torch.onnx.export(..., dynamo=True)`` does,
with the conversion in Rust.

    import fxonnx
    onnx_program = fxonnx.export(model, (x,), dynamic_shapes={"x": {0: "batch"}})
    onnx_program.save("model.onnx")

Importing fxonnx needs no other package: torch captures ``nn.Module``s, onnx gives
``ONNXProgram.model_proto`` and onnxruntime runs and verifies models, each when installed. A saved
``.pt2`` archive (a path or its bytes) exports without torch.
"""

from ._api import ONNXProgram, VerificationError, VerificationResult, export
from ._fxonnx import (
    ArchiveError,
    ExportError,
    InternalError,
    OptionsError,
    ProgramError,
    SaveError,
    TranslationError,
    UnsupportedOpsError,
    __version__,
    apply_weights,
)

__all__ = [
    "ArchiveError",
    "ExportError",
    "InternalError",
    "ONNXProgram",
    "OptionsError",
    "ProgramError",
    "SaveError",
    "TranslationError",
    "UnsupportedOpsError",
    "VerificationError",
    "VerificationResult",
    "__version__",
    "apply_weights",
    "export",
]
