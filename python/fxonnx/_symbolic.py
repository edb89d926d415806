"""Symbolic functions as the TorchScript exporter's users wrote them: ``symbolic(g, *inputs)``
building ONNX with ``g.op("Relu", x)``.

Two kinds reach fxonnx's TorchScript front end (``_torchscript``): the ``symbolic`` staticmethod of
a ``torch.autograd.Function`` the traced code applies, and functions registered with
``torch.onnx.register_custom_op_symbolic`` (for an ATen op, a custom op or ``prim::PythonOp``).
Each runs as it ran under torch.onnx: on a TorchScript graph of its own, through torch.onnx's
``GraphContext`` (so that ``torch.onnx.symbolic_helper``, which such functions call, sees the
values it expects). The ONNX nodes it builds become one small ``ModelProto`` that fxonnx inlines in
place of the node (``fxonnx::onnx_graph``, as a Python custom translation's).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from . import _errors


def custom_symbolic(kind: str, opset: int) -> Callable | None:
    """The symbolic function registered with ``torch.onnx.register_custom_op_symbolic`` for
    ``kind`` (``aten::addmm``, ``mylib::foo``, ``prim::PythonOp``) at ``opset`` or below; not
    torch.onnx's own built-in ones (fxonnx's translation table is what translates ATen ops)."""
    try:
        from torch.onnx._internal.torchscript_exporter import registration
    except ImportError:  # pragma: no cover - a torch without the TorchScript exporter's registry
        return None
    group = registration.registry.get_function_group(kind)
    if group is None:
        return None
    # Registered functions are kept per opset; the custom ones are the group's overrides.
    overrides = group._functions._overrides
    versions = [v for v in overrides if v <= opset]
    fn = overrides[max(versions)] if versions else None
    # Libraries register symbolics for their own ops with torch.onnx (torchvision's nms,
    # roi_align): fxonnx translates those ops itself, from their real output types.
    if fn is not None and getattr(fn, "__module__", "").split(".")[0] == "torchvision":
        return None
    return fn


def onnx_graph_op() -> Any:
    """``fxonnx::onnx_graph(Tensor[] inputs, str graph) -> Tensor[]``: a node whose ONNX was built
    in Python (a symbolic function's, a custom translation's), as an op FX can hold; fxonnx's
    translation emits the graph's nodes (``translations/python.rs``)."""
    global _ONNX_GRAPH
    try:
        return _ONNX_GRAPH
    except NameError:
        pass
    lib = torch.library.Library("fxonnx", "FRAGMENT")  # noqa: TOR901 - fxonnx's own op
    lib.define("onnx_graph(Tensor[] inputs, str graph) -> Tensor[]")
    _ONNX_GRAPH = (torch.ops.fxonnx.onnx_graph.default, lib)
    return _ONNX_GRAPH


def _tensor_type(meta: torch.Tensor) -> Any:
    """A TorchScript tensor type of ``meta``'s dtype and sizes (a symbolic size at its hint), for
    the symbolic function's helpers that read types."""
    sizes = [int(d.node.hint) if isinstance(d, torch.SymInt) and d.node.hint is not None else
             (1 if isinstance(d, torch.SymInt) else int(d)) for d in meta.shape]
    return torch._C.TensorType.create_from_tensor(torch.empty(sizes, dtype=meta.dtype))


def run(fn: Callable, args: list[Any], kwargs: dict[str, Any], opset: int, node: Any,
        name: str) -> tuple[list[Any], bytes]:
    """Run the symbolic function ``fn`` on ``args`` (FX nodes of tensors, or Python values);
    returns the FX nodes it reads, in order, and the ONNX it built as ModelProto bytes."""
    from torch.onnx._internal.torchscript_exporter import jit_utils

    graph = torch._C.Graph()
    inputs: list[Any] = []
    metas: list[Any] = []
    ts_args = []
    for a in args:
        if isinstance(a, torch.fx.Node) and isinstance(a.meta.get("val"), torch.Tensor):
            v = graph.addInput()
            v.setType(_tensor_type(a.meta["val"]))
            inputs.append(a)
            metas.append(a.meta["val"])
            ts_args.append(v)
        elif isinstance(a, torch.fx.Node):
            raise _errors.TranslationError(f"the symbolic function of `{name}` is given a number known only at run "
                                           "time, which it cannot read as TorchScript's exporter gave it")
        else:
            ts_args.append(a)
    context = jit_utils.GraphContext(graph=graph, block=graph.block(), opset=opset, original_node=node,
                                     params_dict={}, env={}, values_in_env=set(), new_nodes=[])
    try:
        result = fn(context, *ts_args, **kwargs)
    except Exception as e:
        err = _errors.TranslationError(f"the symbolic function of `{name}` failed: {type(e).__name__}: {e}")
        err.stage, err.node, err.target = "translate", name, name
        err.hint = "check the symbolic function registered for it"
        raise err from e
    outputs = list(result) if isinstance(result, (list, tuple)) else [result]
    for o in outputs:
        if not isinstance(o, torch._C.Value):
            raise _errors.TranslationError(f"the symbolic function of `{name}` returned {type(o).__name__}, not the "
                                           "values g.op made")
        graph.registerOutput(o)
    return inputs, _model_proto(graph, metas, opset, name).SerializeToString()


def _model_proto(graph: Any, metas: list[Any], opset: int, name: str) -> Any:
    """The TorchScript graph of ``onnx::`` / ``domain::`` nodes a symbolic function built, as a
    ModelProto whose inputs are the graph's, in order."""
    import onnx
    from onnx import helper, numpy_helper
    from torch.onnx._internal.exporter._core import torch_dtype_to_onnx_dtype

    def onnx_dtype(dtype: Any) -> int:
        return int(torch_dtype_to_onnx_dtype(dtype))

    names: dict[Any, str] = {}

    def name_of(v: Any) -> str:
        if v not in names:
            names[v] = f"v{len(names)}"
        return names[v]

    inputs = []
    for v, meta in zip(graph.inputs(), metas):
        inputs.append(helper.make_tensor_value_info(name_of(v), onnx_dtype(meta.dtype), None))
    nodes = []
    domains: dict[str, int] = {"": opset}
    for n in graph.nodes():
        domain, _, op_type = n.kind().partition("::")
        if domain == "prim" and op_type == "Constant" and not n.attributeNames():
            names[n.output()] = ""  # None: an omitted optional input
            continue
        domain = "" if domain == "onnx" else domain
        if domain:
            domains.setdefault(domain, 1)
        attrs = {}
        for a in n.attributeNames():
            kind = n.kindOf(a)
            if kind == "t":
                attrs[a] = numpy_helper.from_array(n.t(a).numpy())
            elif kind == "ts":
                attrs[a] = [numpy_helper.from_array(t.numpy()) for t in n.ts(a)]
            elif kind in ("i", "f", "s", "is", "fs", "ss"):
                attrs[a] = getattr(n, {"is": "is_"}.get(kind, kind))(a)
            else:
                raise _errors.TranslationError(f"the symbolic function of `{name}` writes attribute `{a}` of kind "
                                               f"{kind}, which fxonnx does not take (subgraphs)")
        nodes.append(helper.make_node(op_type, [name_of(v) for v in n.inputs()],
                                      [name_of(v) for v in n.outputs()], domain=domain, **attrs))
    outputs = [helper.make_tensor_value_info(name_of(v), onnx.TensorProto.UNDEFINED, None) for v in graph.outputs()]
    g = helper.make_graph(nodes, f"symbolic_{name}", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in domains.items()],
                             ir_version=10)
