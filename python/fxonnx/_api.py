"""``fxonnx.export`` and ``fxonnx.ONNXProgram``, named and behaving like torch.onnx's."""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Any, Mapping, Sequence

from . import _fxonnx


class VerificationError(_fxonnx.ExportError):
    """The exported model's outputs differ from the program's (``verify=True``); ``result`` holds
    every comparison, ``output`` names the first output that differs."""

    def __init__(self, message: str, result: "VerificationResult", output: str):
        super().__init__(message)
        self.result = result
        self.output = output
        self.stage = "verify"
        self.node = None
        self.target = None
        self.hint = "run the program and the model on the inputs in `result` to compare them"


@dataclasses.dataclass
class OutputComparison:
    """One output on one input set: where the model and the program differ most."""

    input_set: str
    output: str
    shape_matches: bool
    dtype_matches: bool
    max_abs_error: float
    max_rel_error: float
    atol: float
    rtol: float
    passed: bool


@dataclasses.dataclass
class VerificationResult:
    """Every output compared on the example inputs and on inputs of other sizes."""

    comparisons: list[OutputComparison]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.comparisons)

    def markdown(self) -> str:
        rows = [
            "| inputs | output | shape | dtype | max abs error | max rel error | atol | rtol | result |",
            "|---|---|---|---|---:|---:|---:|---:|---|",
        ]
        for c in self.comparisons:
            rows.append(
                f"| {c.input_set} | `{c.output}` | {'ok' if c.shape_matches else 'differs'} "
                f"| {'ok' if c.dtype_matches else 'differs'} | {c.max_abs_error:.3g} | {c.max_rel_error:.3g} "
                f"| {c.atol:g} | {c.rtol:g} | {'pass' if c.passed else 'FAIL'} |"
            )
        return "\n".join(rows) + "\n"


class ONNXProgram:
    """An exported model: its bytes, its ``onnx.ModelProto`` (with onnx installed), ``save``, and
    ``__call__`` / ``verify`` through onnxruntime (when installed)."""

    def __init__(self, program: Any, exported_program: Any, options: dict, source: Any):
        self._program = program
        self._exported_program = exported_program
        self._options = options
        # The archive (bytes or path) the model came from: renaming axes exports it again.
        self._source = source
        self._bytes: bytes | None = None
        self._session: Any = None
        self.verification: VerificationResult | None = None

    # The model.
    @property
    def model_bytes(self) -> bytes:
        """The serialized ``ModelProto``, weights inline."""
        if self._bytes is None:
            self._bytes = self._program.model_bytes()
        return self._bytes

    @property
    def model_proto(self) -> Any:
        """The model as an ``onnx.ModelProto`` (needs the onnx package)."""
        import onnx

        return onnx.load_model_from_string(self.model_bytes)

    @property
    def exported_program(self) -> Any:
        """The ``torch.export.ExportedProgram`` exported (``None`` for an archive exported without
        torch installed)."""
        return self._exported_program

    @property
    def warnings(self) -> list[str]:
        return list(self._program.warnings)

    @property
    def report_path(self) -> pathlib.Path | None:
        p = self._program.report_path
        return pathlib.Path(p) if p is not None else None

    @property
    def report(self) -> str | None:
        """The export report's markdown, when ``report=True`` wrote one."""
        p = self.report_path
        return p.read_text() if p is not None else None

    def save(self, destination: str | os.PathLike, *, external_data: bool | None = None,
             include_initializers: bool = True, genai: bool | str | os.PathLike = False) -> None:
        """Write the model; with ``external_data`` (default: the export's choice) the weights go
        to ``<file>.data`` beside it. ``include_initializers=False`` writes a weight-free model, as
        torch.onnx's ``keep_initializers_as_inputs=True`` does: each weight read from the archive
        becomes a graph input of its type and shape; ``fxonnx.apply_weights`` puts them back.
        ``genai=True`` also writes ``genai_config.json`` for ONNX Runtime GenAI (``fxonnx.genai``);
        ``genai=DIR``, a transformers checkpoint folder, gives its values and tokenizer files."""
        if external_data is not None and external_data != self._options.get("external_data", False):
            self._program.set_external_data(external_data)
            self._options["external_data"] = external_data
        self._program.save(os.fspath(destination), include_initializers)
        if genai is not False:
            from . import genai as _genai
            _genai.write_config(self, destination, None if genai is True else genai)

    def rename_axes(self, rename_mapping: Mapping[str, str]) -> None:
        """Rename symbolic dims: ``{"batch": "N", "s27": "seq"}`` (current names or the program's
        symbols). The model is exported again from its archive, so derived dims follow (``2*N``)."""
        names = dict(self._options["dim_names"])
        for old, new in rename_mapping.items():
            renamed = [symbol for symbol, name in names.items() if name == old]
            for symbol in renamed or [old]:
                names[symbol] = new
        options = {**self._options, "dim_names": names}
        self._program = _fxonnx.export(self._source, **options)
        self._options = options
        self._bytes = None
        self.release()

    def optimize(self) -> None:
        """Optimize a program exported with ``optimize=False`` (what ``optimize=True`` does)."""
        self._program.optimize()
        self._bytes = None
        self.release()

    # Running the model.
    def initialize_inference_session(self, initializer: Any = None) -> None:
        """Create the onnxruntime session ``__call__`` uses (``initializer(model_bytes)`` if given)."""
        if initializer is None:
            import onnxruntime as ort

            self._session = ort.InferenceSession(self.model_bytes, providers=["CPUExecutionProvider"])
        else:
            self._session = initializer(self.model_bytes)

    def release(self) -> None:
        """Drop the inference session."""
        self._session = None

    def __call__(self, *args: Any, **kwargs: Any) -> list[Any]:
        """Run the model in onnxruntime on the program's inputs (tensors or arrays, nested as the
        program takes them); returns the outputs as torch tensors when torch is installed."""
        if self._session is None:
            self.initialize_inference_session()
        feeds = _flatten_inputs(args, kwargs)
        names = [i.name for i in self._session.get_inputs()]
        outputs = self._session.run(None, dict(zip(names, feeds)))
        try:
            import torch
        except ImportError:
            return outputs
        return [torch.from_numpy(o) for o in outputs]

    def verify(self, *, raise_on_mismatch: bool = True, compare_unoptimized: bool = False) -> VerificationResult:
        """Run the model in onnxruntime and the exported program in torch on the example inputs
        and on inputs with other sizes within each dynamic dim's range; compare every output's
        shape, dtype and values. With ``compare_unoptimized``, the model exported without the
        optimizer is compared too. Raises ``VerificationError`` naming the first output that differs."""
        from . import _torch

        if self._exported_program is None:
            raise _fxonnx.OptionsError("verify needs the exported program: export a module or an ExportedProgram")
        result = _torch.verify(self)
        if compare_unoptimized:
            plain = ONNXProgram(_fxonnx.export(self._source, **{**self._options, "optimize": False}),
                                self._exported_program, {**self._options, "optimize": False}, self._source)
            for c in _torch.verify(plain).comparisons:
                c.input_set = f"{c.input_set}, unoptimized model"
                result.comparisons.append(c)
        self.verification = result
        p = self.report_path
        if p is not None:
            with open(p, "a") as f:
                f.write("\n## Verification\n\n" + result.markdown())
        if raise_on_mismatch and not result.passed:
            bad = next(c for c in result.comparisons if not c.passed)
            raise VerificationError(
                f"output `{bad.output}` differs from the program on the {bad.input_set} inputs "
                f"(max abs error {bad.max_abs_error:.3g}, max rel error {bad.max_rel_error:.3g})",
                result,
                bad.output,
            )
        return result

    def __repr__(self) -> str:
        return f"ONNXProgram({self._program.node_count} nodes)"


def _flatten_inputs(args: Sequence[Any], kwargs: Mapping[str, Any] | None) -> list[Any]:
    """The graph inputs of nested (args, kwargs), in torch.export's order, as numpy arrays."""
    try:
        import torch.utils._pytree as pytree

        leaves = pytree.tree_leaves((tuple(args), dict(kwargs or {})))
    except ImportError:
        leaves = list(args) + list((kwargs or {}).values())
    out = []
    for leaf in leaves:
        if hasattr(leaf, "detach"):
            leaf = leaf.detach().cpu().numpy()
        if leaf is not None:
            out.append(leaf)
    return out


def export(
    program: Any,
    args: Sequence[Any] | None = None,
    kwargs: Mapping[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = 20,
    external_data: bool = False,
    optimize: bool = True,
    report: bool = False,
    artifacts_dir: str | os.PathLike = ".",
    verify: bool = False,
    dump_exported_program: bool = False,
    dim_names: Mapping[str, str] | None = None,
    max_memory: int | None = None,
    functions: str | Sequence[str] | None = None,
) -> ONNXProgram:
    """Export ``program`` to ONNX, as ``torch.onnx.export(..., dynamo=True)`` does.

    ``program`` is a ``torch.nn.Module`` (captured with ``torch.export.export(strict=False)`` on
    ``args``/``kwargs``/``dynamic_shapes``), a ``torch.export.ExportedProgram``, the path of a
    ``.pt2`` archive, or its bytes. Dimension names given in ``dynamic_shapes``
    (``torch.export.Dim("batch")`` or a string) become the ONNX ``dim_param``s; ``dim_names``
    renames symbols directly (``{"s77": "batch"}``). ``functions="auto"`` (or a list of module
    class names) makes every call of the repeated module classes one call of an ONNX function.
    """
    exported = None
    names: dict[str, str] = {}
    if isinstance(program, (bytes, bytearray, memoryview)):
        source: Any = bytes(program)
    elif isinstance(program, (str, os.PathLike)):
        source = os.fspath(program)
    else:
        from . import _torch

        exported, names = _torch.capture(program, args, kwargs, dynamic_shapes, input_names)
        source = _torch.archive_bytes(exported)
    names.update(dim_names or {})
    if exported is None and verify:
        from . import _torch

        exported = _torch.load(source)
    if dump_exported_program and exported is not None:
        folder = pathlib.Path(artifacts_dir)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "fxonnx_exported_program.txt").write_text(str(exported))
    options = dict(
        input_names=list(input_names or []),
        output_names=list(output_names or []),
        opset_version=opset_version,
        dim_names=names,
        external_data=external_data,
        optimize=optimize,
        report=report,
        artifacts_dir=os.fspath(artifacts_dir),
        max_memory=max_memory,
        module_functions=[functions] if isinstance(functions, str) else list(functions or []) or None,
    )
    inner = _fxonnx.export(source, **options)
    onnx_program = ONNXProgram(inner, exported, options, source)
    if verify:
        onnx_program.verify()
    return onnx_program
