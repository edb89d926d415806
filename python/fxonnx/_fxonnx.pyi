"""Types of the Rust extension module `fxonnx._fxonnx` (the API is in `fxonnx`)."""

import os
from typing import Mapping, Sequence, Union

__version__: str
# The default-domain opset of an export without opset_version (the Rust library's DEFAULT_OPSET).
DEFAULT_OPSET: int
# Weights per scale of quantize without quantize_block (WeightQuantization::DEFAULT_BLOCK).
DEFAULT_QUANTIZE_BLOCK: int

class ExportError(Exception):
    stage: str | None
    node: str | None
    target: str | None
    hint: str | None

class OptionsError(ExportError): ...
class ArchiveError(ExportError): ...
class ProgramError(ExportError): ...
class TranslationError(ExportError): ...
class UnsupportedOpsError(TranslationError): ...
class SaveError(ExportError): ...
class InternalError(ExportError): ...

class Program:
    """An exported model, held by Rust."""

    def model_bytes(self) -> bytes: ...
    def save(self, path: Union[str, os.PathLike[str]], include_initializers: bool = True,
             external_data: bool = False) -> None: ...
    def optimize(self) -> tuple[int, int]: ...
    def text(self) -> str: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def report_path(self) -> str | None: ...
    @property
    def opset(self) -> int: ...
    @property
    def node_count(self) -> int: ...
    @property
    def initializer_count(self) -> int: ...
    @property
    def weight_bytes(self) -> int: ...

# An archive: its bytes, its path, or its entries in memory (name -> bytes, or an object with
# `address`, `nbytes` and `owner` for a buffer Rust reads in place while `owner` lives).
Source = Union[bytes, str, os.PathLike[str], Mapping[str, object]]

def export(
    source: Source,
    *,
    output: Union[str, os.PathLike[str], None] = None,
    input_names: Sequence[str] = ...,
    output_names: Sequence[str] = ...,
    opset_version: int | None = None,
    dim_names: Mapping[str, str] = ...,
    external_data: bool = False,
    optimize: bool = True,
    report: bool = False,
    artifacts_dir: Union[str, os.PathLike[str], None] = None,
    max_memory: int | None = None,
    functions: Sequence[str] = ...,
    tree_names: bool = False,
    mutations_as_outputs: bool = True,
    target: str = "onnx",
) -> Program: ...
def untranslated_ops(source: Source) -> list[tuple[str, str, list[str], str | None]]: ...
def apply_weights(
    model: Union[str, os.PathLike[str]],
    archive: Union[str, os.PathLike[str]],
    output: Union[str, os.PathLike[str]],
    *,
    external_data: bool = False,
) -> int: ...
def cli(args: Sequence[str]) -> int: ...
