"""Python custom translations (``custom_translation_table``), as torch.onnx takes them.

A table maps an FX target (``torch.ops.aten.gelu.default``, a custom op ``torch.ops.mylib.foo.default``,
or a Python callable such as ``operator.add``) to a translation: a Python function written with
onnxscript's ops (``op.Sub(self, other)``, traced), an ``@onnxscript.script()`` function, an
``onnx.FunctionProto``, or a list of those, dispatched on the node's input types by their
annotations (``self: BOOL``), the first that accepts them winning.

For each FX node whose target the table names, the translation runs here on the node's arguments:
tensor arguments become the inputs of the ONNX it builds, Python scalars stay values (a traced
function sees them as such; a script function or FunctionProto receives them as attributes). The
ONNX built for the node reaches Rust as one small ``ModelProto`` whose model-local functions (the
script functions and FunctionProtos called) are already inlined; Rust emits its nodes in place of
the FX node. The exported model therefore has the translation **inlined**: no model-local function
remains, as in torch.onnx's models (whose version conversion inlines every function).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, Sequence

import torch

from . import _errors

# The domain and version of the functions a FunctionProto entry is called as, before inlining.
_LOCAL = "pkg.fxonnx.custom"


def target_key(target: Any) -> str:
    """The key fxonnx's table uses for an FX target: ``aten::add.Tensor``, ``mylib::foo.default``,
    ``_operator.add``."""
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}::{target._opname}.{target._overloadname}"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order::{target.name()}"
    if isinstance(target, str):
        return target
    return f"{getattr(target, '__module__', '')}.{getattr(target, '__name__', repr(target))}"


@dataclasses.dataclass
class Table:
    """A ``custom_translation_table``, checked: each target with its candidates."""

    entries: dict[Any, list[Any]]

    @classmethod
    def of(cls, table: Any) -> "Table | None":
        if table is None:
            return None
        if not isinstance(table, dict):
            raise TypeError("custom_translation_table must be a dict {OpOverload: function}")
        entries: dict[Any, list[Any]] = {}
        for target, fn in table.items():
            if isinstance(target, torch._ops.OpOverloadPacket):
                raise TypeError(
                    f"custom_translation_table: {target} is an OpOverloadPacket; name one overload, "
                    f"e.g. {target}.default (torch.onnx registers OpOverloads)"
                )
            candidates = list(fn) if isinstance(fn, (list, tuple)) else [fn]
            for c in candidates:
                if not (callable(c) or _is_function_proto(c)):
                    raise TypeError(
                        f"custom_translation_table[{target}]: {c!r} is neither a function, an "
                        "@onnxscript.script function nor an onnx.FunctionProto"
                    )
            if not candidates:
                raise TypeError(f"custom_translation_table[{target}] is an empty list")
            entries[target] = candidates
        return cls(entries)

    def keys(self) -> set[str]:
        return {target_key(t) for t in self.entries}

    def lookup(self, target: Any) -> list[Any] | None:
        found = self.entries.get(target)
        if found is None and isinstance(target, torch._ops.OpOverload):
            # A table keyed by the same op object imported elsewhere compares by name.
            key = target_key(target)
            found = next((v for k, v in self.entries.items() if target_key(k) == key), None)
        return found

    def translator(self, opset: int) -> Callable[[Any], Any]:
        """For the serializer: an FX node → (its tensor inputs, the ModelProto bytes), or None."""

        def translate(node):
            candidates = self.lookup(node.target)
            if candidates is None:
                return None
            try:
                return build(node, candidates, opset)
            except _errors.ExportError:
                raise
            except Exception as e:
                err = _errors.TranslationError(
                    f"the custom translation of node `{node.name}` ({target_key(node.target)}) failed: "
                    f"{type(e).__name__}: {e}\nhint: check the function given in custom_translation_table for "
                    f"{target_key(node.target)}; it is called with the node's arguments as torch.onnx calls it"
                )
                err.stage, err.node, err.target = "translate", node.name, target_key(node.target)
                err.hint = f"check the function given in custom_translation_table for {target_key(node.target)}"
                raise err from e

        return translate


def _is_function_proto(x: Any) -> bool:
    return type(x).__name__ == "FunctionProto" and hasattr(x, "node")


# --- types ---------------------------------------------------------------------------------------


def _onnx_dtype(dtype: torch.dtype) -> int:
    import onnx_ir as ir

    from torch.onnx._internal.exporter._core import torch_dtype_to_onnx_dtype  # torch's own table

    return int(torch_dtype_to_onnx_dtype(dtype)) if isinstance(dtype, torch.dtype) else int(ir.DataType.FLOAT)


def _val_dtype(val: Any) -> int | None:
    import onnx_ir as ir

    if isinstance(val, torch.Tensor):
        if val.dtype.is_complex:
            return _onnx_dtype(val.dtype.to_real() if hasattr(val.dtype, "to_real") else torch.float32)
        return _onnx_dtype(val.dtype)
    if isinstance(val, (torch.SymInt, int)) and not isinstance(val, bool):
        return int(ir.DataType.INT64)
    if isinstance(val, (torch.SymFloat, float)):
        return int(ir.DataType.FLOAT)
    if isinstance(val, (torch.SymBool, bool)):
        return int(ir.DataType.BOOL)
    return None


def _accepts(annotation: Any, dtype: int | None) -> bool:
    """Whether an onnxscript type annotation (``FLOAT``, ``BOOL``, a TypeVar or Union of them)
    accepts a tensor of ONNX element type ``dtype``."""
    import typing

    if annotation is inspect.Parameter.empty or annotation is None or dtype is None:
        return True
    d = getattr(annotation, "dtype", None)
    if isinstance(d, int):
        return d == dtype
    bound = getattr(annotation, "__bound__", None) or getattr(annotation, "__constraints__", None)
    if isinstance(annotation, typing.TypeVar):
        options = list(annotation.__constraints__) or ([annotation.__bound__] if annotation.__bound__ else [])
        return not options or any(_accepts(o, dtype) for o in options)
    args = typing.get_args(annotation)
    if args:
        return any(_accepts(a, dtype) for a in args)
    del bound
    return True


def _python_function(fn: Any) -> Callable | None:
    if _is_function_proto(fn):
        return None
    return getattr(fn, "function", fn)


def choose(node, candidates: Sequence[Any]) -> Any:
    """The first candidate whose annotated tensor parameters accept the node's input types (the
    dispatch of an overload list)."""
    if len(candidates) == 1:
        return candidates[0]
    args = list(node.args)
    for c in candidates:
        fn = _python_function(c)
        if fn is None:
            return c
        try:
            # Annotations may be strings (`from __future__ import annotations`): resolve them.
            params = list(inspect.signature(fn, eval_str=True).parameters.values())
        except (TypeError, ValueError, NameError):
            try:
                params = list(inspect.signature(fn).parameters.values())
            except (TypeError, ValueError):
                return c
        ok = True
        for p, a in zip(params, args):
            if isinstance(a, torch.fx.Node) and not _accepts(p.annotation, _val_dtype(a.meta.get("val"))):
                ok = False
                break
        if ok:
            return c
    types = [str(getattr(a.meta.get("val"), "dtype", type(a.meta.get("val")).__name__))
             for a in args if isinstance(a, torch.fx.Node)]
    raise TypeError(
        f"none of the {len(candidates)} translations of {target_key(node.target)} accepts inputs of types "
        f"{', '.join(types)} (their annotations decide)"
    )


# --- tracing -------------------------------------------------------------------------------------


class _Tracer:
    """An onnxscript evaluator that records the ops a translation calls into an onnx_ir graph,
    as torch.onnx's OpRecorder does."""

    def __init__(self, default_opset: int):
        import onnx_ir as ir

        self.ir = ir
        self.nodes: list[Any] = []
        self.opsets: dict[str, int] = {"": default_opset}
        self.functions: dict[tuple[str, str, str], Any] = {}
        self.counter = 0

    def _name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def constant(self, value: Any, dtype: int | None = None) -> Any:
        import numpy as np

        ir = self.ir
        if dtype is None:
            # A number or a list of them (`starts=[2]`): typed by what it holds, as onnxscript does.
            kind = np.asarray(value).dtype
            dtype = int(ir.DataType.BOOL if kind == np.bool_ else ir.DataType.INT64 if np.issubdtype(kind, np.integer)
                        else ir.DataType.FLOAT)
        array = np.array(value, dtype=ir.DataType(dtype).numpy())
        out = ir.Value(name=self._name("c"))
        node = ir.Node("", "Constant", inputs=[], attributes=[ir.AttrTensor("value", ir.tensor(array))],
                       outputs=[out])
        self.nodes.append(node)
        out.dtype = ir.DataType(dtype)
        out.shape = ir.Shape(list(array.shape))
        return out

    def _inputs(self, signature: Any, args: Sequence[Any]) -> list[Any]:
        """Op inputs: values as they are, Python numbers as Constants typed like the other inputs
        bound to the same type constraint."""
        ir = self.ir
        params = [p for p in signature.params if isinstance(p, ir.schemas.Parameter)] if signature else []
        typed: dict[str, int] = {}
        for p, a in zip(params, args):
            if isinstance(a, ir.Value) and a.dtype is not None:
                typed.setdefault(p.type_constraint.name, int(a.dtype))
        out = []
        for i, a in enumerate(args):
            if a is None or isinstance(a, ir.Value):
                out.append(a)
                continue
            if isinstance(a, (list, tuple)) and all(isinstance(x, ir.Value) for x in a):
                out.extend(a)
                continue
            p = params[i] if i < len(params) else None
            dtype = typed.get(p.type_constraint.name) if p is not None else None
            out.append(self.constant(a, dtype))
        return out

    def _with_keyword_inputs(self, signature: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """``args`` with the inputs given by keyword (``op.Slice(x, starts=s, ends=e)``) put in
        their places (``None`` for optional ones left out), taken out of ``kwargs``: what is left
        there are the attributes."""
        ir = self.ir
        args = list(args)
        if signature is None:
            return args
        names = [p.name for p in signature.params if isinstance(p, ir.schemas.Parameter)]
        given = [i for i, name in enumerate(names) if name in kwargs and i >= len(args)]
        if given:
            args.extend([None] * (max(given) + 1 - len(args)))
            for i in given:
                args[i] = kwargs.pop(names[i])
        return args

    def eval_op(self, op: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        ir = self.ir
        signature = op.op_signature
        kwargs = dict(kwargs)
        n_out = kwargs.pop("_num_outputs", None)
        args = self._with_keyword_inputs(signature, args, kwargs)
        inputs = self._inputs(signature, args)
        if op.domain not in self.opsets or op.domain == "":
            self.opsets[op.domain] = max(self.opsets.get(op.domain, 0), op.opset.version)
        attrs = []
        for name, value in kwargs.items():
            if value is None:
                continue
            if isinstance(value, type) and hasattr(value, "dtype"):  # Cast(to=FLOAT)
                value = int(value.dtype)
            attrs.append(ir.convenience.convert_attribute(name, value))
        if n_out is None:
            outs = signature.outputs if signature is not None else [None]
            n_out = len(outs)
            if outs and getattr(outs[-1], "variadic", False):
                n_out = int(kwargs.get("num_outputs", 1))
        outputs = [ir.Value(name=self._name("v")) for _ in range(n_out)]
        node = ir.Node(op.domain, op.name, inputs=inputs, attributes=attrs, outputs=outputs,
                       version=op.opset.version if op.domain else None)
        self.nodes.append(node)
        return outputs[0] if n_out == 1 else tuple(outputs)

    def call_function(self, domain: str, name: str, proto: Any, inputs: list[Any], attributes: dict[str, Any],
                      n_out: int) -> Any:
        ir = self.ir
        self.functions[(domain, name, "")] = proto
        self.opsets.setdefault(domain, 1)
        for imp in getattr(proto, "opset_import", []):
            if imp.domain not in self.opsets or imp.domain == "":
                self.opsets[imp.domain] = max(self.opsets.get(imp.domain, 0), imp.version)
        attrs = [ir.convenience.convert_attribute(k, v) for k, v in attributes.items() if v is not None]
        outputs = [ir.Value(name=self._name("v")) for _ in range(n_out)]
        self.nodes.append(ir.Node(domain, name, inputs=inputs, attributes=attrs, outputs=outputs))
        return outputs[0] if n_out == 1 else tuple(outputs)

    def eval_function(self, function: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """An @onnxscript.script function called inside a traced one: a call of its FunctionProto."""
        proto = function.to_function_proto()
        inputs, attributes = _split_args(function.op_signature, args, kwargs, self)
        return self.call_function(proto.domain, proto.name, proto, inputs, attributes, len(proto.output))


def _split_args(signature: Any, args: Sequence[Any], kwargs: dict[str, Any], tracer: _Tracer):
    """Inputs and attributes of a call to a script function, by its signature."""
    import onnx_ir as ir

    inputs: list[Any] = []
    attributes: dict[str, Any] = {}
    params = list(signature.params) if signature is not None else []
    bound = dict(zip([p.name for p in params], args))
    bound.update(kwargs)
    for p in params:
        if p.name not in bound:
            continue
        value = bound[p.name]
        if isinstance(p, ir.schemas.AttributeParameter):
            attributes[p.name] = value
        elif isinstance(value, ir.Value) or value is None:
            inputs.append(value)
        else:
            inputs.append(tracer.constant(value))
    return inputs, attributes


def _symbolic(tracer: _Tracer, node_arg: Any, inputs: list[Any], fx_inputs: list[Any]) -> Any:
    """An FX argument as the translation sees it: tensors (and SymInts) as graph inputs, dtypes as
    ONNX type numbers, other values as they are."""
    ir = tracer.ir
    if isinstance(node_arg, torch.fx.Node):
        val = node_arg.meta.get("val")
        v = ir.Value(name=f"input_{len(inputs)}")
        dtype = _val_dtype(val)
        if dtype is not None:
            v.dtype = ir.DataType(dtype)
        if isinstance(val, torch.Tensor):
            v.shape = ir.Shape([d if isinstance(d, int) else None for d in val.shape])
        else:
            v.shape = ir.Shape([])
        inputs.append(v)
        fx_inputs.append(node_arg)
        return v
    if isinstance(node_arg, (list, tuple)):
        return type(node_arg)(_symbolic(tracer, a, inputs, fx_inputs) for a in node_arg)
    if isinstance(node_arg, torch.dtype):
        return _onnx_dtype(node_arg)
    if isinstance(node_arg, (torch.device, torch.layout, torch.memory_format)):
        return str(node_arg)
    return node_arg


def _bind(fn: Callable, node, args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The node's arguments for ``fn``: positional ones in order, keyword ones the function takes."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return args, kwargs
    takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {k: v for k, v in kwargs.items() if takes_kwargs or k in params}
    return args, kwargs


def build(node, candidates: Sequence[Any], opset: int) -> tuple[list[Any], bytes]:
    """Run the translation chosen for ``node``; returns the FX nodes that are its inputs and the
    ONNX it built, as ModelProto bytes with every local function inlined."""
    import onnx
    import onnx.inliner
    import onnx_ir as ir
    from onnxscript._internal import evaluator

    fn = choose(node, candidates)
    tracer = _Tracer(default_opset=18)
    graph_inputs: list[Any] = []
    fx_inputs: list[Any] = []
    args = [_symbolic(tracer, a, graph_inputs, fx_inputs) for a in node.args]
    kwargs = {k: _symbolic(tracer, v, graph_inputs, fx_inputs) for k, v in node.kwargs.items()}
    val = node.meta.get("val")
    n_out = len(val) if isinstance(val, (list, tuple)) else 1
    if _is_function_proto(fn):
        attributes = {}
        names = list(fn.attribute)
        values = [a for a in args if not isinstance(a, ir.Value)]
        attributes.update({k: v for k, v in zip(names, values)})
        attributes.update({k: v for k, v in kwargs.items() if k in names})
        inputs = [a for a in args if isinstance(a, ir.Value)]
        result = tracer.call_function(fn.domain or _LOCAL, fn.name, fn, inputs, attributes, len(fn.output))
    elif hasattr(fn, "to_function_proto") and hasattr(fn, "op_signature"):
        a, k = _bind(fn.function, node, args, kwargs)
        result = tracer.eval_function(fn, a, k)
    else:
        a, k = _bind(fn, node, args, kwargs)
        with evaluator.default_as(tracer):
            result = fn(*a, **k)
    outputs = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(outputs) != n_out:
        raise ValueError(f"the translation returned {len(outputs)} values; the node has {n_out} outputs")
    final = []
    for o in outputs:
        if not isinstance(o, ir.Value) or o in graph_inputs or o.producer() is None:
            # An input returned as is, or a Python value: the graph output needs a node.
            src = o if isinstance(o, ir.Value) else tracer.constant(o)
            out = ir.Value(name=tracer._name("out"))
            tracer.nodes.append(ir.Node("", "Identity", inputs=[src], outputs=[out]))
            o = out
        final.append(o)
    graph = ir.Graph(graph_inputs, final, nodes=tracer.nodes, name=f"custom_{node.name}",
                     opset_imports=dict(tracer.opsets))
    model = ir.Model(graph, ir_version=10)
    proto = ir.serde.serialize_model(model)
    for f in tracer.functions.values():
        proto.functions.append(f if isinstance(f, onnx.FunctionProto) else onnx.FunctionProto.FromString(
            f.SerializeToString()))
    if proto.functions:
        proto = onnx.inliner.inline_local_functions(proto)
    _check_against_schemas(proto, fn, node, opset)
    return fx_inputs, proto.SerializeToString()


def _function_name(fn: Any) -> str:
    if _is_function_proto(fn):
        return f"FunctionProto {fn.domain}::{fn.name}" if fn.domain else f"FunctionProto {fn.name}"
    inner = getattr(fn, "function", fn)
    return getattr(inner, "__qualname__", None) or getattr(fn, "name", None) or repr(fn)


def _check_against_schemas(proto: Any, fn: Any, node: Any, opset: int) -> None:
    """Each node a custom translation built, checked against its ONNX operator's schema (the
    attributes' names and types, the inputs' count): a wrong one is the translation's error,
    named here, not a model that onnx.checker and ONNX Runtime reject later."""
    import onnx
    import onnx.checker
    import onnx.defs

    ctx = onnx.checker.C.CheckerContext()
    ctx.ir_version = proto.ir_version
    ctx.opset_imports = {imp.domain: imp.version for imp in proto.opset_import}

    def nodes(graph):
        """Every node, a subgraph's included; a node holding subgraphs with each emptied, since
        the checker reads a subgraph's uses of outer values without the outer scope."""
        for n in graph.node:
            subgraphs = [a for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]
            if subgraphs:
                bare = onnx.NodeProto()
                bare.CopyFrom(n)
                for a in bare.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        a.g.CopyFrom(onnx.GraphProto(name=a.g.name))
                yield bare
                for a in subgraphs:
                    yield from nodes(a.g)
            else:
                yield n

    for n in nodes(proto.graph):
        if not onnx.defs.has(n.op_type, n.domain):
            continue  # a custom domain's operator: its runtime knows it
        try:
            onnx.checker.check_node(n, ctx, onnx.checker.C.LexicalScopeContext())
        except onnx.checker.ValidationError as e:
            what = str(e).strip().splitlines()[0]
            name = _function_name(fn)
            err = _errors.TranslationError(
                f"the custom translation `{name}` of node `{node.name}` ({target_key(node.target)}) writes an "
                f"invalid {n.op_type} node: {what}\nhint: fix `{name}`: the ONNX operator {n.op_type} (opset "
                f"{ctx.opset_imports.get(n.domain, opset)}) does not take that"
            )
            err.stage, err.node, err.target = "translate", node.name, target_key(node.target)
            err.hint = f"fix `{name}`: the ONNX operator {n.op_type} does not take that"
            raise err from None
