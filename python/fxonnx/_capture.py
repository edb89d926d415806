"""Capturing a module as torch.onnx captures it (torch/onnx/_internal/exporter/_capture_strategies.py):
the same strategies in the same order, under the same settings, and the dynamic-shape forms
torch.onnx accepts (strings, named ``Dim``s, ``dynamic_axes``) turned into what torch.export takes
and into the names the ONNX dims get. Imported only when torch is needed."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import time
import traceback
import warnings
from typing import Any, Callable

import torch
from torch.utils import _pytree

from . import _errors


@dataclasses.dataclass
class Attempt:
    """One capture strategy's run: its class name as torch.onnx names it, the time it took, and
    its error when it failed."""

    strategy: str
    title: str
    seconds: float
    error: BaseException | None = None

    @property
    def success(self) -> bool:
        return self.error is None

    def formatted_error(self) -> str:
        e = self.error
        return "".join(traceback.format_exception(type(e), e, e.__traceback__)) if e is not None else ""


@dataclasses.dataclass
class Capture:
    exported_program: Any
    strategy: str | None
    attempts: list[Attempt]
    seconds: float


# --- torch.onnx.is_in_onnx_export() --------------------------------------------------------------


@contextlib.contextmanager
def onnx_exporting():
    """Make ``torch.onnx.is_in_onnx_export()`` true while fxonnx captures, as torch.onnx does (its
    ``_flags.set_onnx_exporting_flag``): models test it to take their export path."""
    try:
        from torch.onnx._internal.exporter import _flags
    except ImportError:  # pragma: no cover - a torch without the flag has nothing to set
        yield
        return
    before = _flags._is_onnx_exporting
    _flags._is_onnx_exporting = True
    try:
        yield
    finally:
        _flags._is_onnx_exporting = before


# --- strategies ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _rnn_while_loop_decompositions(dynamic: Any):
    """LSTM/GRU as while_loops when shapes are dynamic (unrolling would fix the sequence length),
    as torch.onnx does."""
    if not dynamic:
        yield
        return
    try:
        from torch.export._patches import (
            register_gru_while_loop_decomposition,
            register_lstm_while_loop_decomposition,
        )
    except ImportError:
        yield
        return
    with register_lstm_while_loop_decomposition(), register_gru_while_loop_decomposition():
        yield


@contextlib.contextmanager
def _jit_isinstance_as_isinstance():
    """Strict capture (dynamo) cannot trace ``torch.jit.isinstance``; torch.onnx swaps it."""
    import torch.jit

    saved = torch.jit.isinstance
    torch.jit.isinstance = isinstance
    try:
        yield
    finally:
        torch.jit.isinstance = saved


def _prefer_deferred_asserts() -> bool:
    try:
        from torch.onnx import _flags

        return bool(_flags.PREFER_DEFERRED_RUNTIME_ASSERTS_OVER_GUARDS)
    except (ImportError, AttributeError):
        return os.environ.get("TORCH_ONNX_PREFER_DEFERRED_RUNTIME_ASSERTS_OVER_GUARDS", "0") == "1"


def _export_retrying_constraints(model, args, kwargs, dynamic_shapes, strict: bool):
    """torch.export.export; a constraint violation (``UserError``) is retried once with the
    dynamic shapes torch.export suggests, as torch.onnx does."""
    options = dict(kwargs=kwargs, dynamic_shapes=dynamic_shapes, strict=strict,
                   prefer_deferred_runtime_asserts_over_guards=_prefer_deferred_asserts())
    try:
        return torch.export.export(model, args, **options)
    except torch._dynamo.exc.UserError as exc:
        try:
            refined = torch.export.dynamic_shapes.refine_dynamic_shapes_from_suggested_fixes(
                exc.msg, dynamic_shapes
            )
        except Exception:
            raise exc from None
        return torch.export.export(model, args, **{**options, "dynamic_shapes": refined})


def _non_strict(model, args, kwargs, dynamic_shapes):
    with _rnn_while_loop_decompositions(dynamic_shapes), torch.fx.experimental._config.patch(
        backed_size_oblivious=True
    ):
        return _export_retrying_constraints(model, args, kwargs, dynamic_shapes, strict=False)


def _strict(model, args, kwargs, dynamic_shapes):
    with _jit_isinstance_as_isinstance(), _rnn_while_loop_decompositions(
        dynamic_shapes
    ), torch.fx.experimental._config.patch(backed_size_oblivious=True):
        return _export_retrying_constraints(model, args, kwargs, dynamic_shapes, strict=True)


def _draft(model, args, kwargs, dynamic_shapes):
    ep = torch.export.draft_export(model, args, kwargs=kwargs, dynamic_shapes=dynamic_shapes)
    report = getattr(ep, "_report", None)
    if report is not None and not report.successful():
        warnings.warn(f"torch.export.draft_export captured the model with issues:\n{report}", stacklevel=4)
    return ep


# (torch.onnx's class name, the report's title, the function): torch.onnx's order.
STRATEGIES: list[tuple[str, str, Callable]] = [
    ("TorchExportNonStrictStrategy", "Obtain model graph with `torch.export.export(..., strict=False)`", _non_strict),
    ("TorchExportStrictStrategy", "Obtain model graph with `torch.export.export(..., strict=True)`", _strict),
]
DRAFT = ("TorchExportDraftExportStrategy", "Obtain model graph with `torch.export.draft_export`", _draft)


def draft_export_enabled() -> bool:
    """torch.onnx tries draft export only when TORCH_ONNX_ENABLE_DRAFT_EXPORT is set (it bypasses
    data-dependent errors with the example's values, which may not hold for other inputs);
    fxonnx follows it, and also reads FXONNX_ENABLE_DRAFT_EXPORT."""
    return any(os.environ.get(v, "0") not in ("", "0", "false", "False")
               for v in ("TORCH_ONNX_ENABLE_DRAFT_EXPORT", "FXONNX_ENABLE_DRAFT_EXPORT"))


def capture(model, args, kwargs, dynamic_shapes, printer: Callable[[str], None], warn: bool = True) -> Capture:
    """Try each strategy until one captures ``model``; every failure is kept. ``warn=False``: a
    capture again of a model already warned about."""
    strategies = STRATEGIES + ([DRAFT] if draft_export_enabled() else [])
    first_line = repr(model).split("\n", 1)[0]
    attempts: list[Attempt] = []
    start = time.perf_counter()
    if warn and isinstance(model, torch.nn.Module) and model.training:
        warnings.warn(
            "Exporting a model while it is in training mode. Please ensure that this is intended, as it may lead "
            "to different behavior during inference. Calling model.eval() before export is recommended.",
            UserWarning,
            stacklevel=4,
        )
    with onnx_exporting():
        for name, title, fn in strategies:
            t0 = time.perf_counter()
            printer(f"{title.replace('Obtain model graph', f'Obtain model graph for `{first_line}`')}...")
            try:
                ep = fn(model, args, kwargs, dynamic_shapes)
            except Exception as e:  # every strategy's error goes to the report
                attempts.append(Attempt(name, title, time.perf_counter() - t0, e))
                printer(f"{title.replace('Obtain model graph', f'Obtain model graph for `{first_line}`')}... ❌")
                continue
            attempts.append(Attempt(name, title, time.perf_counter() - t0))
            printer(f"{title.replace('Obtain model graph', f'Obtain model graph for `{first_line}`')}... ✅ "
                    f"({time.perf_counter() - t0:.1f} s, {len(ep.graph.nodes)} nodes)")
            return Capture(ep, name, attempts, time.perf_counter() - start)
    return Capture(None, None, attempts, time.perf_counter() - start)


def capture_error(capture: Capture, report_path: str | None, torchscript_works: bool = False) -> _errors.CaptureError:
    """The error for a capture every strategy failed: the first strategy's error (as torch.onnx
    raises it), with every strategy's error attached."""
    first = capture.attempts[0].error
    lines = [
        "Failed to export the model with torch.export (step 1 of the export: capture). Every strategy failed:",
    ]
    for a in capture.attempts:
        text = [t.strip() for t in str(a.error).strip().splitlines() if t.strip()]
        summary = " ".join(text[:3])
        if len(summary) > 400:
            summary = summary[:400] + "..."
        lines.append(f"- {a.strategy}: {type(a.error).__name__}: {summary}")
    if torchscript_works:
        lines.append(
            "hint: fxonnx.export(..., dynamo=False) exports this model (its TorchScript program converts: tried), "
            "as torch.onnx's TorchScript exporter took it; or change the model for torch.export to capture it"
        )
    else:
        lines.append(
            "hint: change the model for torch.export.export to capture it (https://pytorch.org/docs/stable/"
            "generated/exportdb/index.html), or run torch.export.draft_export(model, args) to see every issue at "
            "once (set TORCH_ONNX_ENABLE_DRAFT_EXPORT=1 to let the export try it)"
        )
    if report_path is not None:
        lines.append(f"Error report has been saved to '{report_path}'.")
    err = _errors.CaptureError("\n".join(lines))
    err.stage = "capture"
    err.node = None
    err.target = None
    err.hint = lines[-2] if report_path is not None else lines[-1]
    err.errors = {a.strategy: a.error for a in capture.attempts if a.error is not None}
    err.report_path = report_path
    err.__cause__ = first
    return err


# --- dynamic shapes ------------------------------------------------------------------------------


def _is_axes(x: Any) -> bool:
    """A dict or list of one tensor's axes (torch.onnx's `_flatten_dynamic_shapes_to_axes` leaf)."""
    from torch.export.dynamic_shapes import Dim, _DimHint

    leaf = (Dim, _DimHint, str, int)
    if isinstance(x, dict):
        return all(isinstance(k, int) and (v is None or isinstance(v, leaf)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return all(v is None or isinstance(v, leaf) for v in x)
    return False


def flatten_axes(dynamic_shapes: Any) -> tuple[list[Any], Any]:
    return _pytree.tree_flatten(dynamic_shapes, is_leaf=_is_axes)


def _axis_items(axes: Any):
    if isinstance(axes, dict):
        return list(axes.items())
    if isinstance(axes, (list, tuple)):
        return list(enumerate(axes))
    return []


def dim_name(d: Any) -> str | None:
    """The name a dynamic-shapes entry gives its axis: a string, or a named ``Dim``."""
    from torch.export.dynamic_shapes import Dim

    if isinstance(d, str):
        return d
    if isinstance(d, Dim):
        return d.__name__
    return None


def strings_to_dims(dynamic_shapes: Any) -> tuple[Any, bool]:
    """torch.onnx's ``convert_str_to_export_dim``: axis names become ``Dim.DYNAMIC``; whether any
    string or named Dim was given (then the ONNX dims are renamed after the capture)."""
    from torch.export.dynamic_shapes import Dim

    if dynamic_shapes is None:
        return None, False
    flat, spec = flatten_axes(dynamic_shapes)
    if any(a is not None and not isinstance(a, (dict, list, tuple)) for a in flat):
        return dynamic_shapes, False
    named = any(isinstance(d, (str, Dim)) for a in flat for _, d in _axis_items(a))
    if not named:
        return dynamic_shapes, False
    out = []
    for axes in flat:
        if isinstance(axes, dict):
            out.append({k: Dim.DYNAMIC if isinstance(v, str) else v for k, v in axes.items()})
        elif isinstance(axes, (list, tuple)):
            out.append(type(axes)(Dim.DYNAMIC if isinstance(v, str) else v for v in axes))
        else:
            out.append(axes)
    return _pytree.tree_unflatten(out, spec), True


def normalize_args(args: Any, kwargs: Any) -> tuple[tuple, dict]:
    """torch.onnx's argument conventions: a bare tensor is a 1-tuple; a dict at the end of
    ``args`` means keyword arguments when none are given."""
    if isinstance(args, torch.Tensor):
        args = (args,)
    args = tuple(args) if isinstance(args, (tuple, list)) else (() if args is None else (args,))
    if not kwargs and args and isinstance(args[-1], dict):
        kwargs = args[-1]
        args = args[:-1]
    return args, dict(kwargs or {})


def dynamic_axes_to_dynamic_shapes(model, args, kwargs, dynamic_axes, input_names, output_names):
    """torch.onnx's ``from_dynamic_axes_to_dynamic_shapes``, its warnings included: axis names
    kept (they become ``Dim.DYNAMIC`` and name the ONNX dims), list axes ``Dim.DYNAMIC``, entries
    naming outputs ignored; the inputs reordered by the forward signature and all positional."""
    warnings.warn(
        "# 'dynamic_axes' is not recommended when dynamo=True, and may lead to 'torch._dynamo.exc.UserError: "
        "Constraints violated.' Supply the 'dynamic_shapes' argument instead if export is unsuccessful.",
        UserWarning,
        stacklevel=4,
    )
    warnings.warn(
        "from_dynamic_axes_to_dynamic_shapes is deprecated and will be removed in a future release. "
        "This function converts 'dynamic_axes' format (including custom axis names) to 'dynamic_shapes' format. "
        "Instead of relying on this conversion, provide 'dynamic_shapes' directly with custom names.",
        DeprecationWarning,
        stacklevel=4,
    )
    try:
        shapes: dict[str, Any] = {}
        outputs = set(output_names or ())
        for name, axes in dynamic_axes.items():
            if name in outputs:
                continue
            if isinstance(axes, dict):
                if any(not isinstance(k, int) for k in axes):
                    raise ValueError("The axis in dynamic_axes must be in the form of: dict[int, str] or list[int].")
                shapes[name] = axes
            elif isinstance(axes, (list, tuple)):
                if any(not isinstance(k, int) for k in axes):
                    raise ValueError("The axis in dynamic_axes must be in the form of: dict[int, str] or list[int].")
                shapes[name] = dict.fromkeys(axes, torch.export.Dim.DYNAMIC)
            elif axes is None:
                shapes[name] = None
            else:
                raise ValueError("Unsupported dynamic_axes format. Please provide a dict or a list.")
        for name in input_names or ():
            shapes.setdefault(name, None)
        forward = getattr(model, "forward", model)
        inputs = []
        for i, param in enumerate(inspect.signature(forward).parameters):
            if i < len(args):
                inputs.append(args[i])
            elif param in kwargs:
                inputs.append(kwargs[param])
        _, tree = _pytree.tree_flatten(inputs)
        dynamic_shapes = _unflatten_as_containers(list(shapes.values()), tree)
        return dynamic_shapes, tuple(inputs), {}
    except Exception as e:
        raise _errors.OptionsError(
            "# Failed to convert 'dynamic_axes' to 'dynamic_shapes'. Please provide 'dynamic_shapes' directly. "
            f"Refer to the documentation for 'torch.export.export' for more information on dynamic shapes. ({e})"
        ) from e


def _unflatten_as_containers(values: list, spec: Any) -> Any:
    """``values`` in the structure of ``spec`` (torch.onnx's ``tree_unflatten``), except that a
    node of a class registered with pytree (a transformers ``DynamicCache``) becomes the list of
    its children's specs, the form torch.export takes for it (the class itself cannot hold axes)."""
    it = iter(values)

    def build(s):
        if s.is_leaf():
            return next(it)
        # `children()` since torch 2.10 (`children_specs` warns there); before it, the attribute.
        kids = s.children() if callable(getattr(s, "children", None)) else s.children_specs
        children = [build(c) for c in kids]
        if s.type is dict:
            return dict(zip(s.context, children))
        if s.type is list:
            return children
        if s.type is tuple or (isinstance(s.type, type) and issubclass(s.type, tuple)):
            return tuple(children)
        return children

    return build(spec)


def user_input_dims(exported) -> list[tuple[str, list[Any]]]:
    """(placeholder name, shape) of each user input that is a graph input, in order."""
    placeholders = {n.name: n for n in exported.graph.nodes if n.op == "placeholder"}
    out = []
    for spec in exported.graph_signature.input_specs:
        if spec.kind.name != "USER_INPUT" or not hasattr(spec.arg, "name"):
            continue
        val = placeholders[spec.arg.name].meta.get("val") if spec.arg.name in placeholders else None
        if isinstance(val, torch.Tensor):
            out.append((spec.arg.name, list(val.shape)))
        elif val is not None and isinstance(val, (torch.SymInt, int)):
            out.append((spec.arg.name, []))
    return out


def dim_names_and_static(exported, dynamic_shapes, warn: bool = True) -> tuple[dict[str, str], list[tuple[str, int, str]]]:
    """The names the ONNX dims get (``{"s77": "batch"}``), torch.onnx's ``create_rename_mapping``
    applied to the program's inputs, with its warning when two names fall on one symbol; and every
    axis that was asked to be dynamic but came out static: (input, axis, what was asked)."""
    from torch.export.dynamic_shapes import Dim, _DimHint

    if dynamic_shapes is None:
        return {}, []
    flat, _ = flatten_axes(dynamic_shapes)
    inputs = user_input_dims(exported)
    if len(inputs) != len(flat):
        if not warn:
            return {}, []
        warnings.warn(
            "# ONNX model has different number of inputs than the flatten dynamic_shapes. "
            "The dynamic axes will not be renamed.",
            UserWarning,
            stacklevel=4,
        )
        return {}, []
    mapping: dict[str, str] = {}
    static: list[tuple[str, int, str]] = []
    for (name, shape), axes in zip(inputs, flat):
        for axis, d in _axis_items(axes):
            if d is None or isinstance(d, int) or not isinstance(axis, int) or axis >= len(shape):
                continue
            size = shape[axis]
            asked = dim_name(d)
            wants_dynamic = asked is not None or (
                isinstance(d, _DimHint) and d is not Dim.STATIC and d is not Dim.AUTO
            )
            if not isinstance(size, torch.SymInt):
                if wants_dynamic:
                    static.append((name, axis, asked or "Dim.DYNAMIC"))
                continue
            symbol = str(size)
            if asked is None or not symbol.isidentifier():
                continue
            if symbol in mapping:
                if not warn or mapping[symbol] == asked:  # one name given to both: nothing lost
                    continue
                warnings.warn(
                    f"# The axis name: {asked} will not be used, since it shares the same shape constraints "
                    f"with another axis: {mapping[symbol]}.",
                    UserWarning,
                    stacklevel=4,
                )
                continue
            mapping[symbol] = asked
    return mapping, static


def static_dims_message(static: list[tuple[str, int, str]]) -> str:
    parts = [f"input `{name}` axis {axis} (asked: {asked})" for name, axis, asked in static]
    return (
        "dynamic dims came out static: " + ", ".join(parts) + "; torch.export specialized them to the example's "
        "size, so the model only accepts that size. hint: give an example whose size differs from the other dims "
        "and from 0 and 1, or look for code that branches on that size"
    )


# --- examples of size 0 or 1 on a dynamic axis ---------------------------------------------------
#
# Capture runs under `backed_size_oblivious` (as torch.onnx's does), so that a batch-1 example keeps
# a dynamic batch: a dim of size 0 or 1 is assumed to be neither. Where the program branches on
# that (`x.squeeze(1)` on a size-1 axis, `if x.size(0) == 0`), the captured program is not what
# eager computes on the very example it was captured from. Such a capture is checked on the
# example and, where it is wrong, captured again with the axis static.


def mutates(exported: Any) -> bool:
    """Whether running the program changes its state or its inputs: mutations in its signature,
    or in-place ops kept in the graph (torch.export's training IR keeps them)."""
    signature = exported.graph_signature
    if signature.buffers_to_mutate or getattr(signature, "user_inputs_to_mutate", None):
        return True
    for module in exported.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if graph is not None else ():
            schema = getattr(node.target, "_schema", None)
            if node.op == "call_function" and schema is not None and schema.is_mutable:
                return True
    return False


class StateKept:
    """Runs of the program that leave its buffers and constants as they were (an in-place op of
    the program would otherwise change the weights the model is saved with afterwards)."""

    def __init__(self, exported: Any):
        self.tensors = {**dict(exported.state_dict), **{k: v for k, v in exported.constants.items()
                                                         if isinstance(v, torch.Tensor)}}
        names = set(exported.graph_signature.buffers) | set(exported.constants)
        self.saved = {k: v.detach().clone() for k, v in self.tensors.items() if k in names}

    def restore(self) -> None:
        with torch.no_grad():
            for k, v in self.saved.items():
                self.tensors[k].copy_(v)


def clone_inputs(inputs: Any) -> Any:
    return _pytree.tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, inputs)


@dataclasses.dataclass
class Difference:
    """Where a captured program departs from eager on the example: a node whose result is not
    the shape its capture recorded, a node that raised, or an output whose values differ."""

    node: str
    what: str


@dataclasses.dataclass
class SmallAxis:
    """A dynamic axis whose example size is 0 or 1: user input ``index`` (named ``name``),
    ``axis``, the program's symbol for it and the example's size."""

    index: int
    name: str
    axis: int
    symbol: str
    size: int


def small_dynamic_axes(exported) -> list[SmallAxis]:
    """The program's dynamic input axes whose size in the example is 0 or 1."""
    out = []
    for index, (name, shape) in enumerate(user_input_dims(exported)):
        for axis, d in enumerate(shape):
            if isinstance(d, torch.SymInt) and str(d).isidentifier():
                hint = d.node.hint
                if hint is not None and int(hint) in (0, 1):
                    out.append(SmallAxis(index, name, axis, str(d), int(hint)))
    return out


def _recorded_shape(val: Any) -> tuple | None:
    if not isinstance(val, torch.Tensor):
        return None
    dims = []
    for d in val.shape:
        if isinstance(d, torch.SymInt):
            hint = d.node.hint
            if hint is None:  # unbacked (data-dependent): nothing recorded to hold it to
                return None
            dims.append(int(hint))
        else:
            dims.append(int(d))
    return tuple(dims)


def _shape_difference(val: Any, result: Any) -> str | None:
    if isinstance(val, (list, tuple)) and isinstance(result, (list, tuple)) and len(val) == len(result):
        for i, (v, r) in enumerate(zip(val, result)):
            found = _shape_difference(v, r)
            if found:
                return f"result {i}: {found}"
        return None
    recorded = _recorded_shape(val)
    if recorded is None or not isinstance(result, torch.Tensor) or tuple(result.shape) == recorded:
        return None
    return f"shape {tuple(result.shape)} where the capture recorded {recorded}"


def first_difference(exported, args, kwargs, eager: Any = None) -> Difference | None:
    """Run the captured program on the example, node by node (the lifted graph: functional, so
    no state of the module or the program changes), and find the first node whose result is not
    the shape the capture recorded for it; with ``eager`` (the module's own outputs on the
    example), also the first output that differs from it."""

    class Differs(Exception):
        # The Interpreter rewrites an exception's first argument: the difference is an attribute.
        def __init__(self, difference: Difference):
            super().__init__(difference.what)
            self.difference = difference

    class Check(torch.fx.Interpreter):
        current: str = ""

        def run_node(self, n):
            self.current = n.name
            result = super().run_node(n)
            found = _shape_difference(n.meta.get("val"), result) if n.op == "call_function" else None
            if found:
                raise Differs(Difference(n.name, found))
            return result

    check = Check(exported.graph_module)
    # In-place ops the graph keeps change neither the program's state nor the caller's inputs.
    kept = StateKept(exported) if mutates(exported) else None
    try:
        flat = exported._graph_module_flat_inputs(*clone_inputs((args, kwargs)))
        with torch.no_grad():
            outputs = check.run(*flat, enable_io_processing=False)
    except Differs as d:
        return d.difference
    except Exception as e:  # the program fails on the example it was captured from
        return Difference(check.current or "(inputs)", f"raised {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    finally:
        if kept is not None:
            kept.restore()
    if eager is None:
        return None
    signature = exported.graph_signature
    user_outputs = [o for o, spec in zip(outputs, signature.output_specs) if spec.kind.name == "USER_OUTPUT"]
    expected = [x for x in _pytree.tree_leaves(eager) if isinstance(x, torch.Tensor)]
    actual = [x for x in user_outputs if isinstance(x, torch.Tensor)]
    if len(expected) != len(actual):
        return Difference("(outputs)", f"{len(actual)} tensor outputs where eager has {len(expected)}")
    for spec, e, a in zip([s for s in signature.output_specs if s.kind.name == "USER_OUTPUT"], expected, actual):
        name = getattr(spec.arg, "name", "?")
        if tuple(e.shape) != tuple(a.shape):
            return Difference(name, f"shape {tuple(a.shape)} where eager gives {tuple(e.shape)}")
        if e.dtype == a.dtype and e.numel() and not torch.equal(e, a):
            if e.is_floating_point() or e.is_complex():
                if torch.allclose(e, a, rtol=1e-3, atol=1e-4, equal_nan=True):
                    continue
            return Difference(name, "values differ from eager's")
    return None


def _with_static_axes(dynamic_shapes: Any, axes: list[SmallAxis]) -> Any:
    """``dynamic_shapes`` with the given axes static."""
    flat, spec = flatten_axes(dynamic_shapes)
    flat = list(flat)
    for a in axes:
        entry = flat[a.index]
        if isinstance(entry, dict):
            entry = {k: v for k, v in entry.items() if k != a.axis}
        elif isinstance(entry, (list, tuple)):
            entry = type(entry)(None if i == a.axis else v for i, v in enumerate(entry))
        flat[a.index] = entry
    return _pytree.tree_unflatten(flat, spec)


@dataclasses.dataclass
class Specialized:
    """Axes captured again as static because the size-oblivious capture was wrong on them."""

    axes: list[SmallAxis]
    difference: Difference

    def message(self) -> str:
        axes = ", ".join(f"input `{a.name}` axis {a.axis} (size {a.size} in the example)" for a in self.axes)
        return (
            f"{axes}: captured as dynamic, the program differs from eager on the example itself (node "
            f"`{self.difference.node}`: {self.difference.what}), because capture assumes a dynamic size is "
            "neither 0 nor 1; captured again with that axis static, so the model takes only that size there. "
            "hint: give an example whose size on that axis is 2 or more to keep it dynamic"
        )


def recapture_if_wrong(model, args, kwargs, dynamic_shapes, captured: Capture, printer) -> Specialized | None:
    """Check ``captured`` on its example when a dynamic axis had size 0 or 1 there; where the
    program is wrong, capture again with such axes static (each alone first, then all), replacing
    ``captured.exported_program``. Raises ``CaptureError`` when no capture is right."""
    exported = captured.exported_program
    small = small_dynamic_axes(exported)
    if not small or dynamic_shapes is None:
        return None
    # The module itself runs only where that changes nothing the caller holds.
    with torch.no_grad():
        eager = model(*args, **kwargs) if not mutates(exported) else None
    found = first_difference(exported, args, kwargs, eager)
    if found is None:
        return None
    printer(f"The capture differs from eager on the example ({found.node}: {found.what}); capturing again with "
            "its size-0/1 dynamic axes static...")
    flat, _ = flatten_axes(dynamic_shapes)
    if len(flat) != len(user_input_dims(exported)):
        small_sets: list[list[SmallAxis]] = []
    else:
        small_sets = [[a] for a in small] + ([small] if len(small) > 1 else [])
    for axes in small_sets:
        shapes = _with_static_axes(dynamic_shapes, axes)
        attempt = capture(model, args, kwargs, shapes, lambda *_: None, warn=False)
        if attempt.exported_program is None:
            continue
        if first_difference(attempt.exported_program, args, kwargs, eager) is None:
            captured.exported_program = attempt.exported_program
            captured.strategy = attempt.strategy
            return Specialized(axes, found)
    names = ", ".join(f"input `{a.name}` axis {a.axis} (size {a.size})" for a in small)
    err = _errors.CaptureError(
        f"the captured program differs from eager on the example (node `{found.node}`: {found.what}), and "
        f"capturing again with the dynamic axes of size 0 or 1 static did not help: {names}. "
        "hint: give an example whose dynamic sizes are 2 or more and differ from each other"
    )
    err.node = found.node
    err.hint = "give an example whose dynamic sizes are 2 or more and differ from each other"
    raise err
