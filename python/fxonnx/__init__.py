"""fxonnx: export PyTorch programs to ONNX, the way ``torch.onnx.export(..., dynamo=True)`` does,
with the conversion in Rust.

    import fxonnx
    onnx_program = fxonnx.export(model, (x,), "model.onnx", dynamic_shapes=({0: "batch"},))

``fxonnx.export`` takes ``torch.onnx.export``'s arguments, in its order. Importing fxonnx needs no
other package: torch captures ``nn.Module``s, onnx / onnx-ir give ``ONNXProgram.model_proto`` and
``ONNXProgram.model``, onnxruntime runs and verifies models, each when installed
(``pip install fxonnx[torch]``, ``fxonnx[onnx]``, ``fxonnx[onnxruntime]``, ``fxonnx[all]``). A saved
``.pt2`` archive (a path or its bytes) exports without torch.
"""

from ._api import ONNXProgram, export
from ._errors import (
    ArchiveError,
    CaptureError,
    ExportError,
    InternalError,
    MissingPackageError,
    OptionsError,
    ProgramError,
    SaveError,
    TranslationError,
    UnsupportedOpsError,
    VerificationError,
)
from ._fxonnx import __version__, apply_weights
from ._verification import OutputComparison, VerificationResult

__all__ = [
    "ArchiveError",
    "CaptureError",
    "ExportError",
    "InternalError",
    "MissingPackageError",
    "ONNXProgram",
    "OptionsError",
    "OutputComparison",
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
