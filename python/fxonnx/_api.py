"""``fxonnx.export`` and ``fxonnx.ONNXProgram``: ``torch.onnx.export(..., dynamo=True)``'s call and
program, with the conversion in Rust."""

from __future__ import annotations

import contextlib
import datetime
import io
import os
import pathlib
import tempfile
import time
import warnings
from typing import Any, Collection, Mapping, Sequence

from . import _errors, _fxonnx
from ._errors import OptionsError, VerificationError
from ._verification import OutputComparison, VerificationResult

# The library's defaults (the opset: torch.onnx's, 20; the quantization block: 32), read from the
# extension rather than copied.
DEFAULT_OPSET = _fxonnx.DEFAULT_OPSET
DEFAULT_QUANTIZE_BLOCK = _fxonnx.DEFAULT_QUANTIZE_BLOCK
# torch.onnx saves weights beside the model above this size (ONNXProgram._LARGE_MODEL_THRESHOLD).
_LARGE_MODEL_THRESHOLD = 1536 * 1024 * 1024


@contextlib.contextmanager
def _folder_lock(folder: str):
    """The lock Rust's saves take on an output folder (``flock`` on the folder itself), so that
    saves to one path, from Rust or from here, take turns for their renames."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no turns to take
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # a file system without flock
            pass
        yield
    finally:
        os.close(fd)


def _timestamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d_%H-%M-%S-%f")


class ONNXProgram:
    """An exported model, as torch.onnx's ``ONNXProgram``: ``model`` (an ``onnx_ir.Model``),
    ``model_proto``, ``save``, ``apply_weights``, ``compute_values``, ``call_reference``,
    ``__call__`` (onnxruntime), ``optimize``, ``rename_axes``, ``release``; plus fxonnx's
    ``model_bytes``, ``verify`` and ``report``.

    The model lives in Rust until ``model`` is first read; from then on the ``onnx_ir.Model`` is
    the program (what ``save``, ``model_proto`` and ``__call__`` use), so that changes made to it
    are kept, as with torch.onnx."""

    def __init__(self, program: Any, exported_program: Any, options: dict, source: Any,
                 capture_strategy: str | None = None):
        self._program = program
        self.exported_program = exported_program
        self._options = options
        # What the model was exported from (archive bytes, path or in-memory entries): renaming
        # axes or comparing with the unoptimized model exports it again.
        self._source = source
        self._bytes: bytes | None = None
        self._ir: Any = None
        self._tempdir: tempfile.TemporaryDirectory | None = None
        self._inference_session: Any = None
        self._capture_strategy = capture_strategy
        self.verification: VerificationResult | None = None
        self.static_dims: list[tuple[str, int, str]] = []

    # --- the model ---------------------------------------------------------------------------

    @property
    def model_bytes(self) -> bytes:
        """The serialized ``ModelProto``, weights inline."""
        if self._ir is not None:
            return self.model_proto.SerializeToString()
        if self._bytes is None:
            self._bytes = self._program.model_bytes()
        return self._bytes

    @property
    def model(self) -> Any:
        """The model as an ``onnx_ir.Model`` (needs onnx-ir: ``pip install fxonnx[onnx]``)."""
        if self._ir is None:
            ir = _errors.require("onnx_ir", "onnx", "ONNXProgram.model")
            if self._program.weight_bytes > 256 * 1024 * 1024:
                # Large: weights stay in a file beside it, mapped on demand, not copied into Python.
                self._tempdir = tempfile.TemporaryDirectory(prefix="fxonnx_", ignore_cleanup_errors=True)
                path = os.path.join(self._tempdir.name, "model.onnx")
                self._program.save(path, True, True)
                self._ir = ir.load(path)
            else:
                onnx = _errors.require("onnx", "onnx", "ONNXProgram.model")
                self._ir = ir.serde.deserialize_model(onnx.ModelProto.FromString(self._program.model_bytes()))
        return self._ir

    @model.setter
    def model(self, value: Any) -> None:
        self._ir = value
        self.release()

    @property
    def model_proto(self) -> Any:
        """The model as an ``onnx.ModelProto`` (needs onnx)."""
        onnx = _errors.require("onnx", "onnx", "ONNXProgram.model_proto")
        if self._ir is not None:
            ir = _errors.require("onnx_ir", "onnx", "ONNXProgram.model_proto")
            return ir.serde.serialize_model(self._ir)
        return onnx.ModelProto.FromString(self.model_bytes)

    @property
    def warnings(self) -> list[str]:
        """What the export dropped or changed that a user should know about."""
        return list(self._program.warnings)

    @property
    def report_path(self) -> pathlib.Path | None:
        p = self._program.report_path
        return pathlib.Path(p) if p is not None else None

    @property
    def report(self) -> str | None:
        """The export report's markdown, when ``report=True`` wrote one."""
        p = self.report_path
        return p.read_text(encoding="utf-8") if p is not None else None

    def __repr__(self) -> str:
        line = (f"ONNXProgram(opset {self._program.opset}, "
                f"{self._program.node_count} nodes, {self._program.initializer_count} initializers, "
                f"{self._program.weight_bytes / 2**20:.1f} MiB of weights")
        if self._capture_strategy:
            line += f", captured with {self._capture_strategy}"
        return line + ")"

    def __str__(self) -> str:
        """The one-line repr, then the model's text and the exported program."""
        lines = [repr(self), "    model="]
        lines.append("\n".join("        " + line for line in self._program.text().splitlines()))
        if self.exported_program is not None:
            lines.append("    exported_program=")
            lines.append("\n".join("        " + line for line in str(self.exported_program).splitlines()))
        return "\n".join(lines)

    # --- saving ------------------------------------------------------------------------------

    def save(self, destination: str | os.PathLike, *, include_initializers: bool = True,
             keep_initializers_as_inputs: bool = False, external_data: bool | None = None,
             genai: bool | str | os.PathLike = False) -> None:
        """Save the model, with torch.onnx's meanings:

        * ``include_initializers=True, keep_initializers_as_inputs=False`` (default): the weights
          are in the model;
        * ``True, True``: the weights are in the model and also graph inputs (overridable);
        * ``False, False``: no weights, and they are not inputs (to attach them later);
        * ``False, True``: no weights, each a graph input of its type and shape (a weight-free
          model: ``fxonnx.apply_weights`` puts them back from the archive).

        ``external_data=True`` writes the weights to ``<file>.data`` beside the model; ``None``
        does so when they exceed 1.5 GiB (torch.onnx's rule) or protobuf's 2 GiB limit.

        ``genai=True`` also writes ``genai_config.json`` for ONNX Runtime GenAI (``fxonnx.genai``);
        ``genai=DIR``, a transformers checkpoint folder, gives its values and tokenizer files."""
        destination = os.fspath(destination)
        self._save_model(destination, include_initializers, keep_initializers_as_inputs, external_data)
        if genai is not False:
            self._write_genai_config(destination, None if genai is True else genai)

    def _write_genai_config(self, model_path: str | os.PathLike,
                            model_dir: str | os.PathLike | None) -> list[pathlib.Path]:
        # fxonnx.genai.write_config's body: here, so that saving needs no import of the module above.
        written, notes = self._program.write_genai_config(
            os.fspath(model_path), None if model_dir is None else os.fspath(model_dir))
        for note in notes:
            # The caller of save() or of fxonnx.genai.write_config.
            warnings.warn(note, stacklevel=3)
        return [pathlib.Path(p) for p in written]

    def _save_model(self, destination: str, include_initializers: bool, keep_initializers_as_inputs: bool,
                    external_data: bool | None) -> None:
        # Rust saves the model as exported, and the weight-free form of an archive (each weight an
        # input recording where it lies in the archive, for fxonnx.apply_weights); the other forms
        # go through onnx_ir, as torch.onnx's do.
        from_archive = not isinstance(self._source, dict)
        rust_form = (include_initializers and not keep_initializers_as_inputs) or (
            from_archive and not include_initializers and keep_initializers_as_inputs)
        if self._ir is None and rust_form:
            external = bool(external_data) if external_data is not None else (
                self._program.weight_bytes > _LARGE_MODEL_THRESHOLD)
            try:
                self._program.save(destination, include_initializers, external)
            except _fxonnx.ExportError as e:
                raise _errors.pythonize(e) from None
            return
        self._refuse_overwriting_the_archive(destination)
        ir = _errors.require("onnx_ir", "onnx", "ONNXProgram.save with these options")
        model = self.model
        graph = model.graph
        initializers = dict(graph.initializers)
        inputs = list(graph.inputs)
        if not include_initializers:
            graph.initializers.clear()
        if keep_initializers_as_inputs:
            graph.inputs.extend(v for v in initializers.values() if v not in inputs)
        folder = os.path.dirname(os.path.abspath(destination))
        name = os.path.basename(destination)
        try:
            size = sum(v.const_value.nbytes for v in graph.initializers.values() if v.const_value is not None)
            external = bool(external_data or (external_data is None and size > _LARGE_MODEL_THRESHOLD))
            # As Rust's saves: written in a temporary folder beside the destination, then moved
            # into place under the folder's lock, the data file (`<f>.data`, torch.onnx's name)
            # before the model; a failed save leaves the old pair.
            with tempfile.TemporaryDirectory(prefix=".fxonnx-save-", dir=folder) as temp:
                if external:
                    ir.save(model, os.path.join(temp, name), external_data=name + ".data")
                else:
                    ir.save(model, os.path.join(temp, name))
                with _folder_lock(folder):
                    for written in sorted(os.listdir(temp), key=lambda n: n == name):
                        os.replace(os.path.join(temp, written), os.path.join(folder, written))
                    if not external and os.path.isfile(os.path.join(folder, name + ".data")):
                        # The old model's data, which the new one does not read.
                        os.remove(os.path.join(folder, name + ".data"))
        except OSError as e:
            err = _fxonnx.SaveError(f"cannot write {destination}: {e}; hint: check the folder exists, is "
                                    "writable and has room")
            _errors._init_fields(err, "save", hint="check the folder exists, is writable and has room")
            raise err from e
        finally:
            if not include_initializers:
                graph.initializers.update(initializers)
            if keep_initializers_as_inputs:
                graph.inputs.clear()
                graph.inputs.extend(inputs)

    def _refuse_overwriting_the_archive(self, destination: str) -> None:
        """The save through onnx_ir refuses the archive being exported, as Rust's saves do."""
        source = self._source if isinstance(self._source, (str, os.PathLike)) else None
        if source is not None and os.path.exists(destination) and os.path.samefile(source, destination):
            err = _fxonnx.SaveError(f"refusing to write {destination}: it is the archive being exported; "
                                    "hint: choose another output path")
            _errors._init_fields(err, "save", hint="choose another output path")
            raise err

    def apply_weights(self, state_dict: Mapping[str, Any]) -> None:
        """Replace initializers by name with the tensors of ``state_dict`` (unknown names are
        skipped with a warning, as torch.onnx does)."""
        import torch

        from torch.onnx._internal.exporter._core import TorchTensor

        graph = self.model.graph
        for name, tensor in state_dict.items():
            if name in graph.initializers:
                if tensor.dtype.is_complex:
                    tensor = torch.view_as_real(tensor)
                graph.initializers[name].const_value = TorchTensor(tensor, name)
            else:
                warnings.warn(f"Weight '{name}' not found in the model. Skipped applying.", stacklevel=2)
        self.release()

    def rename_axes(self, rename_mapping: Mapping[Any, str]) -> None:
        """Rename symbolic dims: ``{"batch": "N", "s27": "seq"}`` (current names or the program's
        symbols; onnx_ir ``SymbolicDim``s are accepted as keys). Derived dims follow (``2*N``)."""
        mapping = {str(getattr(k, "value", k)): v for k, v in rename_mapping.items()}
        if self._ir is not None:
            from torch.onnx._internal.exporter import _ir_passes

            _ir_passes.rename_axis(self._ir, mapping)
            self.release()
            return
        names = dict(self._options["dim_names"])
        for old, new in mapping.items():
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
        if self._ir is not None:
            raise OptionsError("optimize() runs on the exported program, before `model` is read; "
                               "export with optimize=True instead")
        self._program.optimize()
        self._bytes = None
        self.release()

    # --- running -----------------------------------------------------------------------------

    def _session_model(self) -> Any:
        """What onnxruntime loads: the bytes, or a file with external data for a large model."""
        if self._program.weight_bytes > _LARGE_MODEL_THRESHOLD:
            self._tempdir = self._tempdir or tempfile.TemporaryDirectory(prefix="fxonnx_", ignore_cleanup_errors=True)
            path = os.path.join(self._tempdir.name, "session.onnx")
            self.save(path, external_data=True)
            return path
        return self.model_bytes

    def initialize_inference_session(self, initializer: Any = None) -> None:
        """Create the onnxruntime session ``__call__`` uses (``initializer(model)`` if given)."""
        if initializer is None:
            ort = _errors.require("onnxruntime", "onnxruntime", "running an ONNXProgram")
            options = ort.SessionOptions()
            options.log_severity_level = 3
            providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider")
                         if p in ort.get_available_providers()]
            self._inference_session = ort.InferenceSession(self._session_model(), providers=providers,
                                                           sess_options=options)
        else:
            self._inference_session = initializer(self._session_model())

    @property
    def _session(self) -> Any:
        return self._inference_session

    def release(self) -> None:
        """Drop the inference session (and the temporary files of a large model's session)."""
        self._inference_session = None

    def _graph_input_names(self) -> list[str]:
        if self._ir is not None:
            return [v.name for v in self._ir.graph.inputs]
        return [i.name for i in self._inference_session.get_inputs()]

    def _constant_leaves(self) -> list[bool] | None:
        """Per leaf of the program's inputs, whether the program specialized it to a constant
        (an int, float, bool or None it was captured with: not a graph input); ``None`` when the
        program is not at hand."""
        ep = self.exported_program
        if ep is None:
            return None
        specs = [s for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
        return [type(s.arg).__name__ == "ConstantArgument" for s in specs]

    def _feeds(self, args: Any, kwargs: Any, numpy: bool = False, names: list[str] | None = None) -> list[Any]:
        """The graph inputs of a call, in order; a count that does not match the model's inputs is
        an error (never a partial or shifted feed)."""
        feeds = _flatten_inputs(args, kwargs, numpy=numpy, constants=self._constant_leaves())
        names = names if names is not None else [i.name for i in self._inference_session.get_inputs()]
        if len(feeds) != len(names):
            raise ValueError(f"the model takes {len(names)} inputs ({', '.join(names)}); the call gives "
                             f"{len(feeds)} tensors and numbers after flattening")
        return feeds

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the model in onnxruntime on the program's inputs (nested as the program takes them);
        returns a tuple of torch tensors (numpy arrays without torch)."""
        if self._inference_session is None:
            self.initialize_inference_session()
        feeds = self._feeds(args, kwargs)
        try:
            import torch  # noqa: F401
            from torch.onnx._internal.exporter._onnx_program import _from_ort_value, _to_ort_value
        except ImportError:
            names = [i.name for i in self._inference_session.get_inputs()]
            return tuple(self._inference_session.run(None, dict(zip(names, feeds))))
        ort = _errors.require("onnxruntime", "onnxruntime", "running an ONNXProgram")
        names = [i.name for i in self._inference_session.get_inputs()]
        ort_input = {name: _to_ort_value(v) for name, v in zip(names, feeds)}
        run_options = ort.RunOptions()
        run_options.log_severity_level = 3
        outputs = self._inference_session.run_with_ort_values(None, ort_input, run_options=run_options)
        return tuple(_from_ort_value(o) for o in outputs)

    def call_reference(self, *args: Any, **kwargs: Any) -> Any:
        """Run the model with ``onnx.reference.ReferenceEvaluator`` (needs onnx)."""
        _errors.require("onnx", "onnx", "ONNXProgram.call_reference")
        import onnx.reference

        proto = self.model_proto
        evaluator = onnx.reference.ReferenceEvaluator(proto)
        names = [i.name for i in proto.graph.input]
        feeds = self._feeds(args, kwargs, numpy=True, names=names)
        outputs = evaluator.run(None, dict(zip(names, feeds)))
        try:
            from torch.onnx._internal.exporter._onnx_program import _from_numpy_array

            return tuple(_from_numpy_array(o) for o in outputs)
        except ImportError:
            return tuple(outputs)

    def compute_values(self, value_names: Sequence[str], args: Any = (), kwargs: Any = None) -> Any:
        """The values named ``value_names`` inside the model on these inputs (the graph's outputs
        are set to them for the run)."""
        self.release()
        graph = self.model.graph
        values: dict[str, Any] = dict(graph.initializers)
        values.update({v.name: v for v in graph.inputs if v.name})
        for node in graph:
            values.update({v.name: v for v in node.outputs if v.name})
        missing = [n for n in value_names if n not in values]
        if missing:
            raise ValueError(f"Value '{missing[0]}' not found in the model. Please provide a valid value name.")
        original = list(graph.outputs)
        graph.outputs.clear()
        graph.outputs.extend(values[n] for n in value_names)
        try:
            return self(*args, **(kwargs or {}))
        finally:
            graph.outputs.clear()
            graph.outputs.extend(original)
            self.release()

    def verify(self, *, raise_on_mismatch: bool = True, compare_unoptimized: bool = False) -> VerificationResult:
        """Run the model in onnxruntime and the exported program in torch on the example inputs
        and on inputs with other sizes within each dynamic dim's range; compare every output's
        shape, dtype and values. With ``compare_unoptimized``, the model exported without the
        optimizer is compared too. Raises ``VerificationError`` naming the first output that
        differs, or the first dynamic dim that came out static."""
        from . import _torch

        if self.exported_program is None:
            raise OptionsError("verify needs the exported program: export a module or an ExportedProgram")
        result = _torch.verify(self)
        for input_set, why in result.skipped:
            warnings.warn(f"verify: not compared on the {input_set} inputs: {why}", UserWarning, stacklevel=2)
        if compare_unoptimized:
            plain = ONNXProgram(_fxonnx.export(self._source, **{**self._options, "optimize": False}),
                                self.exported_program, {**self._options, "optimize": False}, self._source)
            for c in _torch.verify(plain).comparisons:
                c.input_set = f"{c.input_set}, unoptimized model"
                result.comparisons.append(c)
        self.verification = result
        p = self.report_path
        if p is not None:
            with open(p, "a", encoding="utf-8") as f:
                f.write("\n## Verification\n\n" + result.markdown())
        if raise_on_mismatch and self.static_dims:
            from ._capture import static_dims_message

            raise VerificationError(static_dims_message(self.static_dims), result, None)
        if raise_on_mismatch and not result.passed:
            bad = next(c for c in result.comparisons if not c.passed)
            why = bad.note or f"max abs error {bad.max_abs_error:.3g}, max rel error {bad.max_rel_error:.3g}"
            raise VerificationError(
                f"output `{bad.output}` differs from the program on the {bad.input_set} inputs ({why})",
                result,
                bad.output,
            )
        return result


def _flatten_inputs(args: Sequence[Any], kwargs: Mapping[str, Any] | None, numpy: bool = False,
                    constants: list[bool] | None = None) -> list[Any]:
    """The graph inputs of nested (args, kwargs), flattened as torch.onnx does: ``None`` dropped,
    complex tensors as their real view; with ``constants`` (one flag per leaf, ``None`` included),
    the leaves the program specialized to constants dropped too."""
    try:
        import torch
        import torch.utils._pytree as pytree

        leaves = pytree.tree_flatten((tuple(args), dict(kwargs or {})), is_leaf=lambda x: x is None)[0]
    except ImportError:
        torch = None
        leaves = list(args) + list((kwargs or {}).values())
    if constants is not None and len(constants) == len(leaves):
        leaves = [x for x, constant in zip(leaves, constants) if not constant]
    out = []
    for leaf in leaves:
        if leaf is None:
            continue
        if torch is not None and isinstance(leaf, torch.Tensor) and leaf.is_complex():
            leaf = torch.view_as_real(leaf.resolve_conj())
        if numpy:
            if torch is not None and isinstance(leaf, torch.Tensor):
                from torch.onnx._internal.exporter._onnx_program import _to_numpy_array

                leaf = _to_numpy_array(leaf)
            elif isinstance(leaf, (int, float, bool)):
                import numpy as np

                leaf = np.array(leaf, dtype=np.int64 if isinstance(leaf, int) and not isinstance(leaf, bool)
                                else np.float32 if isinstance(leaf, float) else np.bool_)
        out.append(leaf)
    return out


# --- export --------------------------------------------------------------------------------------


def _printer(verbose: bool | None):
    if verbose is False:
        return lambda *_: None
    return lambda message: print("[fxonnx]", message)


def _is_archive(model: Any) -> bool:
    return isinstance(model, (bytes, bytearray, memoryview, str, os.PathLike))


def _is_exported_program(model: Any) -> bool:
    return type(model).__name__ == "ExportedProgram"


def _is_torchscript_file(model: Any) -> bool:
    """A file ``torch.jit.save`` wrote (a zip holding ``constants.pkl`` and ``code/``), not a ``.pt2``."""
    import zipfile

    if not isinstance(model, (str, os.PathLike)):
        return False
    try:
        with zipfile.ZipFile(model) as z:
            return any(n.endswith("/constants.pkl") or n == "constants.pkl" for n in z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


@contextlib.contextmanager
def _profiled(profile: bool, sink: list):
    if not profile:
        yield
        return
    try:
        import pyinstrument
    except ImportError as e:
        raise _errors.MissingPackageError(
            "profile=True needs the `pyinstrument` package, which is not installed; install it with "
            "`pip install pyinstrument` (torch.onnx needs it too)"
        ) from e
    profiler = pyinstrument.Profiler(async_mode="disabled")
    profiler.start()
    try:
        yield
    finally:
        profiler.stop()
        sink.append(profiler.output_text(unicode=True))


def export(
    model: Any,
    args: Any = (),
    f: str | os.PathLike | io.BytesIO | None = None,
    *,
    kwargs: Mapping[str, Any] | None = None,
    verbose: bool | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    dynamo: bool = True,
    external_data: bool = True,
    dynamic_shapes: Any = None,
    custom_translation_table: Mapping[Any, Any] | None = None,
    report: bool = False,
    optimize: bool = True,
    verify: bool = False,
    profile: bool = False,
    dump_exported_program: bool = False,
    artifacts_dir: str | os.PathLike = ".",
    export_params: bool = True,
    keep_initializers_as_inputs: bool = False,
    dynamic_axes: Mapping[str, Any] | None = None,
    training: Any = None,
    operator_export_type: Any = None,
    do_constant_folding: bool = True,
    custom_opsets: Mapping[str, int] | None = None,
    export_modules_as_functions: bool | Collection[type] = False,
    autograd_inlining: bool = True,
    tree_names: bool = False,
    functions: str | Sequence[str] | None = None,
    dim_names: Mapping[str, str] | None = None,
    max_memory: int | None = None,
    mutations_as_outputs: bool = False,
    target: str = "onnx",
    quantize: str | None = None,
    quantize_block: int = DEFAULT_QUANTIZE_BLOCK,
) -> ONNXProgram:
    """Export ``model`` to ONNX: ``torch.onnx.export(..., dynamo=True)``'s call, argument for
    argument, with the conversion in Rust.

    ``model`` is an ``nn.Module`` (captured with torch.export as torch.onnx captures it: non-strict,
    then strict; strings and named ``Dim``s in ``dynamic_shapes`` name the ONNX dims and are
    captured as ``Dim.DYNAMIC``), a ``torch.export.ExportedProgram`` (converted in memory,
    weights read in place), the path of a ``.pt2`` archive, or its bytes.

    ``f``: the model is also saved there (``external_data`` as torch.onnx decides: weights in
    ``<f>.data``). ``training``, ``operator_export_type``, ``do_constant_folding``,
    ``custom_opsets`` and ``autograd_inlining`` are accepted and ignored, as on torch.onnx's dynamo
    path; ``export_modules_as_functions`` makes the calls of those module classes ONNX functions.
    ``dynamo=False`` takes the model as torch.onnx's TorchScript exporter did: a module traced on
    ``args``, a ``ScriptModule`` / ``ScriptFunction`` or a ``torch.jit.save`` file, converted into
    the same program form (``_torchscript``); ``dynamic_axes`` names its dynamic axes.

    fxonnx's own keywords: ``tree_names`` (name inputs and outputs after the program's input and
    output trees: ``past_key_values.0.key``, ``logits``), ``functions`` (``"auto"`` or class
    names), ``dim_names`` (``{"s77": "batch"}``), ``max_memory`` (bytes for the constants an export
    computes), ``mutations_as_outputs`` (mutated buffers as extra outputs, for static caches),
    ``target`` (``"onnx"``, standard ONNX; ``"onnxruntime"`` / ``"onnxruntime-cpu"`` /
    ``"onnxruntime-cuda"``: also ONNX Runtime's faster forms, as ``--target``; without
    ``opset_version``, opset 23 for a program that calls attention), ``quantize`` (``"int4"`` or
    ``"int8"``, with an ONNX Runtime ``target``: MatMul weights as ``com.microsoft.MatMulNBits``,
    ``quantize_block`` weights per scale, 32 by default; lossy).
    """
    with _errors.TorchOnnxErrors():
        del custom_opsets, autograd_inlining, operator_export_type
        torchscript = dynamo is False and not _is_exported_program(model)
        if torchscript and do_constant_folding is False:
            optimize = False  # the TorchScript exporter's switch for its folding: nothing is rewritten
        is_archive = _is_archive(model) and not (torchscript and _is_torchscript_file(model))

        script_file = torchscript and _is_torchscript_file(model)
        if not is_archive and not script_file and not callable(model) and type(model).__name__ != "ExportedProgram":
            raise TypeError(
                f"model must be a torch.nn.Module, a torch.export.ExportedProgram, the path of a .pt2 archive or its "
                f"bytes; got {type(model).__name__}"
            )
        if verify:
            _errors.require("torch", "verify", "verify=True")
            _errors.require("onnxruntime", "verify", "verify=True")
        # Without an opset, an ONNX Runtime target lets the export choose (23 for a program with
        # attention, else 20); a custom table's functions are built for the opset, which is then 20.
        chosen = str(target).startswith("onnxruntime") and opset_version is None and not custom_translation_table
        opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
        printer = _printer(verbose)
        artifacts = pathlib.Path(artifacts_dir)
        if report or profile or dump_exported_program:
            artifacts.mkdir(parents=True, exist_ok=True)
        if export_modules_as_functions and functions is None:
            functions = "auto" if export_modules_as_functions is True else [
                c if isinstance(c, str) else f"{c.__module__}.{c.__qualname__}" for c in export_modules_as_functions
            ]
        options = dict(
            input_names=list(input_names or []),
            output_names=list(output_names or []),
            opset_version=None if chosen else opset,
            dim_names=dict(dim_names or {}),
            external_data=False,
            optimize=optimize,
            report=report,
            artifacts_dir=os.fspath(artifacts),
            max_memory=max_memory,
            module_functions=[functions] if isinstance(functions, str) else list(functions or []) or None,
            tree_names=tree_names,
            mutations_as_outputs=mutations_as_outputs,
            target=target,
        )
        if quantize is not None:
            bits = {"int4": 4, "int8": 8}.get(quantize)
            if bits is None:
                raise OptionsError(f"quantize={quantize!r}: choose 'int4' or 'int8'")
            options["weight_quantization"] = {"bits": bits, "block_size": int(quantize_block)}
        timestamp = _timestamp()
        profile_text: list[str] = []
        exported = None
        capture = None
        static: list = []
        with _profiled(profile, profile_text):
            if is_archive:
                if custom_translation_table:
                    raise OptionsError(
                        "custom_translation_table needs the program in memory: export the nn.Module or its "
                        "ExportedProgram (a .pt2 archive is read by Rust as it is)"
                    )
                source: Any = bytes(model) if isinstance(model, (bytes, bytearray, memoryview)) else os.fspath(model)
                if dynamic_shapes is not None:
                    from . import _archive_names

                    names, static = _archive_names.dim_names(source, dynamic_shapes)
                    options["dim_names"] = {**names, **options["dim_names"]}
                if verify:
                    from . import _torch

                    exported = _torch.load(source)
            else:
                from . import _torch

                exported, capture, names, static, source, kept_names = _torch.prepare(
                    model, args, kwargs, dynamic_shapes=dynamic_shapes, dynamic_axes=dynamic_axes,
                    input_names=input_names, output_names=output_names, table=custom_translation_table,
                    opset=opset, printer=printer, report=report, artifacts=artifacts, timestamp=timestamp,
                    dump=dump_exported_program, torchscript=torchscript, training=training,
                )
                options["dim_names"] = {**names, **options["dim_names"]}
                if kept_names is not None and input_names:
                    options["input_names"] = kept_names
            if static:
                from ._capture import static_dims_message

                message = static_dims_message(static)
                if verify:
                    err = VerificationError(message)
                    err.hint = message.split("hint: ", 1)[-1]
                    raise err
                warnings.warn(message, UserWarning, stacklevel=2)
            printer("Translate the graph into ONNX...")
            started = time.perf_counter()
            try:
                inner = _fxonnx.export(source, **options)
            except _fxonnx.ExportError as e:
                _errors.pythonize(e)
                printer("Translate the graph into ONNX... ❌")
                # The binding sets the report of the failed export (never another export's).
                report_path = e.report_path
                if report_path is not None:
                    from . import _reporting

                    _reporting.add_capture_section(report_path, capture, exported)
                if isinstance(e, _fxonnx.UnsupportedOpsError):
                    from . import _reporting

                    raise _reporting.python_route(e, exported, report_path, source) from None
                raise
            printer(f"Translate the graph into ONNX... ✅ ({time.perf_counter() - started:.1f} s)")
        program = ONNXProgram(inner, exported, options, source, capture.strategy if capture is not None else None)
        program.static_dims = static
        for w in program.warnings:
            warnings.warn(w, UserWarning, stacklevel=2)
        if report and program.report_path is not None:
            from . import _reporting

            _reporting.add_capture_section(program.report_path, capture, exported)
            if profile_text:
                with open(program.report_path, "a", encoding="utf-8") as fh:
                    fh.write("\n## Profiling result\n\n```\n" + profile_text[0] + "\n```\n")
        elif profile_text:
            printer("Profile result:")
            printer(profile_text[0])
        if f is not None:
            if isinstance(f, io.BytesIO):
                warnings.warn("Saving ONNX model to a BytesIO object is deprecated. Please use a file path instead.",
                              DeprecationWarning, stacklevel=2)
                f.write(program.model_bytes)
            else:
                program.save(f, include_initializers=export_params,
                             keep_initializers_as_inputs=keep_initializers_as_inputs, external_data=external_data)
        if verify:
            printer("Verify the model with ONNX Runtime...")
            program.verify()
            printer("Verify the model with ONNX Runtime... ✅")
        return program
