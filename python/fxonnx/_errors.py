"""fxonnx's exceptions, importable and picklable from ``fxonnx``.

The stage errors are raised by the Rust extension (``fxonnx._fxonnx``); they are re-homed here
under the module name ``fxonnx`` so that pickle finds them (a ``ProcessPoolExecutor`` parent gets
the worker's exception with its ``stage``, ``node``, ``target`` and ``hint``). The Python stages add
``CaptureError`` (torch.export could not capture the model) and ``VerificationError``.
"""

from __future__ import annotations

from typing import Any

from ._fxonnx import (
    ArchiveError,
    ExportError,
    InternalError,
    OptionsError,
    ProgramError,
    SaveError,
    TranslationError,
    UnsupportedOpsError,
)

for _cls in (ArchiveError, ExportError, InternalError, OptionsError, ProgramError, SaveError, TranslationError,
             UnsupportedOpsError):
    # Pickle finds a class by its module and name: `fxonnx.ExportError`, not the extension's.
    _cls.__module__ = "fxonnx"


def _init_fields(e: ExportError, stage: str | None, node: str | None = None, target: str | None = None,
                 hint: str | None = None) -> None:
    e.stage = stage
    e.node = node
    e.target = target
    e.hint = hint


# The command line's flags, as the Python call names the same option: the library's messages are
# written for the command line, and a Python user reads them with these names.
_FLAGS_AS_KEYWORDS = [
    ("--quantize-block", "quantize_block"),
    ("--quantize", "quantize"),
    ("--tree-names", "tree_names=True"),
    ("--max-memory", "max_memory"),
    ("--opset", "opset_version"),
    ("--target", "target"),
    ("--functions", "functions"),
    ("--no-weights", "save(include_initializers=False)"),
    ("--no-optimize", "optimize=False"),
    ("--dim", "dim_names"),
    ("--report", "report=True"),
    ("--external-data", "external_data=True"),
    ("--genai-config", "save(genai=True)"),
    ("--input-names", "input_names"),
    ("--output-names", "output_names"),
    ("--force", "another output path"),
]


def pythonize(e: BaseException) -> BaseException:
    """``e`` with the command line's flags in its message and hint named as the Python keywords
    they are (``--tree-names`` → ``tree_names=True``)."""
    import re

    def rewrite(text: str) -> str:
        for flag, keyword in _FLAGS_AS_KEYWORDS:
            text = re.sub(re.escape(flag) + r"(?![a-z-])", keyword, text)
        return text

    if e.args and isinstance(e.args[0], str):
        e.args = (rewrite(e.args[0]),) + tuple(e.args[1:])
    hint = getattr(e, "hint", None)
    if isinstance(hint, str):
        e.hint = rewrite(hint)
    return e


class CaptureError(ExportError):
    """torch.export could not capture the model with any strategy (stage ``capture``).
    ``errors`` maps each strategy (torch.onnx's class names, ``TorchExportNonStrictStrategy``...)
    to its exception; the first one is also ``__cause__``."""

    def __init__(self, message: str = "", errors: dict[str, BaseException] | None = None):
        super().__init__(message)
        _init_fields(self, "capture")
        self.errors = dict(errors or {})
        self.report_path = None

    def __reduce__(self) -> Any:
        # The strategies' exceptions may not pickle (they hold torch objects): their text does.
        state = {**self.__dict__, "errors": {k: f"{type(v).__name__}: {v}" for k, v in self.errors.items()}}
        return (type(self), self.args, state)


class VerificationError(ExportError):
    """The exported model's outputs differ from the program's (``verify=True``), or a dynamic dim
    asked for came out static; ``result`` holds every comparison, ``output`` names the first
    output that differs."""

    def __init__(self, message: str = "", result: Any = None, output: str | None = None):
        super().__init__(message)
        _init_fields(self, "verify", hint="run the program and the model on the inputs in `result` to compare them")
        self.result = result
        self.output = output


class MissingPackageError(ModuleNotFoundError):
    """An optional package fxonnx needs for what was asked is not installed; the message names
    the extra that installs it (``pip install fxonnx[torch]``)."""


def require(module: str, extra: str, for_what: str) -> Any:
    """Import ``module`` or fail naming the package and the extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        package = {"onnx_ir": "onnx-ir"}.get(module, module)
        raise MissingPackageError(
            f"{for_what} needs the `{package}` package, which is not installed; "
            f"install it with `pip install fxonnx[{extra}]` (or `pip install {package}`)"
        ) from e


__all__ = [
    "ArchiveError",
    "CaptureError",
    "ExportError",
    "InternalError",
    "MissingPackageError",
    "OptionsError",
    "ProgramError",
    "SaveError",
    "TranslationError",
    "UnsupportedOpsError",
    "VerificationError",
    "require",
]


_AS_TORCH_ONNX: dict[tuple[type, type], type] = {}


def as_torch_onnx_error(e: BaseException) -> BaseException:
    """``e`` as an instance of its class and of ``torch.onnx.OnnxExporterError`` too, when torch is
    loaded: code written for torch.onnx (``except torch.onnx.OnnxExporterError``) catches fxonnx's
    export errors, as ``except fxonnx.TranslationError`` still does. ``e`` itself when torch is not
    loaded (fxonnx does not import it for this)."""
    import sys

    onnx = getattr(sys.modules.get("torch"), "onnx", None)
    base = getattr(onnx, "OnnxExporterError", None)
    if base is None or isinstance(e, base) or not isinstance(e, ExportError):
        return e
    # An error the TorchScript exporter raised as a subclass (`SymbolicValueError`) is that too.
    base = getattr(getattr(onnx, "errors", None), getattr(e, "torch_onnx_class", ""), base)
    cls = type(e)
    both = _AS_TORCH_ONNX.get((cls, base))
    if both is None:
        # Pickled as the fxonnx class it extends (the only one pickle can find by its name).
        both = _AS_TORCH_ONNX[(cls, base)] = type(cls.__name__, (cls, base), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "__reduce__": lambda self, cls=cls: (cls, self.args, self.__dict__)})
    # Not through the constructors: torch.onnx's take other arguments (SymbolicValueError a value);
    # the fields they would set are `e`'s.
    new = both.__new__(both, *e.args)
    BaseException.__init__(new, *e.args)
    new.__dict__.update(getattr(e, "__dict__", {}))
    new.__cause__, new.__context__ = e.__cause__, e.__context__
    new.__suppress_context__ = e.__suppress_context__
    return new.with_traceback(e.__traceback__)


class TorchOnnxErrors:
    """Around ``fxonnx.export``'s body: its export errors leave it as ``as_torch_onnx_error`` makes
    them (a block, not a wrapper: the warnings raised inside keep pointing at the caller's line)."""

    def __enter__(self) -> "TorchOnnxErrors":
        return self

    def __exit__(self, kind: Any, e: Any, traceback: Any) -> bool:
        if isinstance(e, ExportError):
            new = as_torch_onnx_error(e)
            if new is not e:
                raise new from e.__cause__
        return False
