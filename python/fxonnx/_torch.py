"""The torch side: capturing a module as torch.onnx does, the names of its dynamic dims, and
verifying a model against the program. Imported only when torch is needed."""

from __future__ import annotations

import copy
import io
import math
import pathlib
import time
import warnings
from typing import Any

import torch
import torch.utils._pytree as pytree


def prepare(model, args, kwargs, *, dynamic_shapes, dynamic_axes, input_names, output_names, table, opset,
            printer, report, artifacts, timestamp, dump, torchscript=False, training=None):
    """Capture ``model`` as torch.onnx does (itself when it is an ExportedProgram) and serialize it
    for Rust in memory. Returns the program, the capture (``None`` for an ExportedProgram), the
    dim names (``{"s77": "batch"}``), the axes asked dynamic that came out static, the archive
    entries, and the input names for the graph where they are no longer the ones given (``None``:
    as given; the TorchScript front end drops the inputs the program never reads)."""
    from . import _capture, _custom, _reporting

    custom = _custom.Table.of(table)
    capture = None
    if torchscript:
        from . import _torchscript

        args, kwargs = _capture.normalize_args(args, kwargs)
        t0 = time.perf_counter()
        printer("Convert the TorchScript program...")
        program = _torchscript.convert(model, args, kwargs, dynamic_axes=dynamic_axes, input_names=input_names,
                                       training=training, opset=opset)
        printer(f"Convert the TorchScript program... ✅ ({time.perf_counter() - t0:.1f} s, "
                f"{len(program.exported.graph.nodes)} nodes)")
        exported = program.exported
        names: dict[str, str] = dict(program.dim_names)
        static: list = []
        exported, entries = _entries_translatable(exported, custom, opset)
        if exported is not program.exported:
            names = _names_after_retrace(program.exported, exported, names)
        return exported, None, names, static, entries, program.input_names
    if isinstance(model, torch.export.ExportedProgram):
        exported = model
    else:
        args, kwargs = _capture.normalize_args(args, kwargs)
        if dynamic_shapes is None and dynamic_axes is not None:
            dynamic_shapes, args, kwargs = _capture.dynamic_axes_to_dynamic_shapes(
                model, args, kwargs, dynamic_axes, input_names, output_names
            )
        shapes, _ = _capture.strings_to_dims(dynamic_shapes)
        capture = _capture.capture(model, args, kwargs, shapes, printer)
        if capture.exported_program is None:
            path = _reporting.capture_failure_report(artifacts, timestamp, capture) if report else None
            raise _capture.capture_error(capture, path, _torchscript_exports(model, args, kwargs, dynamic_axes,
                                                                              input_names, opset))
        specialized = _capture.recapture_if_wrong(model, args, kwargs, shapes, capture, printer)
        if specialized is not None:
            warnings.warn(specialized.message(), UserWarning, stacklevel=3)
        exported = capture.exported_program
    names: dict[str, str] = {}
    static: list = []
    if dynamic_shapes is not None:
        _, named = _capture.strings_to_dims(dynamic_shapes)
        mapping, static = _capture.dim_names_and_static(exported, dynamic_shapes, warn=named)
        if named:
            names = mapping
    if dump:
        path = pathlib.Path(artifacts) / f"fxonnx_export_{timestamp}.pt2"
        try:
            torch.export.save(exported, path)
            printer(f"ExportedProgram has been saved to '{path}' (re-run it with `fxonnx export {path}`).")
        except Exception as e:  # torch cannot write every program; the export goes on
            printer(f"Failed to save ExportedProgram due to an error: {e}")
    t0 = time.perf_counter()
    printer(f"Hand the program ({len(exported.graph.nodes)} nodes) to the converter...")
    exported, entries = _entries_translatable(exported, custom, opset)
    printer(f"Hand the program ({len(exported.graph.nodes)} nodes) to the converter... ✅ "
            f"({time.perf_counter() - t0:.1f} s)")
    return exported, capture, names, static, entries, None


def _torchscript_exports(model, args, kwargs, dynamic_axes, input_names, opset) -> bool:
    """Whether ``dynamo=False`` exports the model torch.export could not capture: its TorchScript
    program converted and translated, as that export would (the model saved nowhere)."""
    from . import _fxonnx, _torchscript

    if kwargs or not isinstance(model, torch.nn.Module):
        return False
    try:
        program = _torchscript.convert(model, args, {}, dynamic_axes=dynamic_axes, input_names=input_names,
                                       opset=opset)
        _, entries = _entries_translatable(program.exported, None, opset)
        _fxonnx.export(entries, opset_version=opset, dim_names=program.dim_names)
        return True
    except Exception:  # any failure: then the hint does not say it
        return False


def _names_after_retrace(before: Any, after: Any, names: dict[str, str]) -> dict[str, str]:
    """Dim names for the symbols of ``after``, a program traced again from ``before`` (its
    decompositions): each input axis keeps its name under the symbol it has now."""
    renamed: dict[str, str] = {}
    old = before.graph.find_nodes(op="placeholder")
    new = after.graph.find_nodes(op="placeholder")
    for a, b in zip(old, new):
        va, vb = a.meta.get("val"), b.meta.get("val")
        if not isinstance(va, torch.Tensor) or not isinstance(vb, torch.Tensor) or va.dim() != vb.dim():
            continue
        for x, y in zip(va.shape, vb.shape):
            if str(x) in names and isinstance(y, torch.SymInt) and y.node.maybe_as_int() is None:
                renamed.setdefault(str(y), names[str(x)])
    return renamed


def _entries_translatable(exported: Any, custom: Any, opset: int) -> tuple[Any, dict]:
    """The program's archive entries; ops fxonnx has no translation for (nor the custom table)
    but torch can decompose (a custom op with a CompositeImplicitAutograd kernel, as torch.onnx's
    decomposition step does) are decomposed first, those ops only."""
    from . import _custom, _fxonnx, _serialize

    translator = custom.translator(opset) if custom is not None else None
    entries = _serialize.entries(exported, translator)
    missing = _fxonnx.untranslated_ops(entries)
    if not missing:
        return exported, entries
    keys = {m[1] for m in missing}
    table = torch.export.default_decompositions()
    wanted = {op for op in list(table.keys()) if isinstance(op, torch._ops.OpOverload)
              and _custom.target_key(op) in keys}
    if not wanted:
        return exported, entries
    for op in list(table.keys()):
        if op not in wanted:
            del table[op]
    # Decomposed without example inputs: torch then writes no guard function into the module it
    # traces, whose code names the shape environment's sources, which a program converted from
    # TorchScript (its constants made fake without a source) cannot resolve. On a shallow copy: the
    # caller's program is never changed, even for a moment another thread could see.
    bare = copy.copy(exported)
    bare._example_inputs = None
    decomposed = bare.run_decompositions(table)
    decomposed._example_inputs = exported._example_inputs
    return decomposed, _serialize.entries(decomposed, translator)


def archive_bytes(exported: Any) -> bytes:
    """The ``.pt2`` archive of ``exported``, in memory."""
    buffer = io.BytesIO()
    torch.export.save(exported, buffer)
    return buffer.getvalue()


def load(source: Any) -> Any:
    return torch.export.load(io.BytesIO(source) if isinstance(source, bytes) else source)


# Verification.

TOLERANCES = {
    torch.float64: (1e-7, 1e-5),
    torch.float32: (1e-4, 1e-3),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 5e-2),
}


def _other_sizes(exported: Any) -> dict[str, int]:
    """A size for each symbol other than the example's, within its range (2 or more, so that no
    dim becomes 0 or 1)."""
    sizes: dict[str, int] = {}
    example = pytree.tree_leaves(exported.example_inputs) if exported.example_inputs else []
    user = [s.arg.name for s in exported.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    placeholders = {n.name: n for n in exported.graph.nodes if n.op == "placeholder"}
    ranges = {str(k): v for k, v in exported.range_constraints.items()}
    for tensor, name in zip(example, user):
        val = placeholders[name].meta.get("val")
        if not isinstance(tensor, torch.Tensor) or val is None:
            continue
        for d, actual in zip(val.shape, tensor.shape):
            symbol = str(d)
            if isinstance(d, torch.SymInt) and symbol.isidentifier() and symbol not in sizes:
                r = ranges.get(symbol)
                low = max(2, int(r.lower) if r is not None and math.isfinite(float(r.lower)) else 2)
                high = int(r.upper) if r is not None and math.isfinite(float(r.upper)) else actual + 3
                candidates = [actual + 1, actual + 2, actual - 1]
                sizes[symbol] = next((c for c in candidates if low <= c <= high and c != actual), actual)
    return sizes


def _resized(exported: Any, sizes: dict[str, int]) -> tuple[tuple, dict]:
    """The example inputs with each symbolic dim at its size in ``sizes``; values drawn like the
    example's (floats from a normal distribution, integers within the example's range)."""
    import sympy

    args, kwargs = exported.example_inputs
    user = [s.arg.name for s in exported.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    placeholders = {n.name: n for n in exported.graph.nodes if n.op == "placeholder"}
    leaves, spec = pytree.tree_flatten((args, kwargs))
    generator = torch.Generator().manual_seed(0)
    out = []
    for leaf, name in zip(leaves, user):
        val = placeholders[name].meta.get("val")
        if not isinstance(leaf, torch.Tensor) or val is None:
            out.append(leaf)
            continue
        shape = []
        for d, actual in zip(val.shape, leaf.shape):
            if isinstance(d, torch.SymInt):
                expr = sympy.sympify(str(d))
                shape.append(int(expr.subs({sympy.Symbol(k): v for k, v in sizes.items()})))
            else:
                shape.append(actual)
        if leaf.dtype.is_floating_point or leaf.dtype.is_complex:
            new = torch.randn(shape, generator=generator, dtype=leaf.dtype if leaf.dtype.is_complex else None)
            new = new.to(leaf.dtype)
        elif leaf.dtype == torch.bool:
            new = torch.randint(0, 2, shape, generator=generator).bool()
        else:
            low, high = (int(leaf.min()), int(leaf.max()) + 1) if leaf.numel() else (0, 1)
            new = torch.randint(low, high, shape, generator=generator).to(leaf.dtype)
        out.append(new)
    return pytree.tree_unflatten(out, spec)


def _compare(input_set: str, names: list[str], expected: list[Any], actual: list[Any]) -> list[Any]:
    from ._verification import OutputComparison

    rows = []
    if not len(names) == len(expected) == len(actual):
        # Never compare a prefix: a model with an output more or less than the program differs.
        count = max(len(names), len(expected), len(actual))
        for i in range(count):
            name = names[i] if i < len(names) else f"output {i}"
            rows.append(OutputComparison(input_set, name, False, False, math.inf, math.inf, 0.0, 0.0, False,
                                         note=f"the model has {len(actual)} outputs, the program {len(expected)}"))
        return rows
    for name, e, a in zip(names, expected, actual):
        e = e.detach().cpu()
        a = torch.as_tensor(a)
        atol, rtol = TOLERANCES.get(e.dtype, (0.0, 0.0))
        shape_ok, dtype_ok = tuple(e.shape) == tuple(a.shape), e.dtype == a.dtype
        if shape_ok and e.numel():
            ed, ad = e.double(), a.double()
            diff = (ed - ad).abs()
            both_nan = ed.isnan() & ad.isnan()
            same_inf = ed.isinf() & (ed == ad)
            agree = both_nan | same_inf
            # NaN where only one side is NaN: infinitely far.
            diff = torch.where(agree, torch.zeros_like(diff), torch.nan_to_num(diff, nan=math.inf))
            max_abs = float(diff.max())
            # Relative to values above the absolute tolerance: near zero it says nothing.
            large = (ed.abs() > max(atol, 1e-12)) & ~agree
            max_rel = float((diff[large] / ed.abs()[large]).max()) if bool(large.any()) else 0.0
            values_ok = bool((agree | (diff <= atol + rtol * ed.abs())).all())
        else:
            max_abs = max_rel = 0.0 if shape_ok else math.inf
            values_ok = shape_ok
        note = "" if shape_ok else f"shape {tuple(a.shape)}, the program's {tuple(e.shape)}"
        if not dtype_ok:
            note = ", ".join(filter(None, [note, f"dtype {a.dtype}, the program's {e.dtype}"]))
        rows.append(OutputComparison(input_set, name, shape_ok, dtype_ok, max_abs, max_rel, atol, rtol,
                                     shape_ok and dtype_ok and values_ok, note))
    return rows


def _as_outputs(leaves: list) -> list:
    """The program's outputs as the model has them (torch.onnx's convention): ``None`` dropped,
    Python numbers as 0-d tensors, complex tensors as their real view."""
    out = []
    for x in leaves:
        if x is None:
            continue
        if not isinstance(x, torch.Tensor):
            x = torch.tensor(x)
        elif x.is_complex():
            x = torch.view_as_real(x.resolve_conj())
        out.append(x)
    return out


def verify(onnx_program: Any) -> Any:
    from ._verification import VerificationResult

    exported = onnx_program.exported_program
    if not exported.example_inputs:
        raise ValueError("the exported program carries no example inputs to verify on")
    from ._errors import VerificationError

    module = exported.module()
    try:
        onnx_program.initialize_inference_session()
    except Exception as e:
        err = VerificationError(f"ONNX Runtime cannot load the model: {type(e).__name__}: "
                                f"{str(e).splitlines()[0][:300] if str(e) else ''}")
        err.hint = "the model is exported but does not load in ONNX Runtime: report it with the program"
        raise err from e
    output_names = [o.name for o in onnx_program._session.get_outputs()]
    from ._capture import StateKept, clone_inputs, mutates

    kept = StateKept(exported) if mutates(exported) else None
    rows, skipped = [], []
    sets = [("example", exported.example_inputs)]
    sizes = _other_sizes(exported)
    if sizes:
        # Dims by the names the user gave them (`batch=4`), else the program's symbols.
        dim_names = dict(onnx_program._options.get("dim_names") or {})
        label = ", ".join(f"{dim_names.get(k, k)}={v}" for k, v in sorted(sizes.items()))
        sets.append((f"other sizes ({label})", _resized(exported, sizes)))
    for label, inputs in sets:
        # Each run on inputs of its own and the program's state as exported: an in-place op of
        # the program changes neither the caller's inputs nor the next run.
        args, kwargs = clone_inputs(inputs)
        try:
            with torch.no_grad():
                expected = _as_outputs(pytree.tree_leaves(module(*args, **kwargs)))
        except Exception as e:
            if label == "example":
                err = VerificationError(
                    f"verify cannot run the program in torch on its example inputs here: {type(e).__name__}: "
                    f"{str(e).splitlines()[0][:300] if str(e) else ''}")
                err.hint = "verify where the program runs (its device kernels), or check the model with your own inputs"
                raise err from e
            # Inputs made up for other sizes that the program itself refuses (sizes tied by a
            # runtime check, indices out of range): nothing to compare, and said so.
            skipped.append((label, f"the program refuses them: {type(e).__name__}: {str(e).splitlines()[0][:200]}"))
            continue
        finally:
            if kept is not None:
                kept.restore()
        args, kwargs = clone_inputs(inputs)
        try:
            actual = list(onnx_program(*args, **kwargs))
        except Exception as e:
            err = VerificationError(f"ONNX Runtime cannot run the model on the {label} inputs: {type(e).__name__}: "
                                    f"{str(e).splitlines()[0][:300] if str(e) else ''}")
            err.hint = "the model is exported but does not run in ONNX Runtime: report it with the program"
            raise err from e
        rows += _compare(label, output_names, expected, actual)
    return VerificationResult(rows, skipped)
