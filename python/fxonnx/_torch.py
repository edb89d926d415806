"""The torch side: capturing a module as torch.onnx does, the names of its dynamic dims, and
verifying a model against the program. Imported only when torch is needed."""

from __future__ import annotations

import inspect
import io
import math
from typing import Any

import torch
import torch.utils._pytree as pytree


def capture(model: Any, args: Any, kwargs: Any, dynamic_shapes: Any, input_names: Any) -> tuple[Any, dict[str, str]]:
    """The ExportedProgram of ``model`` (itself when it is one) and the names its dynamic dims
    get: ``{"s77": "batch"}`` from ``Dim("batch")`` or the string ``"batch"`` in ``dynamic_shapes``."""
    if isinstance(model, torch.export.ExportedProgram):
        return model, {}
    args = tuple(args) if isinstance(args, (tuple, list)) else ((args,) if args is not None else ())
    kwargs = dict(kwargs or {})
    # torch.export takes Dim objects: a string names a dim it should find on its own (Dim.AUTO),
    # as torch.onnx lets one write.
    shapes = _strings_to_auto(dynamic_shapes)
    exported = torch.export.export(model, args, kwargs=kwargs, dynamic_shapes=shapes, strict=False)
    named = _named_axes(model, args, kwargs, dynamic_shapes)
    return exported, _symbol_names(exported, named)


def archive_bytes(exported: Any) -> bytes:
    """The ``.pt2`` archive of ``exported``, in memory."""
    buffer = io.BytesIO()
    torch.export.save(exported, buffer)
    return buffer.getvalue()


def load(source: Any) -> Any:
    return torch.export.load(io.BytesIO(source) if isinstance(source, bytes) else source)


def _strings_to_auto(spec: Any) -> Any:
    if isinstance(spec, str):
        return torch.export.Dim.AUTO
    if isinstance(spec, dict):
        return {k: _strings_to_auto(v) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return type(spec)(_strings_to_auto(v) for v in spec)
    return spec


def _dim_name(d: Any) -> str | None:
    if isinstance(d, str):
        return d
    name = getattr(d, "__name__", None)
    return name if isinstance(name, str) else None


def _named_axes(model: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> dict[int, dict[int, str]]:
    """id(tensor) → {axis: name} for every axis ``dynamic_shapes`` names, found by walking the
    inputs and the spec together (dicts by key, sequences by position)."""
    out: dict[int, dict[int, str]] = {}
    if dynamic_shapes is None:
        return out

    def walk(value: Any, spec: Any) -> None:
        if spec is None:
            return
        if isinstance(value, torch.Tensor):
            axes = spec.items() if isinstance(spec, dict) else enumerate(spec) if isinstance(spec, (list, tuple)) else ()
            for axis, d in axes:
                name = _dim_name(d)
                if name is not None:
                    out.setdefault(id(value), {})[int(axis)] = name
        elif isinstance(value, dict) and isinstance(spec, dict):
            for k, v in value.items():
                walk(v, spec.get(k))
        elif isinstance(value, (list, tuple)) and isinstance(spec, (list, tuple)):
            for v, s in zip(value, spec):
                walk(v, s)

    forward = model.forward if hasattr(model, "forward") else model
    bound = inspect.signature(forward).bind(*args, **kwargs)
    values = list(bound.arguments.items())
    if isinstance(dynamic_shapes, dict):
        for name, value in values:
            walk(value, dynamic_shapes.get(name))
    else:
        for (_, value), spec in zip(values, dynamic_shapes):
            walk(value, spec)
    return out


def _symbol_names(exported: Any, named: dict[int, dict[int, str]]) -> dict[str, str]:
    """Symbol → name: each named axis of a user input is a symbol of the program's placeholder."""
    if not named:
        return {}
    user = [s.arg.name for s in exported.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    placeholders = {n.name: n for n in exported.graph.nodes if n.op == "placeholder"}
    leaves = pytree.tree_leaves(exported.example_inputs) if exported.example_inputs else []
    names: dict[str, str] = {}
    for tensor, name in zip(leaves, user):
        axes = named.get(id(tensor))
        node = placeholders.get(name)
        if not axes or node is None or not hasattr(node.meta.get("val"), "shape"):
            continue
        shape = node.meta["val"].shape
        for axis, dim_name in axes.items():
            if axis < len(shape) and isinstance(shape[axis], torch.SymInt):
                symbol = str(shape[axis])
                if symbol.isidentifier():
                    names.setdefault(symbol, dim_name)
    return names


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
        if leaf.dtype.is_floating_point:
            new = torch.randn(shape, generator=generator).to(leaf.dtype)
        elif leaf.dtype == torch.bool:
            new = torch.randint(0, 2, shape, generator=generator).bool()
        else:
            low, high = (int(leaf.min()), int(leaf.max()) + 1) if leaf.numel() else (0, 1)
            new = torch.randint(low, high, shape, generator=generator).to(leaf.dtype)
        out.append(new)
    return pytree.tree_unflatten(out, spec)


def _compare(input_set: str, names: list[str], expected: list[Any], actual: list[Any]) -> list[Any]:
    from ._api import OutputComparison

    rows = []
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
            diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
            max_abs = float(diff.max())
            # Relative to values above the absolute tolerance: near zero it says nothing.
            large = ed.abs() > max(atol, 1e-12)
            max_rel = float((diff[large] / ed.abs()[large]).max()) if bool(large.any()) else 0.0
            values_ok = bool((diff <= atol + rtol * ed.abs()).all())
        else:
            max_abs = max_rel = 0.0 if shape_ok else math.inf
            values_ok = shape_ok
        rows.append(OutputComparison(input_set, name, shape_ok, dtype_ok, max_abs, max_rel, atol, rtol,
                                     shape_ok and dtype_ok and values_ok))
    return rows


def verify(onnx_program: Any) -> Any:
    from ._api import VerificationResult

    exported = onnx_program.exported_program
    if not exported.example_inputs:
        raise ValueError("the exported program carries no example inputs to verify on")
    module = exported.module()
    onnx_program.initialize_inference_session()
    names = [o.name for o in onnx_program._session.get_outputs()]
    rows = []
    sets = [("example", exported.example_inputs)]
    sizes = _other_sizes(exported)
    if sizes:
        sets.append(("other sizes (" + ", ".join(f"{k}={v}" for k, v in sorted(sizes.items())) + ")",
                     _resized(exported, sizes)))
    for label, (args, kwargs) in sets:
        with torch.no_grad():
            expected = pytree.tree_leaves(module(*args, **kwargs))
        actual = onnx_program(*args, **kwargs)
        rows += _compare(label, names, expected, actual)
    return VerificationResult(rows)
