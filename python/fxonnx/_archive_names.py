"""Dim names from ``dynamic_shapes`` for a ``.pt2`` archive given as a path or bytes, without
torch: the program's user inputs and their symbolic sizes are read from the archive's JSON, and
``dynamic_shapes`` is flattened as torch.onnx flattens it (one leaf per input: a dict or list of
axes, or ``None``)."""

from __future__ import annotations

import io
import json
import re
import warnings
import zipfile
from typing import Any

_SYMBOL = re.compile(r"^Symbol\('([A-Za-z_][A-Za-z0-9_]*)'[^()]*\)$")


def _dim_like(v: Any) -> bool:
    return v is None or isinstance(v, (str, int)) or "Dim" in type(v).__name__


def _is_axes(x: Any) -> bool:
    if isinstance(x, dict):
        return all(isinstance(k, int) and _dim_like(v) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return all(_dim_like(v) for v in x)
    return False


def _flatten(x: Any) -> list[Any]:
    if x is None or _is_axes(x):
        return [x]
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in _flatten(v)]
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _flatten(v)]
    return [x]


def _name(d: Any) -> str | None:
    if isinstance(d, str):
        return d
    name = getattr(d, "__name__", None)
    return name if isinstance(name, str) and "Dim" in type(d).__name__ else None


def _program(source: Any) -> dict:
    data = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    with zipfile.ZipFile(data) as z:
        name = next((n for n in z.namelist() if n.endswith("models/model.json")), None)
        if name is None:
            return {}
        return json.loads(z.read(name))


def input_dims(source: Any) -> list[tuple[str, list[str | int | None]]]:
    """(name, dims) of each user input of the archive's program: ints, symbol names, or None for
    an expression."""
    program = _program(source)
    if not program:
        return []
    graph = program["graph_module"]["graph"]
    out = []
    for spec in program["graph_module"]["signature"]["input_specs"]:
        user = spec.get("user_input")
        if not user:
            continue
        arg = user["arg"]
        tensor = arg.get("as_tensor")
        if tensor is None:
            if arg.get("as_sym_int") is not None:
                out.append((arg["as_sym_int"].get("as_name", ""), []))
            continue
        meta = graph["tensor_values"].get(tensor["name"], {})
        dims: list[str | int | None] = []
        for size in meta.get("sizes", []):
            if "as_int" in size and size["as_int"] is not None:
                dims.append(size["as_int"])
            else:
                m = _SYMBOL.match(size.get("as_expr", {}).get("expr_str", ""))
                dims.append(m.group(1) if m else None)
        out.append((tensor["name"], dims))
    return out


def dim_names(source: Any, dynamic_shapes: Any) -> tuple[dict[str, str], list[tuple[str, int, str]]]:
    """Symbol → name for the axes ``dynamic_shapes`` names, and the named axes that are static in
    the program (input, axis, name)."""
    try:
        inputs = input_dims(source)
    except (OSError, zipfile.BadZipFile, KeyError, ValueError):
        return {}, []  # the export reports what is wrong with the archive
    flat = _flatten(dynamic_shapes)
    if len(flat) != len(inputs):
        warnings.warn(
            "# ONNX model has different number of inputs than the flatten dynamic_shapes. "
            "The dynamic axes will not be renamed.",
            UserWarning,
            stacklevel=3,
        )
        return {}, []
    mapping: dict[str, str] = {}
    static: list[tuple[str, int, str]] = []
    for (name, dims), axes in zip(inputs, flat):
        items = axes.items() if isinstance(axes, dict) else enumerate(axes) if isinstance(axes, (list, tuple)) else []
        for axis, d in items:
            asked = _name(d)
            if asked is None or axis >= len(dims):
                continue
            dim = dims[axis]
            if isinstance(dim, int):
                static.append((name, axis, asked))
            elif dim is not None:
                if dim in mapping:
                    warnings.warn(
                        f"# The axis name: {asked} will not be used, since it shares the same shape constraints "
                        f"with another axis: {mapping[dim]}.",
                        UserWarning,
                        stacklevel=3,
                    )
                    continue
                mapping[dim] = asked
    return mapping, static
