"""TorchScript programs as fxonnx programs: ``fxonnx.export(..., dynamo=False)``.

torch.onnx's older exporter takes what ``torch.jit.trace`` records of a module (or a
``torch.jit.ScriptModule``, ``ScriptFunction``, or a file ``torch.jit.save`` wrote) and lowers the
TorchScript graph to ONNX op by op. fxonnx lowers the same graph into the program form its FX front
end produces, an ``ExportedProgram`` of ATen ops, so that the rest of the export (the translation
table, the optimizer, metadata, the report) is the one ``dynamo=True`` uses:

- The graph is inlined (calls of submodules' methods), and evaluated **abstractly**, node by node:
  an ATen op on tensors becomes an FX node of that op, its value computed by torch's own meta
  kernels on fake tensors (``FakeTensorMode``), whose sizes are symbols where ``dynamic_axes``
  names the axis; everything else (ints, bools, lists, tuples, ``None`` checks, attribute reads of
  the module, sizes that are static) is computed in Python while converting, as the TorchScript
  exporter's constant folding would.
- Control flow: a ``prim::If`` whose condition is known is its taken branch; one whose condition
  depends on data or on a dynamic size is ``torch.cond`` (ONNX ``If``). A ``prim::Loop`` with a
  known trip count is unrolled (lists appended to in it become the tensors they hold).
- Sizes read from tensors (``x.size(0)``, which a trace records) stay computed from the input at
  run time; an int read from a tensor's data (``int(t)``) is an unbacked symbol, as torch.export
  makes it.
- Parameters and buffers are the program's state (their names the module's: ``fc.weight``); tensor
  constants of the graph are lifted constants.

What the TorchScript exporter writes that this does not (yet) is an error naming the node: loops
whose trip count depends on the input, lists grown in them, and module attributes written while the
graph runs (``prim::SetAttr``).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import operator
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

from . import _errors, _symbolic

# c10::ScalarType, in its order: the TorchScript graph holds dtypes as these numbers.
_SCALAR_TYPES = [
    torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32, torch.float64,
    torch.complex32, torch.complex64, torch.complex128, torch.bool, torch.qint8, torch.quint8, torch.qint32,
    torch.bfloat16, torch.quint4x2, torch.quint2x4, None, None, None, None, None, torch.float8_e5m2,
    torch.float8_e4m3fn, torch.float8_e5m2fnuz, torch.float8_e4m3fnuz,
]
_LAYOUTS = [torch.strided, torch.sparse_coo]
_MEMORY_FORMATS = [torch.contiguous_format, torch.preserve_format, torch.channels_last, torch.channels_last_3d]

# TorchScript's scalar ops on ints, floats and bools, as the Python operators FX writes for
# symbolic sizes (torch.export's sym ops).
_SCALAR_OPS: dict[str, Callable] = {
    "aten::add": operator.add, "aten::sub": operator.sub, "aten::mul": operator.mul,
    "aten::floordiv": operator.floordiv, "aten::div": operator.truediv, "aten::remainder": operator.mod,
    "aten::__mod__": operator.mod, "aten::neg": operator.neg, "aten::pow": operator.pow,
    "aten::eq": operator.eq, "aten::ne": operator.ne, "aten::lt": operator.lt, "aten::le": operator.le,
    "aten::gt": operator.gt, "aten::ge": operator.ge, "aten::__and__": operator.and_,
    "aten::__or__": operator.or_, "aten::__not__": operator.not_, "aten::__xor__": operator.xor,
}

# Arithmetic on 0-d tensors that the trace made of sizes (`x.size(0) - 1` is `aten::sub` on the
# tensor `prim::NumToTensor` made): the same on the numbers, so that `int()` of the result is the
# size expression (or the constant) and not a new symbol.
_NUMBER_ARITHMETIC: dict[str, Callable] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "floor_divide": operator.floordiv,
    "remainder": operator.mod, "neg": operator.neg,
}
_NUMBER_IDENTITY = {"clone", "detach", "alias", "lift_fresh", "_to_copy", "to"}  # writes: `forget_numbers`


class TorchScriptError(_errors.CaptureError):
    """The TorchScript program holds something fxonnx cannot take (stage ``capture``); ``node``
    is the TorchScript node's kind and ``hint`` what to do."""


def _error(message: str, node: Any = None, hint: str | None = None) -> TorchScriptError:
    where = ""
    if node is not None:
        source = node.sourceRange().strip().splitlines()
        where = f" (TorchScript node `{node.kind()}`{', ' + source[0].strip() if source else ''})"
    err = TorchScriptError(f"{message}{where}" + (f"; hint: {hint}" if hint else ""))
    err.node = node.kind() if node is not None else None
    err.hint = hint
    return err


# --- the program TorchScript holds ----------------------------------------------------------------


def is_script(model: Any) -> bool:
    return isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction))


def script_of(model: Any, args: tuple, kwargs: dict, training: Any) -> tuple[Any, bool]:
    """The TorchScript program to convert: ``model`` itself when it is scripted (or loaded from a
    ``torch.jit.save`` file), else its trace on ``args``, as the TorchScript exporter takes it;
    and whether the module's training mode was changed for it (restore it after)."""
    if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
        model = torch.jit.load(model)
    if isinstance(model, torch.jit.ScriptFunction):
        return model, False
    changed = _set_training(model, training)
    if is_script(model):
        return model, changed
    if kwargs:
        raise _error("a traced model takes its inputs as args only", hint="pass them in `args`, in order")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit.trace's deprecation and tracer warnings
        traced = torch.jit.trace(model, args, check_trace=False, strict=False)
    return traced, changed


def _set_training(model: Any, training: Any) -> bool:
    """torch.onnx's ``training``: EVAL (the default) exports in eval mode, TRAINING in training
    mode, PRESERVE as the module is. Returns whether the mode was changed."""
    if not isinstance(model, torch.nn.Module):
        return False
    name = getattr(training, "name", None) or (str(training).rsplit(".", 1)[-1] if training is not None else "EVAL")
    want = {"EVAL": False, "TRAINING": True}.get(name.upper())
    if want is None or model.training == want:
        return False
    model.train(want)
    return True


# --- values --------------------------------------------------------------------------------------


@dataclasses.dataclass
class ModuleValue:
    """A (sub)module the graph reads attributes of: its object and its path (``encoder.layer.0``)."""

    obj: Any
    path: str


@dataclasses.dataclass
class Packed:
    """A ``PackedSequence`` as the TorchScript exporter keeps it: the padded tensor, time-major
    (``[T, B, ...]``), and each sequence's length. Its data and batch sizes are two handles on it
    (``_pack_padded_sequence``'s two results), which only recurrent layers and
    ``_pad_packed_sequence`` read."""

    padded: torch.fx.Node
    lengths: torch.fx.Node


@dataclasses.dataclass
class PackedData:
    packed: Packed


@dataclasses.dataclass
class PackedBatchSizes:
    packed: Packed


# A quantized dtype's integer type and range.
_QUANTIZED = {
    torch.quint8: (torch.uint8, 0, 255), torch.qint8: (torch.int8, -128, 127), torch.qint32: (torch.int32, -2**31, 2**31 - 1),
}


@dataclasses.dataclass
class Quantized:
    """A quantized tensor of eager-mode quantization, as the TorchScript exporter carries it: its
    integer values, scale and zero point (numbers, or 0-d tensors where they are inputs of the
    program), and its quantized dtype. Ops read it dequantized; ops whose result TorchScript
    types as quantized quantize their float result again (``quantized::*`` ops with the scale and
    zero point they are given, others with their input's), as the QuantizeLinear /
    DequantizeLinear pairs torch.onnx writes."""

    values: torch.fx.Node
    scale: Any
    zero_point: Any
    qdtype: Any


# `quantized::` ops on quantized tensors as the float ATen op they compute; their last two
# arguments are the output's scale and zero point.
_QUANTIZED_FLOAT_OPS = {
    "add": (torch.ops.aten.add.Tensor, False), "add_relu": (torch.ops.aten.add.Tensor, True),
    "mul": (torch.ops.aten.mul.Tensor, False), "mul_relu": (torch.ops.aten.mul.Tensor, True),
    "add_scalar": (torch.ops.aten.add.Tensor, False), "mul_scalar": (torch.ops.aten.mul.Tensor, False),
    "hardswish": (torch.ops.aten.hardswish.default, False),
    "layer_norm": (torch.ops.aten.layer_norm.default, False),
    "group_norm": (torch.ops.aten.group_norm.default, False),
    "instance_norm": (torch.ops.aten.instance_norm.default, False),
    "leaky_relu": (torch.ops.aten.leaky_relu.default, False),
    "sigmoid": (torch.ops.aten.sigmoid.default, False),
    "batch_norm2d": (torch.ops.aten.batch_norm.default, False),
    "batch_norm2d_relu": (torch.ops.aten.batch_norm.default, True),
}


def _padded_rnn_ops() -> dict[str, Any]:
    """fxonnx's recurrent layers over padded sequences of given lengths (ONNX's ``sequence_lens``):
    ``fxonnx::lstm_padded``, ``gru_padded``, ``rnn_tanh_padded``, ``rnn_relu_padded``. Registered
    once; their fake kernels give the shapes, the translations are fxonnx's."""
    global _PADDED
    try:
        return _PADDED
    except NameError:
        pass
    lib = torch.library.Library("fxonnx", "FRAGMENT")  # noqa: TOR901 - fxonnx's own ops
    common = "Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional"
    lib.define(f"lstm_padded(Tensor input, Tensor lengths, Tensor[] hx, {common}) -> (Tensor, Tensor, Tensor)")
    for name in ("gru_padded", "rnn_tanh_padded", "rnn_relu_padded"):
        lib.define(f"{name}(Tensor input, Tensor lengths, Tensor hx, {common}) -> (Tensor, Tensor)")

    def output(input, h0, bidirectional):
        hidden = h0.shape[-1]
        return input.new_empty((input.shape[0], input.shape[1], (2 if bidirectional else 1) * hidden))

    def lstm_meta(input, lengths, hx, params, has_biases, num_layers, dropout, train, bidirectional):
        return output(input, hx[0], bidirectional), torch.empty_like(hx[0]), torch.empty_like(hx[1])

    def other_meta(input, lengths, hx, params, has_biases, num_layers, dropout, train, bidirectional):
        return output(input, hx, bidirectional), torch.empty_like(hx)

    for name, meta in (("lstm_padded", lstm_meta), ("gru_padded", other_meta), ("rnn_tanh_padded", other_meta),
                       ("rnn_relu_padded", other_meta)):
        lib.impl(name, meta, "Meta")
        lib.impl(name, meta, "CompositeExplicitAutograd")  # only ever run on fake tensors here
    _PADDED = {"lstm": torch.ops.fxonnx.lstm_padded.default, "gru": torch.ops.fxonnx.gru_padded.default,
               "rnn_tanh": torch.ops.fxonnx.rnn_tanh_padded.default,
               "rnn_relu": torch.ops.fxonnx.rnn_relu_padded.default, "_lib": lib}
    return _PADDED


def _kernel_shapes(target: Any, metas: tuple) -> Any | None:
    """The outputs of ops whose kernels read sizes as numbers, which would fix dynamic ones (the
    ONNX ops do not), from their arguments' sizes: torch's recurrent layers (they loop over the
    sequence) and ``conv_tbc``. ``None`` for other ops."""
    name = target._opname
    if target is torch.ops.aten.conv_tbc.default:
        (input, weight, *rest), kwargs = metas
        pad = rest[1] if len(rest) > 1 else kwargs.get("pad", 0)
        return input.new_empty((input.shape[0] + 2 * pad - weight.shape[0] + 1, input.shape[1], weight.shape[2]))
    if name not in ("lstm", "gru", "rnn_tanh", "rnn_relu") or target._overloadname != "input":
        return None
    args = metas[0]
    input, hx, bidirectional, batch_first = args[0], args[1], args[7], args[8]
    h0 = hx[0] if name == "lstm" else hx
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else (input.shape[0], input.shape[1])
    sizes = (batch, steps) if batch_first else (steps, batch)
    out = input.new_empty((*sizes, (2 if bidirectional else 1) * h0.shape[-1]))
    if name == "lstm":
        return out, torch.empty_like(hx[0]), torch.empty_like(hx[1])
    return out, torch.empty_like(hx)


def _meta(value: Any) -> Any:
    """What a converted value is to torch's kernels: an FX node's fake value, containers of them."""
    if isinstance(value, torch.fx.Node):
        return value.meta["val"]
    if isinstance(value, list):
        return [_meta(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_meta(v) for v in value)
    return value


def _is_symbolic(x: Any) -> bool:
    return isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool))


class _BranchesDiffer(Exception):
    """The branches of a runtime `if` return tensors of different ranks or types (internal: a
    `TorchScriptError` where the `if` cannot be decided on the example)."""


@dataclasses.dataclass
class Program:
    """The converted program and what the export needs of it: the names the inputs were given
    (``input_names``; ``""`` for one without), of the inputs the program kept."""

    exported: Any
    dim_names: dict[str, str]
    input_names: list[str]


class Converter:
    """Evaluates one TorchScript graph into an FX graph (see the module docstring)."""

    def __init__(self, owner: "ProgramBuilder", graph: torch.fx.Graph, parent: "Converter | None" = None):
        self.owner = owner
        self.graph = graph
        self.parent = parent
        self.env: dict[Any, Any] = {}
        # Outer FX values this (sub)graph reads, each a placeholder of its own.
        self.captured: dict[torch.fx.Node, torch.fx.Node] = {}
        # A tensor made from an int (prim::NumToTensor): the int, for int(tensor).
        self.from_int: dict[torch.fx.Node, Any] = {}
        # Lists of an enclosing graph as this subgraph reads them (copies: see `changes_list`).
        self.list_copies: list[list] = []
        # A branch whose kernels failed on the example's sizes: the tensors it reads from the
        # enclosing graph have sizes without hints (see `branches`).
        self.unhinted = False

    # -- values

    def value(self, v: Any) -> Any:
        if v in self.env:
            return self.env[v]
        if self.parent is not None:
            return self.capture(self.parent.value(v))
        raise _error(f"the value `%{v.debugName()}` is used before it is defined", v.node())

    def capture(self, value: Any) -> Any:
        """A value of an enclosing graph, as this subgraph sees it: FX nodes become placeholders
        (through each graph between, so that every subgraph reads only its own parent's values)."""
        if isinstance(value, torch.fx.Node):
            if value.graph is self.graph:
                return value
            if self.parent is None:
                raise TorchScriptError(f"`{value.name}` is not a value of the program's graph")
            value = self.parent.capture(value)
            found = self.captured.get(value)
            if found is None:
                found = self.graph.placeholder(f"{value.name}_captured")
                found.meta["val"] = self.without_hints(value.meta["val"]) if self.unhinted else value.meta["val"]
                for marker in _MARKERS.values():
                    if value.meta.get(marker):
                        found.meta[marker] = True
                self.captured[value] = found
            return found
        if isinstance(value, SeqList):
            copy = SeqList(self.capture(value.node))
            self.list_copies.append(copy)  # appended to here: refused (`changes_list`)
            return copy
        if isinstance(value, list):
            items = [self.capture(v) for v in value]
            if self.parent is None and all(a is b for a, b in zip(items, value)):
                return value  # the same list: what the program appends to it is kept
            self.list_copies.append(items)
            return items
        if isinstance(value, tuple):
            return tuple(self.capture(v) for v in value)
        return value

    def without_hints(self, val: Any) -> Any:
        """A tensor's meta whose dynamic sizes are fresh symbols without a value in the example, as
        torch.export reads unbacked sizes: a kernel then takes the sizes the model may run with
        (a broadcast of such a size against 30 is one of 30), not only the example's."""
        if not isinstance(val, torch.Tensor) or all(isinstance(d, int) for d in val.shape):
            return val
        sizes = [d if isinstance(d, int) else self.owner.shape_env.create_unbacked_symint() for d in val.shape]
        return self.fake(torch.empty, sizes, dtype=val.dtype)

    def emit(self, target: Any, args: tuple, kwargs: dict | None = None, val: Any = None) -> torch.fx.Node:
        # Named as torch.export names nodes: after the op (`linear`, `linear_1`), not its overload.
        name = getattr(target, "_opname", None) or getattr(target, "__name__", None)
        node = self.graph.create_node("call_function", target, args, kwargs or {}, name=name)
        node.meta["val"] = val
        return node

    def fake(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        # Unbacked symbols a kernel makes (nonzero's count) are bound by the FX node that holds
        # its result, not by torch.export's tracer: nothing to check them against here.
        # The Python dispatcher: kernels that take symbolic sizes only through their Python
        # decompositions (`constant_pad_nd`), as torch.export runs them.
        from torch._dispatch.python import enable_python_dispatcher

        with self.owner.mode, enable_python_dispatcher(), self.owner.shape_env.ignore_fresh_unbacked_symbols():
            return fn(*args, **kwargs)

    # -- nodes

    def run_block(self, block: Any, inputs: list[Any]) -> list[Any]:
        for param, value in zip(block.inputs(), inputs):
            self.env[param] = value
        for node in block.nodes():
            self.run_node(node)
        # A graph's return is `return_node()`, a block's `returnNode()`.
        ret = block.returnNode() if hasattr(block, "returnNode") else block.return_node()
        return [self.value(v) for v in ret.inputs()]

    def run_node(self, node: Any) -> None:
        kind = node.kind()
        handler = getattr(self, "op_" + kind.replace("::", "_"), None)
        custom = _symbolic.custom_symbolic(kind, self.owner.opset) if kind != "prim::PythonOp" else None
        if custom is not None:
            results = self.custom_symbolic(node, custom)
        elif handler is not None:
            results = handler(node)
        elif _schema(node) is not None:
            results = self.call_op(node)
        else:
            raise _error(f"no conversion of `{kind}`", node,
                         "report it with the model; `dynamo=True` may capture the model instead")
        outputs = list(node.outputs())
        if len(outputs) == 1:
            results = [results]
        elif results is None:
            results = [None] * len(outputs)
        for out, value in zip(outputs, results):
            self.env[out] = value

    # constants, containers, attributes

    def op_prim_Constant(self, node: Any) -> Any:
        out = node.output()
        if out.type().kind() == "NoneType" or not node.attributeNames():
            return None
        value = out.toIValue()
        if isinstance(value, torch.Tensor):
            return self.constant(value, out.debugName())
        return value

    def constant(self, tensor: torch.Tensor, name: str) -> torch.fx.Node:
        node = self.owner.constant_tensor(tensor, name, self)
        if tensor.dim() == 0 and not tensor.is_complex() and not tensor.is_quantized:
            self.from_int[node] = tensor.item()
        return node

    def op_prim_ListConstruct(self, node: Any) -> Any:
        return [self.value(v) for v in node.inputs()]

    def op_prim_TupleConstruct(self, node: Any) -> Any:
        return tuple(self.value(v) for v in node.inputs())

    def op_prim_DictConstruct(self, node: Any) -> Any:
        items = [self.value(v) for v in node.inputs()]
        return dict(zip(items[0::2], items[1::2]))

    def _unpack(self, node: Any) -> Any:
        value = self.value(node.input())
        if not isinstance(value, (list, tuple)):
            raise _error("unpacking a list or tuple whose length is only known at run time", node)
        n = len(list(node.outputs()))
        if len(value) != n:
            raise _error(f"unpacking {len(value)} values into {n}", node)
        # One output is the item itself (`run_node` takes one result for one output).
        return value[0] if n == 1 else list(value)

    op_prim_ListUnpack = _unpack
    op_prim_TupleUnpack = _unpack

    def op_prim_TupleIndex(self, node: Any) -> Any:
        items, index = (self.value(v) for v in node.inputs())
        return items[self.static_int(index, node)]

    def op_prim_GetAttr(self, node: Any) -> Any:
        owner = self.value(node.input())
        name = node.s("name")
        if not isinstance(owner, ModuleValue):
            raise _error(f"reading attribute `{name}` of a value that is not the module", node)
        key = (id(owner.obj), name)
        if key in self.owner.attributes:
            return self.capture(self.owner.attributes[key])
        value = getattr(owner.obj, name)
        path = f"{owner.path}.{name}" if owner.path else name
        if isinstance(value, torch.Tensor):
            return self.capture(self.owner.state(value, path, owner.obj, name))
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
            # A list of the module's tensors (an RNN's `_flat_weights`): each its own state.
            names = getattr(owner.obj, f"{name}_names", None) or [f"{name}.{i}" for i in range(len(value))]
            prefix = f"{owner.path}." if owner.path else ""
            items = [self.owner.state(v, prefix + n, owner.obj, n) for v, n in zip(value, names)]
            if isinstance(value, list):
                # One list for the run, as TorchScript's lists are shared: what one read of it
                # appends, the next read sees.
                self.owner.attributes[key] = items
            return self.capture(items)
        if isinstance(value, (torch.nn.Module, torch.jit.ScriptModule, torch._C.ScriptObject)):
            return ModuleValue(value, path)
        return value

    def op_prim_SetAttr(self, node: Any) -> Any:
        """An attribute the program writes on its module: what it reads afterwards in this run, as
        the TorchScript exporter takes it (the module itself is left as it is)."""
        owner, value = (self.value(v) for v in node.inputs())
        if self.parent is not None:
            raise _error(f"the program writes the module attribute `{node.s('name')}` in a branch decided at run time",
                         node, "compute the value and return it instead of storing it on the module")
        if not isinstance(owner, ModuleValue):
            raise _error(f"writing attribute `{node.s('name')}` of a value that is not the module", node)
        self.owner.attributes[(id(owner.obj), node.s("name"))] = value

    def op_prim_CreateObject(self, node: Any) -> Any:
        raise _error("the program creates a TorchScript object", node)

    # scalars and types

    def op_prim_NumToTensor(self, node: Any) -> Any:
        x = self.value(node.input())
        if isinstance(x, torch.fx.Node):
            val = x.meta["val"]
            dtype = torch.int64 if isinstance(val, torch.SymInt) else (
                torch.float64 if isinstance(val, torch.SymFloat) else torch.bool)
            out = self.emit(torch.ops.aten.scalar_tensor.default, (x,), {"dtype": dtype},
                            self.fake(torch.ops.aten.scalar_tensor.default, val, dtype=dtype))
        else:
            dtype = torch.bool if isinstance(x, bool) else torch.int64 if isinstance(x, int) else torch.float64
            out = self.emit(torch.ops.aten.scalar_tensor.default, (x,), {"dtype": dtype},
                            self.fake(torch.ops.aten.scalar_tensor.default, x, dtype=dtype))
        self.from_int[out] = x
        return out

    def _scalar_of(self, node: Any, kind: type) -> Any:
        x = self.value(node.input())
        if not isinstance(x, torch.fx.Node):
            return kind(x)
        if not isinstance(x.meta["val"], torch.Tensor):  # an int already (a SymInt node)
            return x
        if x in self.from_int:
            number = self.from_int[x]
            if not isinstance(number, torch.fx.Node):
                return kind(number)
            if isinstance(number.meta["val"], torch.SymInt) == (kind is int):
                return number
        return self.item(x, kind)

    def op_aten_Int(self, node: Any) -> Any:
        return self._scalar_of(node, int)

    def op_aten_Float(self, node: Any) -> Any:
        return self._scalar_of(node, float)

    def op_aten_Bool(self, node: Any) -> Any:
        return self._scalar_of(node, bool)

    op_aten_IntImplicit = op_aten_Int
    op_aten_FloatImplicit = op_aten_Float

    def op_aten_ScalarImplicit(self, node: Any) -> Any:
        x = self.value(node.input())
        if isinstance(x, torch.fx.Node) and x in self.from_int:
            return self.from_int[x]
        val = x.meta["val"] if isinstance(x, torch.fx.Node) else x
        kind = float if isinstance(val, torch.Tensor) and val.is_floating_point() else int
        return self._scalar_of(node, kind)

    op_aten_item = op_aten_ScalarImplicit

    def as_output(self, item: torch.fx.Node, node: Any) -> torch.fx.Node:
        """A sequence's item as ``node``'s output: read back as a number where TorchScript types
        the output as one (a list of numbers is a sequence of 0-d tensors)."""
        kind = node.output().type().kind()
        return self.item(item, _TS_NUMBERS[kind]) if kind in _TS_NUMBERS else item

    def item(self, tensor: torch.fx.Node, kind: type) -> torch.fx.Node:
        """A number read from a tensor's data: a symbol whose hint is its value on the example
        inputs where the graph so far computes it (so that what torch's kernels decide on it is
        what the example decided, as the trace did), else an unbacked one."""
        env = self.owner.shape_env
        hint = self.owner.real_value(tensor) if kind is not bool else None
        if hint is not None and hint.numel() == 1:
            from torch._dynamo.source import ConstantSource
            from torch.fx.experimental.symbolic_shapes import DimDynamic

            value = kind(hint.item())
            source = ConstantSource(f"item_{len(self.owner.real)}")
            symbol = env.create_symbol(value, source, dynamic_dim=DimDynamic.DYNAMIC, positive=None)
            number = (env.create_symfloatnode(symbol, hint=value, source=source) if kind is float
                      else env.create_symintnode(symbol, hint=value, source=source))
        else:
            number = (env.create_unbacked_symbool() if kind is bool else env.create_unbacked_symfloat()
                      if kind is float else env.create_unbacked_symint())
        return self.emit(torch.ops.aten.item.default, (tensor,), val=number)

    def op_prim_dtype(self, node: Any) -> Any:
        x = self.value(node.input())
        if isinstance(x, Quantized):
            return _SCALAR_TYPES.index(x.qdtype)
        return _SCALAR_TYPES.index(self.tensor_meta(node.input(), node).dtype)

    def op_prim_device(self, node: Any) -> Any:
        return self.tensor_meta(node.input(), node).device

    def op_prim_layout(self, node: Any) -> Any:
        return 0

    def op_prim_requires_grad(self, node: Any) -> Any:
        return False

    def op_prim_is_cuda(self, node: Any) -> Any:
        return False

    def op_aten_dim(self, node: Any) -> Any:
        return self.tensor_meta(node.input(), node).dim()

    def op_aten_size(self, node: Any) -> Any:
        inputs = list(node.inputs())
        x = self.value(inputs[0])
        if isinstance(x, PackedBatchSizes) and len(inputs) == 2 and self.value(inputs[1]) == 0:
            return self.size(x.packed.padded, x.packed.padded.meta["val"], 0)
        meta = self.tensor_meta(inputs[0], node)
        if len(inputs) == 1:
            return [self.size(x, meta, d) for d in range(meta.dim())]
        return self.size(x, meta, self.static_int(self.value(inputs[1]), node))

    def size(self, x: Any, meta: Any, dim: int) -> Any:
        d = meta.shape[dim]
        if isinstance(d, torch.SymInt):
            x = x.values if isinstance(x, Quantized) else x
            return self.emit(torch.ops.aten.sym_size.int, (x, dim if dim >= 0 else dim + meta.dim()), val=d)
        return int(d)

    def op_aten_len(self, node: Any) -> Any:
        x = self.value(node.input())
        if isinstance(x, _Unbound):
            return self.size(x.tensor, x.tensor.meta["val"], x.dim)
        if isinstance(x, (list, tuple, dict, str)):
            return len(x)
        if isinstance(x, SeqList):
            length = self.container_step("length", [x.node], self.fake(torch.empty, (), dtype=torch.int64), node)
            return self.item(length, int)
        meta = self.tensor_meta(node.input(), node)
        return self.size(x, meta, 0)

    def op_aten___is__(self, node: Any) -> Any:
        a, b = (self.value(v) for v in node.inputs())
        if _is_optional(a) or _is_optional(b):
            return self.tensor_op(torch.ops.aten.logical_not.default, self.has_value(a if b is None else b))
        return a is b

    def op_aten___isnot__(self, node: Any) -> Any:
        a, b = (self.value(v) for v in node.inputs())
        if _is_optional(a) or _is_optional(b):
            return self.has_value(a if b is None else b)
        return a is not b

    def op_prim_unchecked_cast(self, node: Any) -> Any:
        x = self.value(node.input())
        if _is_optional(x):
            # `x` refined from `Optional[Tensor]` to `Tensor` (after `x is not None`): its tensor.
            return self.container_step("get", [x], x.meta["val"])
        return x

    # optional tensors known only at run time (ONNX `Optional`, opset 15 and up)

    def optional(self, value: Any, like: Any, node: Any) -> torch.fx.Node:
        """``value`` (``None``, a tensor or an optional already) as an optional tensor of
        ``like``'s type and sizes (a tensor's meta)."""
        if _is_optional(value):
            return value
        if value is None:
            return self.container_step("none", [], like, node)
        return self.container_step("wrap", [value], value.meta["val"], node)

    def own(self, value: Any) -> Any:
        """An optional this subgraph reads from an enclosing graph, as a value of the subgraph's
        own (an ``Identity``), which a branch or loop body returns; anything else as it is."""
        if _is_optional(value) and value.op == "placeholder":
            return self.container_step("same_optional", [value], value.meta["val"])
        return value

    # lists of tensors whose length is known only at run time (ONNX sequences, opset 14 and up:
    # a loop carries them and an Identity passes them on)

    def sequence(self, value: Any, like: Any, node: Any) -> torch.fx.Node:
        """``value`` (a ``SeqList``, a list of tensors, or ``None`` for one left uninitialized) as a
        sequence node, its items typed like ``like`` (a tensor's meta) where it has none."""
        if isinstance(value, SeqList):
            return self.capture(value.node)
        if not value:
            return self.container_step("empty", [], like, node)
        items = [self.as_item(v, node) for v in value]
        return self.container_step("construct", items, items[0].meta["val"], node, count=len(items))

    def as_item(self, v: Any, node: Any) -> torch.fx.Node:
        """An item of a sequence: a tensor, or a number as a 0-d tensor."""
        if _is_tensor(v):
            return v
        if isinstance(v, (bool, int, float)) or (isinstance(v, torch.fx.Node) and not _is_optional(v)
                                                 and not _is_sequence(v)):
            return self.stacked(v, _dtype_of_number(v))
        raise _error("a list whose length is known only at run time of other than tensors and numbers", node)

    def item_meta(self, *lists: Any, fallback: Any = None) -> Any:
        """The meta of an item of the first of ``lists`` that has one (a ``SeqList``, a list of
        tensors or numbers), else ``fallback`` (a float32 0-d tensor's if none)."""
        for items in lists:
            if isinstance(items, SeqList):
                return items.node.meta["val"]
            if isinstance(items, list) and items:
                first = items[0]
                if _is_tensor(first):
                    return first.meta["val"]
                if isinstance(first, (bool, int, float, torch.fx.Node)):
                    return self.fake(torch.empty, (), dtype=_dtype_of_number(first))
        return fallback if fallback is not None else self.fake(torch.empty, (), dtype=torch.float32)

    def container_step(self, step: str, inputs: list, val: Any, node: Any = None, count: int = 0) -> torch.fx.Node:
        """One ONNX op on optionals or sequences (``_container_model``'s ``step``), its result typed
        ``val`` and marked as what it is. Optionals need opset 15; a sequence a loop carries and an
        Identity passes on, 14."""
        optional = step in ("wrap", "none", "has", "get", "same_optional")
        need, what = (15, "an `Optional[Tensor]` known only at run time needs ONNX's `Optional`") if optional else (
            14, "a list whose length is known only at run time needs ONNX sequences a loop can carry")
        if self.owner.opset < need:
            raise _error(f"{what} (opset {need}), not opset {self.owner.opset}", node,
                         f"export with opset_version={need} or later, or with static sizes")
        dtype = next((x.meta["val"].dtype for x in inputs if isinstance(x, torch.fx.Node)), val.dtype)
        model, kind = _container_model(step, dtype, count, self.owner.opset)
        (item,) = self.onnx_graph(model, inputs, [val])
        if kind is not None:
            item.meta[kind] = True
        return item

    def onnx_graph(self, model: bytes, inputs: list, vals: list) -> list[torch.fx.Node]:
        """An ONNX graph (a serialized model) in the program: one ``fxonnx::onnx_graph`` node
        reading ``inputs``, its results typed ``vals``."""
        op, _ = _symbolic.onnx_graph_op()
        out = self.emit(op, (inputs, model.hex()), val=vals)
        return [self.emit(operator.getitem, (out, i), val=v) for i, v in enumerate(vals)]

    def sequence_op(self, node: Any, target: Any, inputs: list) -> Any:
        """An op on a list whose length is known only at run time: ``torch.stack`` or ``torch.cat``
        of it (``ConcatFromSequence``), or ``pop``, ``insert``, an item set or ``clear``, which
        change the sequence (``SequenceErase``, ``SequenceInsert``); other ops are refused."""
        name = target._schema.name
        items = inputs[0]
        if isinstance(items, SeqList) and name in ("aten::pop", "aten::insert", "aten::_set_item", "aten::clear"):
            self.changes_list(items, node)
            return self.change_sequence(name, items, inputs[1:], node)
        if name not in ("aten::stack", "aten::cat") or not isinstance(inputs[0], SeqList):
            raise _error(f"`{name}` of a list of tensors whose length is known only at run time", node,
                         "stack or concatenate the list first, or export with static sizes for the axes the loop "
                         "that builds it runs over")
        dim = self.static_int(inputs[1], node) if len(inputs) > 1 else 0
        return self.join_sequence(inputs[0], name == "aten::stack", dim, node)

    def change_sequence(self, name: str, items: SeqList, args: list, node: Any) -> Any:
        """``pop``, ``insert``, ``items[i] = x`` or ``clear`` of a sequence, as Python's lists do
        them (negative positions counted from the end; the position set is in the list)."""
        int64 = self.fake(torch.empty, (), dtype=torch.int64)
        seq, meta = items.node, items.node.meta["val"]
        if name == "aten::clear":
            items.node = self.container_step("empty", [], meta, node)
            return None
        if name == "aten::insert":
            position, item = self.stacked(args[0], torch.int64), self.as_item(args[1], node)
            items.node = self.container_step("insert_at", [seq, item, position], item.meta["val"], node)
            return None
        position = self.stacked(args[0] if args else -1, torch.int64)
        if name == "aten::pop":
            item = self.container_step("at", [seq, position], meta, node)
            items.node = self.container_step("erase", [seq, position], meta, node)
            return self.as_output(item, node)
        # items[i] = x: erase at i, insert at i (a negative i counted from the end first, so that
        # -1 stays the last place).
        length = self.container_step("length", [seq], int64, node)
        position = self.tensor_op(torch.ops.aten.remainder.Tensor, position, length)
        item = self.as_item(args[1], node)
        erased = self.container_step("erase", [seq, position], meta, node)
        items.node = self.container_step("insert_at", [erased, item, position], item.meta["val"], node)
        return None

    def join_sequence(self, items: SeqList, stack: bool, dim: int, node: Any) -> torch.fx.Node:
        """The items of a sequence stacked on a new axis ``dim`` or concatenated on ``dim``."""
        item = items.node.meta["val"]
        rank = item.dim() + int(stack)
        dim %= rank
        # The joined axis' size is the data's (the list's length, or the sum of its items' sizes).
        sizes = list(item.shape)
        length = self.owner.shape_env.create_unbacked_symint()
        if stack:
            sizes.insert(dim, length)
        else:
            sizes[dim] = length
        val = self.fake(torch.empty, sizes, dtype=item.dtype)
        return self.container_step("stack" if stack else "cat", [self.capture(items.node)], val, node, count=dim)

    def own_sequence(self, seq: torch.fx.Node) -> torch.fx.Node:
        """A sequence this subgraph reads from an enclosing graph as a value of its own."""
        if seq.op == "placeholder":
            return self.container_step("same_sequence", [seq], seq.meta["val"])
        return seq

    def has_value(self, x: torch.fx.Node) -> torch.fx.Node:
        """``x is not None`` of an optional: a bool tensor."""
        return self.container_step("has", [x], self.fake(torch.empty, (), dtype=torch.bool))

    op_aten_detach = None  # an op like the others (a tensor op)

    # symbolic functions

    def op_prim_PythonOp(self, node: Any) -> Any:
        """A ``torch.autograd.Function`` the traced code applied: the symbolic function registered
        for ``prim::PythonOp``, else the Function's own ``symbolic``, else its forward as traced
        (torch.onnx's ``autograd_inlining``)."""
        function = getattr(node.pyobj(), "__self__", None)
        tensors = iter(self.value(v) for v in node.inputs())
        scalars = iter(node.scalar_args())
        args = [next(tensors) if c == "d" else next(scalars) for c in node.cconv()]
        registered = _symbolic.custom_symbolic("prim::PythonOp", self.owner.opset)
        attrs = {"name": node.pyname(), "inplace": bool(node.i("inplace")) if "inplace" in node.attributeNames()
                 else False, "module": node.s("module") if "module" in node.attributeNames() else ""}
        if registered is not None:
            return self.symbolic_node(node, registered, args, attrs, node.pyname())
        if function is not None and hasattr(function, "symbolic"):
            return self.symbolic_node(node, function.symbolic, args, {}, node.pyname())
        if "Subgraph" not in node.attributeNames():
            raise _error(f"the autograd Function `{node.pyname()}` has no symbolic and no traced forward", node)
        sub = node.g("Subgraph")
        inputs = [self.value(v) for v in node.inputs()]
        results = self.run_block(sub, inputs)
        return results[0] if len(results) == 1 else results

    def custom_symbolic(self, node: Any, fn: Callable) -> Any:
        """An op with a symbolic function registered by ``torch.onnx.register_custom_op_symbolic``."""
        args = [self.value(v) for v in node.inputs()]
        return self.symbolic_node(node, fn, args, {}, node.kind())

    def symbolic_node(self, node: Any, fn: Callable, args: list[Any], kwargs: dict, name: str) -> Any:
        """The ONNX a symbolic function builds, in place of ``node``: one ``fxonnx::onnx_graph``
        node, its results typed as TorchScript types the node's outputs (the trace's sizes)."""
        inputs, model = _symbolic.run(fn, args, kwargs, self.owner.opset, node, name)
        metas = []
        for out in node.outputs():
            t = out.type()
            dtype = t.dtype() if hasattr(t, "dtype") and t.dtype() is not None else torch.float32
            sizes = t.sizes() if hasattr(t, "sizes") and t.sizes() is not None else None
            if sizes is None:
                raise _error(f"the output of `{name}` has no size the trace recorded, which fxonnx needs", node)
            metas.append(self.fake(torch.empty, sizes, dtype=dtype))
        items = self.onnx_graph(model, inputs, metas)
        return items[0] if len(items) == 1 else items

    def op_aten_set_(self, node: Any) -> Any:
        """``x.set_(y)``: from here on ``x`` is ``y`` (its storage, sizes and strides). Views of
        ``x`` taken before keep the storage they had, as they do in torch."""
        inputs = list(node.inputs())
        if len(inputs) != 2 or not _is_tensor(self.value(inputs[1])):
            raise _error("`set_` from a storage: only `set_` from a tensor is supported", node)
        if self.parent is not None:
            raise _error("`set_` inside a loop or branch known only at run time", node,
                         "call `set_` outside the loop or branch")
        source = self.value(inputs[1])
        self.env[inputs[0]] = source
        return source

    def op_prim_Uninitialized(self, node: Any) -> Any:
        return None

    def op_prim_RaiseException(self, node: Any) -> Any:
        message = self.value(next(node.inputs()))
        raise _error(f"the program raises on these inputs: {message}", node)

    def op_aten_warn(self, node: Any) -> Any:
        return None

    def op_prim_Print(self, node: Any) -> Any:
        return None

    def op_aten_format(self, node: Any) -> Any:
        return ""

    def op_aten_list(self, node: Any) -> Any:
        return list(self.value(node.input()))

    def op_aten___getitem__(self, node: Any) -> Any:
        items, index = (self.value(v) for v in node.inputs())
        if isinstance(items, dict):
            return items[index]
        if isinstance(items, SeqList):
            position = self.stacked(index, torch.int64)
            item = self.container_step("at", [self.capture(items.node), position], items.node.meta["val"], node)
            return self.as_output(item, node)
        if isinstance(index, torch.fx.Node) and self.alike_tensors(items):
            # Tensors of one shape, an index known at run time: the stack's row (negative ones
            # counted from the end, as Gather counts them).
            return self.tensor_op(torch.ops.aten.index.Tensor, self.stacked(items, None),
                                  [self.stacked(index, torch.int64)])
        if isinstance(index, torch.fx.Node) and isinstance(items, list) and items and all(_is_tensor(t) for t in items):
            return self.pick(items, index, node)
        return items[self.static_int(index, node)]

    def pick(self, items: list, index: torch.fx.Node, node: Any) -> torch.fx.Node:
        """``items[index]``, tensors of one rank but different sizes, the index known at run
        time: a ``cond`` per item (negative indices counted from the end, as lists count them)."""
        position = self.stacked(index, torch.int64)
        n = len(items)
        chosen = items[-1]
        for i in reversed(range(n - 1)):
            hit = self.tensor_op(torch.ops.aten.logical_or.default,
                                 self.tensor_op(torch.ops.aten.eq.Scalar, position, i),
                                 self.tensor_op(torch.ops.aten.eq.Scalar, position, i - n))
            chosen = self.choose(hit, items[i], chosen, node)
        return chosen

    def choose(self, condition: torch.fx.Node, a: torch.fx.Node, b: torch.fx.Node, node: Any) -> torch.fx.Node:
        """``a if condition else b`` as a ``cond`` (the two may differ in size)."""
        try:
            val = self.owner.join(a.meta["val"], b.meta["val"])
        except _BranchesDiffer as e:
            raise _error(str(e).replace("branches of an `if`", "items of the list"), node) from None
        branches = []
        for value in (a, b):
            sub = Converter(self.owner, torch.fx.Graph(), parent=self)
            branches.append((sub, [sub.capture(value)]))
        return self.emit_cond(condition, branches, [val])[0]

    def emit_cond(self, condition: torch.fx.Node, branches: list, vals: list) -> list[torch.fx.Node]:
        """``torch.cond`` of two converted branches (each its converter and its results), the
        results typed ``vals``: both branches take every outer value either reads, in one order."""
        operands: list[torch.fx.Node] = []
        for sub, _ in branches:
            for outer in sub.captured:
                if outer not in operands:
                    operands.append(outer)
        names = [self.owner.subgraph(sub, operands, outs, f"{'true' if k == 0 else 'false'}_graph")
                 for k, (sub, outs) in enumerate(branches)]
        true_attr, false_attr = (self.graph.get_attr(name) for name in names)
        out = self.emit(torch.ops.higher_order.cond, (condition, true_attr, false_attr, operands), val=tuple(vals))
        return [self.emit(operator.getitem, (out, i), val=v) for i, v in enumerate(vals)]

    @staticmethod
    def alike_tensors(items: Any) -> bool:
        if not isinstance(items, list) or not items or not all(_is_tensor(t) for t in items):
            return False
        first = items[0].meta["val"]
        return all(str(t.meta["val"].shape) == str(first.shape) and t.meta["val"].dtype == first.dtype for t in items)

    def changes_list(self, items: Any, node: Any) -> None:
        """A list op that writes: not into a list of an enclosing graph from a branch or loop body
        run at run time, whose writes would be lost."""
        if any(items is c for c in self.list_copies):
            raise _error("the program changes a list of the enclosing code in a branch or loop decided at run time",
                         node, "build the list outside the branch, or return the values from it")

    def op_aten_append(self, node: Any) -> Any:
        items, item = (self.value(v) for v in node.inputs())
        self.changes_list(items, node)
        if isinstance(items, SeqList):
            item = self.as_item(item, node)
            items.node = self.container_step("insert", [items.node, item], item.meta["val"], node)
            return items
        items.append(item)
        return items

    def op_aten___contains__(self, node: Any) -> Any:
        items, item = (self.value(v) for v in node.inputs())
        return item in items

    def op_aten_keys(self, node: Any) -> Any:
        return list(self.value(node.input()).keys())

    def op_aten_values(self, node: Any) -> Any:
        return list(self.value(node.input()).values())

    def op_aten_items(self, node: Any) -> Any:
        return list(self.value(node.input()).items())

    def op_prim_min(self, node: Any) -> Any:
        return self._minmax(node, min, torch.sym_min)

    def op_prim_max(self, node: Any) -> Any:
        return self._minmax(node, max, torch.sym_max)

    def _minmax(self, node: Any, python: Callable, symbolic: Callable) -> Any:
        values = [self.value(v) for v in node.inputs()]
        if len(values) == 1:
            values = list(values[0])
        if not any(isinstance(v, torch.fx.Node) for v in values):
            return python(values)
        result = values[0]
        for v in values[1:]:
            result = self.scalar_op(symbolic, (result, v))
        return result

    # control flow

    def op_prim_If(self, node: Any) -> Any:
        condition = self.value(node.input())
        blocks = list(node.blocks())
        if not isinstance(condition, torch.fx.Node):
            self.owner.skipped.add((node, 1 if condition else 0))
            return self.inline(blocks[0] if condition else blocks[1])
        try:
            return self.cond(node, condition, blocks)
        except _BranchesDiffer as e:
            val = condition.meta["val"]
            if not isinstance(val, torch.SymBool) or val.node.hint is None:
                raise _error(str(e), node) from None
        # The branches' results differ in rank or type, which one ONNX value cannot: the branch is
        # the one the example's sizes take, and the sizes the model takes are those that take it
        # too (a guard on the symbols, in the program's range constraints), as torch.export does.
        import warnings

        taken = bool(val)
        where = (node.sourceRange().split("\n")[0] if hasattr(node, "sourceRange") else "").strip()
        warnings.warn(f"an `if` on sizes whose branches return tensors of different ranks or types ({where}): "
                      f"the model takes the branch the example takes, and only sizes for which `{val.node.expr}` "
                      f"is {taken}", stacklevel=2)
        return self.inline(blocks[0] if taken else blocks[1])

    def inline(self, block: Any) -> Any:
        results = self.run_block(block, [])
        return results[0] if len(results) == 1 else results

    def op_prim_Loop(self, node: Any) -> Any:
        """A loop: unrolled while its trip count and condition are known; from the first
        iteration they are not, a ``while_loop`` (ONNX ``Loop``) for the rest."""
        inputs = [self.value(v) for v in node.inputs()]
        trips, keep_going, carried = inputs[0], inputs[1], inputs[2:]
        block = next(node.blocks())
        i = 0
        bound = trips if trips is not None else 1 << 62
        while True:
            if isinstance(bound, torch.fx.Node) or isinstance(keep_going, torch.fx.Node):
                carried = self.while_loop(node, block, bound, keep_going, i, carried)
                break
            if not (keep_going and i < bound):
                break
            if i >= self.owner.max_unroll:
                raise _error(f"a loop of more than {self.owner.max_unroll} iterations to unroll", node)
            results = self.run_block(block, [i, *carried])
            keep_going, carried = results[0], results[1:]
            i += 1
        return carried[0] if len(carried) == 1 else carried

    def while_loop(self, node: Any, block: Any, bound: Any, keep_going: Any, start: int, carried: list) -> list:
        """The rest of a loop from iteration ``start`` as ``torch.ops.higher_order.while_loop``: the
        iteration (an int), whether to go on (a bool tensor) and the loop's values carried; the
        outer values the body reads are its additional inputs. A carried tensor keeps its rank and
        type; sizes the body changes (a sequence grown by ``cat``) are unknown in the loop (ONNX's
        ``Loop`` lets a state change shape). A carried ``Optional[Tensor]`` is an ONNX optional; one
        that starts as ``None`` holds what the body gives it. A tuple is carried item by item.
        Where a first build of the body says otherwise than its guess (sizes, an empty list's or a
        ``None``'s items), the body is built once more."""
        types = []
        arity: list = []  # per carried value: the length of a tuple carried item by item, or None
        flat = []
        for v, out in zip(carried, node.outputs()):
            t = out.type()
            if t.kind() == "TupleType" and isinstance(v, tuple) and not any(
                    e.kind() == "TupleType" for e in t.elements()):
                types += list(t.elements())
                flat += list(v)
                arity.append(len(v))
            else:
                types.append(t)
                flat.append(v)
                arity.append(None)
        carried = flat
        kinds = ["optional" if t.kind() == "OptionalType" else "sequence" if _listed(t) else "number"
                 if t.kind() in _TS_NUMBERS else "tensor" for t in types]
        for v, kind in zip(carried, kinds):
            if not (_is_tensor(v) or (kind == "optional" and (v is None or _is_optional(v)))
                    or (kind == "sequence" and isinstance(v, (list, SeqList)))
                    or (kind == "number" and isinstance(v, (bool, int, float, torch.fx.Node)))):
                raise _error("a loop known only at run time that carries a value other than tensors", node,
                             "carry tensors, or export with static sizes for the axes it iterates over")
        # Lists of this graph the body appends to: sequences the loop carries.
        grown, lists = self.grown_lists([block], node)
        carried = [*carried, *lists]
        kinds += ["sequence"] * len(lists)
        guess = self.owner.guess()

        def meta_of(v: Any, kind: str, t: Any) -> Any:
            if kind == "number":  # a 0-d tensor in the loop, read back as a number
                return self.fake(torch.empty, (), dtype=_number_dtype(t))
            if isinstance(v, (list, SeqList)):
                return self.item_meta(v, fallback=guess)
            return v.meta["val"] if isinstance(v, torch.fx.Node) else guess

        metas = [meta_of(v, kind, t) for v, kind, t in zip(carried, kinds, types + [None] * len(lists))]
        built = self.loop_functions(node, block, bound, keep_going, metas, kinds, grown, arity)

        def learn(r: Any, m: Any, kind: str) -> Any:
            if not isinstance(r, torch.fx.Node):
                return m
            if m is guess:
                return r.meta["val"]
            if kind == "tensor" and _is_tensor(r) and str(r.meta["val"].shape) != str(m.shape):
                try:  # sizes the body changes: unknown in the loop
                    return self.owner.join(m, r.meta["val"])
                except _BranchesDiffer:
                    return m  # refused below
            return m

        learned = [learn(r, m, kind) for r, m, kind in zip(built[3], metas, kinds)]
        if any(a is not b for a, b in zip(learned, metas)):
            metas = learned
            built = self.loop_functions(node, block, bound, keep_going, metas, kinds, grown, arity)
        cond, body, go_on, next_carried = built
        go = keep_going if _is_tensor(keep_going) else self.stacked(keep_going, torch.bool)
        initial = {"tensor": lambda v, m: v, "optional": lambda v, m: self.optional(v, m, node),
                   "sequence": lambda v, m: self.sequence(v, m, node), "number": lambda v, m: self.stacked(v, m.dtype)}
        state = [go, *(initial[kind](v, m) for v, m, kind in zip(carried, metas, kinds))]
        next_go = body.results[0]
        for before, after, kind in zip(metas, next_carried, kinds):
            if kind != "tensor":
                continue  # an optional's or a sequence's items keep their own sizes
            val = after.meta["val"] if _is_tensor(after) else None
            if val is None or val.dim() != before.dim() or val.dtype != before.dtype:
                raise _error("a loop known only at run time whose carried tensor changes rank or type", node,
                             "carry tensors of one rank and type, or export with static sizes for the axes it "
                             "iterates over")
        next_index = body.scalar_op(operator.add, (body.index, 1))
        # Both functions take the same additional inputs: every outer value either reads, numbers
        # passed as 0-d tensors (a loop's inputs are tensors) and read back inside.
        additional: list[torch.fx.Node] = []
        for sub in (cond, body):
            for outer, inner in list(sub.captured.items()):
                if not isinstance(outer.meta["val"], torch.Tensor):
                    tensor = self.stacked(outer, _number_dtype_of(outer.meta["val"]))
                    sub.captured.pop(outer)
                    sub.read_back(inner, tensor)
                    outer = tensor
                if outer not in additional:
                    additional.append(outer)
        names = [self.owner.loop_graph(cond, 1 + len(state), additional, [go_on], "while_loop_cond_graph"),
                 self.owner.loop_graph(body, 1 + len(state), additional, [next_index, next_go, *next_carried],
                                       "while_loop_body_graph")]
        cond_attr, body_attr = (self.graph.get_attr(n) for n in names)
        # The states' types: the body's (a size it changes is unknown).
        vals = [self.owner.shape_env.create_unbacked_symint(), state[0].meta["val"], *metas]
        out = self.emit(torch.ops.higher_order.while_loop, (cond_attr, body_attr, (start, *state), tuple(additional)),
                        val=tuple(vals))
        finals = [self.emit(operator.getitem, (out, k), val=v) for k, v in enumerate(vals)]
        for final, kind in zip(finals[2:], kinds):
            if kind in _MARKERS:
                final.meta[_MARKERS[kind]] = True
        results = [SeqList(f) if kind == "sequence" else self.item(f, _number_kind(f)) if kind == "number" else f
                   for f, kind in zip(finals[2:], kinds)]
        self.regrow(lists, results[len(kinds) - len(lists):])
        return _regroup(results[:len(kinds) - len(lists)], arity)

    def grown_lists(self, blocks: list, node: Any) -> tuple[list, list]:
        """The lists of this graph that ``blocks`` (a loop's body, an if's branches decided at run
        time) append to: their TorchScript values and the lists (Python lists or ``SeqList``s).
        Their length is then known only at run time: the loop or if returns them as sequences."""
        grown = list(dict.fromkeys(v for block in blocks for v in _grown_lists(block)))
        lists = [self.value(v) for v in grown]
        for items in lists:
            if not isinstance(items, (list, SeqList)) or not any(items is e for e in self.env.values()) or any(
                    items is c for c in self.list_copies):
                raise _error("the program appends to a list of the enclosing code in a loop or branch decided at run "
                             "time, nested in another", node, "build the list in the loop's or branch's own code")
        return grown, lists

    def regrow(self, lists: list, finals: list) -> None:
        """The lists a loop or if grew are its final sequences (``SeqList``s), for every name of
        this graph that holds them."""
        for items, final in zip(lists, finals):
            if isinstance(items, SeqList):
                items.node = final.node
                continue
            for key, value in list(self.env.items()):
                if value is items:
                    self.env[key] = final

    def loop_functions(self, node: Any, block: Any, bound: Any, keep_going: Any, metas: list,
                       kinds: list[str], grown: list, arity: list) -> tuple:
        """A loop's condition and body functions, the carried values typed ``metas`` (tensors,
        optionals, sequences or numbers, as ``kinds`` says; the sequences last, the lists ``grown``
        names; tuples item by item, as ``arity`` groups them):
        ``(cond, body, go_on, next_carried)``, the body's results (the next `go` first) in
        ``body.results``."""
        go_meta = self.fake(torch.empty, (), dtype=torch.bool)

        def own_slots(sub: Converter) -> list[torch.fx.Node]:
            sub.index = sub.graph.placeholder("i")
            sub.index.meta["val"] = self.owner.shape_env.create_unbacked_symint()
            slots = [sub.graph.placeholder(f"carried_{k}") for k in range(1 + len(metas))]
            for slot, m, kind in zip(slots, [go_meta, *metas], ["tensor", *kinds]):
                slot.meta["val"] = m
                if kind in _MARKERS:
                    slot.meta[_MARKERS[kind]] = True
            return slots

        # cond_fn(i, go, *carried, *additional): i < bound and go.
        cond = Converter(self.owner, torch.fx.Graph(), parent=self)
        slots = own_slots(cond)
        limit = cond.capture(self.stacked(bound, torch.int64)) if isinstance(bound, torch.fx.Node) else bound
        more = cond.tensor_op(torch.ops.aten.lt.Scalar if not isinstance(limit, torch.fx.Node) else
                              torch.ops.aten.lt.Tensor, cond.stacked(cond.index, torch.int64), limit)
        go_on = cond.tensor_op(torch.ops.aten.logical_and.default, more, slots[0])
        # body_fn(i, go, *carried, *additional): the block on (i, *carried) → (i + 1, go', *carried').
        body = Converter(self.owner, torch.fx.Graph(), parent=self)
        b_slots = own_slots(body)
        lists = [SeqList(slot) for slot in b_slots[1 + len(metas) - len(grown):]]
        body.env.update(zip(grown, lists))
        params = [SeqList(slot) if kind == "sequence" else body.item(slot, _number_kind(slot)) if kind == "number"
                  else slot for slot, kind in zip(b_slots[1:1 + len(metas) - len(grown)], kinds)]
        results = body.run_block(block, [body.index, *_regroup(params, arity)])
        next_go, next_carried = results[0], [*_ungroup(results[1:], arity, node), *lists]
        next_go = next_go if _is_tensor(next_go) else body.stacked(next_go, torch.bool)
        final = {"tensor": lambda r, m: r, "optional": lambda r, m: body.optional(body.own(r), m, node),
                 "sequence": lambda r, m: body.own_sequence(body.sequence(r, m, node)),
                 "number": lambda r, m: body.stacked(r, m.dtype)}
        next_carried = [final[kind](r, m) for r, m, kind in zip(next_carried, metas, kinds)]
        body.results = [next_go, *next_carried]
        return cond, body, go_on, next_carried

    def cond(self, node: Any, condition: torch.fx.Node, blocks: list) -> Any:
        """``torch.cond`` of the two blocks: each a subgraph reading the outer values it uses.

        A block that raises is not a branch the model can take (ONNX cannot raise): the other block
        is the value, as the TorchScript exporter takes it. Results the two blocks compute alike
        (a constant) stay Python values; numbers that differ are computed by the `cond` as 0-d
        tensors and read back (an unbacked number, as data is); a result one block leaves
        uninitialized (an early `return` in the other) is zeros of the other's shape there."""
        val = condition.meta["val"]
        if not isinstance(val, (torch.Tensor, torch.SymBool)):
            raise _error("a branch on a value that is neither a tensor nor a symbolic bool", node)
        raising = [_raises(block) for block in blocks]
        if raising[0] != raising[1]:
            return self.inline(blocks[1] if raising[0] else blocks[0])
        # Lists of this graph a branch appends to: sequences both branches return (an empty list's
        # items typed as a first build says).
        grown, lists = self.grown_lists(blocks, node)
        guess = self.owner.guess()
        likes = [self.item_meta(items, fallback=guess) for items in lists]
        branches = self.branches(blocks, grown, lists, likes, node)
        learned = [next((b[1][len(b[1]) - len(grown) + k].node.meta["val"] for b in branches
                         if b[1][len(b[1]) - len(grown) + k].node.meta["val"] is not guess), like) if like is guess
                   else like for k, like in enumerate(likes)]
        if any(a is not b for a, b in zip(learned, likes)):
            branches = self.branches(blocks, grown, lists, learned, node)
        outputs_ts = list(node.outputs())
        kinds: list = []  # per result: "constant", "tensor", "number", or the length of a list of tensors
        for i, out in enumerate(outputs_ts):
            a, b = branches[0][1][i], branches[1][1][i]
            if not isinstance(a, torch.fx.Node) and not isinstance(b, torch.fx.Node) and _same_constant(a, b):
                kinds.append("constant")
            elif _is_optional(a) or _is_optional(b) or (out.type().kind() == "OptionalType" and (a is None or b is None)):
                kinds.append("optional")  # `None` in one branch, a tensor in the other
            elif isinstance(a, SeqList) or isinstance(b, SeqList) or (
                    isinstance(a, (list, type(None))) and isinstance(b, (list, type(None))) and _listed(out.type())
                    and (a is None or b is None or len(a) != len(b) or not all(map(_is_tensor, a + b)))):
                # A list whose length or numbers the branch decides (or one a branch leaves
                # uninitialized).
                kinds.append("sequence")
            elif _is_tensor(a) or _is_tensor(b):
                kinds.append("tensor")
            elif isinstance(a, list) and isinstance(b, list) and any(map(_is_tensor, a + b)):
                # A list of tensors from each branch (`res = res + [x]`): its items are the results.
                if len(a) != len(b) or not all(map(_is_tensor, a + b)):
                    raise _error("the branches of an `if` return lists of tensors of different lengths", node,
                                 "return lists of the same length from both branches")
                kinds.append(len(a))
            else:
                kinds.append("number")
        kinds += ["sequence"] * len(grown)
        results_per_branch = []
        for k, (sub, results) in enumerate(branches):
            other = branches[1 - k][1]
            outs = []
            for i, kind in enumerate(kinds):
                r = results[i]
                if kind == "constant":
                    continue
                if isinstance(kind, int):
                    outs.extend(r)
                elif kind == "optional":
                    like = r if r is not None else other[i]
                    if like is None or not isinstance(like, torch.fx.Node):
                        raise _error("an `if` whose branches return `None` and a value other than a tensor", node)
                    outs.append(sub.optional(sub.own(r), like.meta["val"], node))
                elif kind == "sequence":
                    like = sub.item_meta(r, other[i])
                    outs.append(sub.own_sequence(sub.sequence(r, like, node)))
                elif kind == "tensor":
                    outs.append(r if _is_tensor(r) else sub.stand_in(r, other[i], node))
                else:
                    outs.append(sub.stacked(r, _number_dtype(outputs_ts[i].type())))
            results_per_branch.append(outs)
        def joined(j: int, a: torch.fx.Node, b: torch.fx.Node) -> Any:
            try:
                return self.owner.join(a.meta["val"], b.meta["val"])
            except _BranchesDiffer:
                # A list whose items' type one branch has from a first guess (an empty list's, see
                # `while_loop`) and the other from the items it adds: the other's.
                guessed = [self.owner.guessed(x.meta["val"]) for x in (a, b)]
                if guessed[0] != guessed[1]:
                    return (b if guessed[0] else a).meta["val"]
                raise

        vals = [joined(j, a, b) for j, (a, b) in enumerate(zip(*results_per_branch))]
        items = iter(self.emit_cond(condition, [(sub, outs) for (sub, _), outs in zip(branches, results_per_branch)],
                                    vals))
        results = []
        for i, kind in enumerate(kinds):
            if kind == "constant":
                results.append(branches[0][1][i])
            elif isinstance(kind, int):
                results.append([next(items) for _ in range(kind)])
            elif kind == "tensor":
                results.append(next(items))
            elif kind == "optional":
                item = next(items)
                item.meta[_OPTIONAL] = True
                results.append(item)
            elif kind == "sequence":
                item = next(items)
                item.meta[_SEQUENCE] = True
                results.append(SeqList(item))
            else:
                t = outputs_ts[i].type().kind()
                results.append(self.item(next(items), _TS_NUMBERS.get(t, int)))
        self.regrow(lists, results[len(outputs_ts):])
        results = results[:len(outputs_ts)]
        return results[0] if len(results) == 1 else results

    def branches(self, blocks: list, grown: list, lists: list, likes: list, node: Any) -> list:
        """Each block converted in a subgraph: ``(converter, results)``, the lists in ``grown``
        (``lists``, their items typed ``likes`` where empty) sequences the block may append to,
        their final sequences after the block's results."""
        starts = [self.sequence(items, like, node) for items, like in zip(lists, likes)]

        def branch(block: Any, unhinted: bool) -> tuple:
            sub = Converter(self.owner, torch.fx.Graph(), parent=self)
            sub.unhinted = unhinted
            own = [SeqList(sub.capture(start)) for start in starts]
            sub.env.update(zip(grown, own))
            return sub, [*sub.run_block(block, []), *own]

        out = []
        for block in blocks:
            try:
                out.append(branch(block, False))
            except TorchScriptError as e:
                if not getattr(e, "on_sizes", False):
                    raise
                # A kernel failed on the example's sizes, in a branch the model takes for other
                # sizes (a broadcast the example's empty state cannot make): the branch once more,
                # on sizes without the example's values, as the model computes them when it runs.
                try:
                    out.append(branch(block, True))
                except TorchScriptError:
                    raise e from None
        return out

    def read_back(self, placeholder: torch.fx.Node, outer_tensor: torch.fx.Node) -> None:
        """Make the number placeholder ``placeholder`` a tensor placeholder standing for
        ``outer_tensor``, read back as a number where it was used."""
        tensor = self.graph.placeholder(f"{placeholder.name}_tensor")
        tensor.meta["val"] = outer_tensor.meta["val"]
        self.captured[outer_tensor] = tensor
        with self.graph.inserting_after(placeholder):
            number = self.graph.call_function(torch.ops.aten.item.default, (tensor,))
        number.meta["val"] = placeholder.meta["val"]
        placeholder.replace_all_uses_with(number)
        self.graph.erase_node(placeholder)

    def stand_in(self, value: Any, other: Any, node: Any) -> torch.fx.Node:
        """What a block returns where the other returns a tensor: its number as a tensor, or zeros
        of the other's shape for a value it leaves uninitialized."""
        if value is not None:
            meta = other.meta["val"]
            return self.stacked(value, meta.dtype)
        meta = other.meta["val"]
        sizes = [d if isinstance(d, int) else self.owner.size_of(d, self) for d in meta.shape]
        if any(d is None for d in sizes):
            raise _error("a value one branch leaves uninitialized, of a size known only at run time", node)
        return self.tensor_op(torch.ops.aten.zeros.default, sizes, dtype=meta.dtype)

    # ops the TorchScript exporter took in forms torch's kernels no longer take on fake tensors

    def op_prim_tolist(self, node: Any) -> Any:
        """``tensor.tolist()``: the numbers now when the tensor is a constant; a tensor known only at
        run time stays the tensor, as the TorchScript exporter returns it (ONNX has no lists of
        numbers)."""
        x, dims, _ = (self.value(v) for v in node.inputs())
        if isinstance(x, torch.Tensor):
            return x.tolist()
        if isinstance(x, torch.fx.Node) and _is_tensor(x) and dims == 1 and x.meta["val"].dim() == 1:
            return x
        raise _error("`tolist()` of a tensor known only at run time, other than a 1-D one", node,
                     "return the tensor itself")

    def op_onnx_Placeholder(self, node: Any) -> Any:
        """A write into part of a tensor, made a value by torch's ``remove_inplace_ops_for_onnx``
        pass (`_functional_writes`): the block holds the views from the tensor down to the part
        and the ``index_put_`` on it. The result is the whole tensor with that part written,
        computed without mutation: the part is put back up the chain of views by
        ``select_scatter`` and ``slice_scatter``."""
        name = node.s("name") if "name" in node.attributeNames() else ""
        block = next(node.blocks(), None)
        nodes = list(block.nodes()) if block is not None else []
        write = nodes[-1] if nodes else None
        if name not in ("index_put_", "index_put") or write is None or write.kind() not in ("aten::index_put_",
                                                                                         "aten::index_put"):
            raise _error(f"no conversion of the in-place write `{name}` inside a loop or branch", node,
                         "write the loop or branch without in-place updates, or export with dynamo=True")
        inside = {o for n in nodes for o in n.outputs()}
        chain, v = [], next(write.inputs())
        while v in inside:
            view = v.node()
            if view.kind() not in ("aten::select", "aten::slice"):
                raise _error(f"an in-place write through `{view.kind()}` inside a loop or branch", node,
                             "write the loop or branch without in-place updates, or export with dynamo=True")
            chain.append(view)
            v = next(view.inputs())
        chain.reverse()
        for other in nodes:
            if other is not write and other not in chain:
                self.run_node(other)
        targets = {"aten::select": (torch.ops.aten.select.int, torch.ops.aten.select_scatter.default),
                   "aten::slice": (torch.ops.aten.slice.Tensor, torch.ops.aten.slice_scatter.default)}
        wholes = [self.value(next(node.inputs()))]
        for view in chain:
            args = [self.value(a) for a in list(view.inputs())[1:]]
            wholes.append(self.tensor_op(targets[view.kind()][0], wholes[-1], *args))
        indices, values, accumulate = (self.value(a) for a in list(write.inputs())[1:])
        part = wholes.pop()
        if indices:
            part = self.tensor_op(torch.ops.aten.index_put.default, part, indices, values, bool(accumulate))
        else:  # the whole part: `copy_` as the pass writes it (values expanded to the part)
            values = self.tensor_op(torch.ops.aten._to_copy.default, values, dtype=part.meta["val"].dtype)
            values = self.tensor_op(torch.ops.aten.expand_as.default, values, part)
            part = self.tensor_op(torch.ops.aten.add.Tensor, part, values) if accumulate else values
        for view, whole in zip(reversed(chain), reversed(wholes)):
            args = [self.value(a) for a in list(view.inputs())[1:]]
            part = self.tensor_op(targets[view.kind()][1], whole, part, *args)
        return part

    def op_aten__shape_as_tensor(self, node: Any) -> Any:
        x = self.value(node.input())
        meta = self.tensor_meta(node.input(), node)
        return self.stacked([self.size(x, meta, d) for d in range(meta.dim())], torch.int64)

    def op_aten_dropout(self, node: Any) -> Any:
        """Dropout in training mode, as the TorchScript exporter exports it when asked to
        (``training=TrainingMode.TRAINING``): a fresh random mask on each run (ONNX
        ``RandomUniformLike``), the kept elements scaled by 1 / (1 - p)."""
        x, p, train = (self.value(v) for v in node.inputs())
        if train is not True or not isinstance(p, (int, float)) or not 0 < p < 1:
            return self.call_op(node)
        uniform = self.tensor_op(torch.ops.aten.rand_like.default, x)
        keep = self.tensor_op(torch.ops.aten.ge.Scalar, uniform, p)
        kept = self.tensor_op(torch.ops.aten.mul.Tensor, x, keep)
        return self.tensor_op(torch.ops.aten.mul.Tensor, kept, 1.0 / (1.0 - p))

    def legacy_form(self, target: Any, args: list, kwargs: dict) -> tuple[Any, list, dict]:
        """Arguments torch still runs eagerly but its meta kernels refuse: a byte (uint8) mask
        where a bool one is meant (``where``, indexing), ``pad``'s amounts known only at run time
        (``constant_pad_nd`` takes symbolic ones)."""
        def as_bool(t: Any) -> Any:
            if isinstance(t, torch.fx.Node) and isinstance(t.meta["val"], torch.Tensor) and (
                    t.meta["val"].dtype == torch.uint8):
                return self.tensor_op(torch.ops.aten._to_copy.default, t, dtype=torch.bool)
            return t

        if target is torch.ops.aten.where.self:
            args = [as_bool(args[0]), *args[1:]]
        elif target in (torch.ops.aten.index.Tensor, torch.ops.aten.index_put.default,
                        torch.ops.aten.index_put_.default):
            args = [args[0], [as_bool(i) for i in args[1]], *args[2:]]
        elif target is torch.ops.aten.to.other:  # `x.to(y)`: y's dtype (the device is not exported)
            target, args = torch.ops.aten.to.dtype, [args[0], args[1].meta["val"].dtype, *args[2:]]
        elif target is torch.ops.aten.to.prim_Device:  # `x.to(device, dtype)`, the dtype as its number
            dtype = args[2] if len(args) > 2 else None
            dtype = args[0].meta["val"].dtype if dtype is None else _SCALAR_TYPES[dtype]
            target, args = torch.ops.aten.to.dtype, [args[0], dtype, *args[3:]]
        elif target is torch.ops.aten.copy_.default and _traced_expand(args[1]) and any(
                _dynamic(d) for d in args[0].meta["val"].shape):
            # `x[:, i:] = v` traced: the tracer wrote v's expand to the example's sizes, which a
            # dynamic destination does not keep; copy_ broadcasts v itself.
            args = [args[0], args[1].args[0], *args[2:]]
        elif target in _NEW_FACTORIES and isinstance(args[0], torch.fx.Node):
            # `x.new_zeros(size)` reads only x's type: the factory itself, so that a model whose
            # input is read only so (at static sizes) does not take it, as the TorchScript
            # exporter's graph does not.
            kwargs = {**kwargs, "dtype": kwargs.get("dtype") or args[0].meta["val"].dtype}
            target, args = _NEW_FACTORIES[target], list(args[1:])
        elif target is torch.ops.aten.tensor_split.tensor_indices_or_sections and isinstance(
                args[1], torch.fx.Node) and args[1] in self.from_int and args[1].meta["val"].dim() == 0:
            # A number the trace made a tensor of (`tensor_split(x, x.size(1))`): sections.
            target, args = torch.ops.aten.tensor_split.sections, [args[0], self.from_int[args[1]], *args[2:]]
        elif target is torch.ops.prim.data.default:
            target = torch.ops.aten.detach.default
        elif target is torch.ops.aten.split.sizes:
            target = torch.ops.aten.split_with_sizes.default
        elif target is torch.ops.aten.rrelu.default and not (args[3] if len(args) > 3 else False):
            # In eval mode the slope is the mean of the bounds; no noise is drawn.
            lower = args[1] if len(args) > 1 else 0.125
            upper = args[2] if len(args) > 2 else 1.0 / 3.0
            if not any(isinstance(b, torch.fx.Node) for b in (lower, upper)):
                target, args = torch.ops.aten.leaky_relu.default, [args[0], (lower + upper) / 2]
        elif target is torch.ops.aten.pad.default and any(isinstance(a, torch.fx.Node) for a in args[1]) and (
                (args[2] if len(args) > 2 else None) in (None, "constant")):
            value = args[3] if len(args) > 3 and args[3] is not None else 0
            target, args = torch.ops.aten.constant_pad_nd.default, [args[0], args[1], value]
        return target, args, kwargs

    # ops

    def call_op(self, node: Any) -> Any:
        schema = _schema(node)
        target = _overload(schema)
        if target is None:
            raise _error(f"no operator for `{schema.split('(')[0]}` in this torch", node)
        inputs = [self.value(v) for v in node.inputs()]
        arguments = target._schema.arguments
        if target._schema.is_mutable:
            self.forget_numbers()
            if self.parent is not None and inputs and _is_tensor(inputs[0]):
                self.owner.writes_in_subgraph = True
        if any(isinstance(x, SeqList) for x in inputs):
            return self.sequence_op(node, target, inputs)
        # TorchScript's ops on lists (`+=`, `pop`, `==`): a list in, no tensor out (not `cat`, `zeros`).
        if inputs and isinstance(inputs[0], list) and arguments and not str(arguments[0].type).startswith(
                ("Tensor", "Optional[Tensor]")) and not any("Tensor" in str(r.type) for r in target._schema.returns):
            return self.list_op(node, inputs)
        if target._overloadname.endswith("out") and "out" in [a.name for a in arguments]:
            target, inputs = _functional(target, inputs)
        if any(isinstance(x, (PackedData, PackedBatchSizes)) for x in inputs):
            return self.packed_op(node, target, inputs)
        if node.kind().startswith("quantized::") or any(isinstance(x, Quantized) for x in pytree.tree_leaves(
                inputs, is_leaf=lambda x: isinstance(x, Quantized))):
            return self.quantized_op(node, target, inputs)
        args, kwargs = _bind(target, inputs)
        target, args, kwargs = self.legacy_form(target, args, kwargs)
        metas = pytree.tree_map_only(torch.fx.Node, lambda n: n.meta["val"], (args, kwargs))
        returns = target._schema.returns
        tensors_in = any(isinstance(x, torch.Tensor) for x in pytree.tree_leaves(metas))
        if not tensors_in and not any("Tensor" in str(r.type) for r in returns):
            return self.scalar_call(node, target, args, kwargs, metas)
        target = _SYMBOLIC_TWINS.get(target, target)
        if target.name().startswith(("aten::squeeze", "aten::unsqueeze")) and _only_returned(node, self):
            out = self.rank_from_data(target, args, kwargs, metas)
            if out is not None:
                return out
        if target in (torch.ops.aten.unbind.int, torch.ops.aten.unbind_copy.int) and _only_counted(node):
            dim = (args[1] if len(args) > 1 else kwargs.get("dim", 0)) % max(metas[0][0].dim(), 1)
            if _dynamic(metas[0][0].shape[dim]):
                # The program only counts the pieces: the size, as the TorchScript exporter's
                # SequenceLength of its SplitToSequence (no list whose length is data).
                return _Unbound(args[0], dim)
        if target in (torch.ops.aten.chunk.default, torch.ops.aten.unsafe_chunk.default):
            pieces = self.dynamic_chunk(args, kwargs, metas)
            if pieces is not None:
                return pieces
        if target.name().startswith("aten::squeeze"):
            _warn_squeeze_of_dynamic(metas, node)
        try:
            result = _kernel_shapes(target, metas)
            if result is None:
                result = self.fake(target, *metas[0], **metas[1])
        except Exception as e:
            err = _error(f"`{schema.split('(')[0]}` fails on the traced sizes and types: {type(e).__name__}: "
                         f"{str(e).splitlines()[0][:300] if str(e) else ''}", node)
            err.on_sizes = True  # a branch may convert without the example's sizes (`branches`)
            raise err from e
        out = self.emit(target, tuple(args), kwargs, result)
        if len(returns) == 1 and isinstance(result, (list, tuple)) and str(returns[0].type).startswith("List"):
            return [self.emit(operator.getitem, (out, i), val=r) for i, r in enumerate(result)]
        if len(returns) > 1:
            return [self.emit(operator.getitem, (out, i), val=r) for i, r in enumerate(result)]
        if not isinstance(result, torch.Tensor) and _is_symbolic(result):
            return out
        if not isinstance(result, torch.Tensor):
            # A number computed from tensors' metadata only (`numel` of static sizes).
            self.graph.erase_node(out)
            return result
        self.track_number(target, args, kwargs, out, result)
        return out

    def forget_numbers(self) -> None:
        """An op writes into a tensor: the numbers recorded may no longer be the tensors' (through
        an alias too), here or in an enclosing graph."""
        converter: Converter | None = self
        while converter is not None:
            converter.from_int.clear()
            converter = converter.parent

    def track_number(self, target: Any, args: list, kwargs: dict, out: torch.fx.Node, result: Any) -> None:
        """Record ``out``'s number (see ``_NUMBER_ARITHMETIC``) where its tensor inputs all hold
        one. A float is kept only where its value is known (rounded to the tensor's dtype): a
        symbolic one would be computed in float64, not in the tensor's precision."""
        if result.dim() != 0 or result.is_complex():
            return
        name = target._schema.name.split("::")[-1]
        numbers = []
        for a in args:
            if isinstance(a, torch.fx.Node):
                if a not in self.from_int:
                    return
                numbers.append(self.from_int[a])
            elif isinstance(a, (int, float, bool)):
                numbers.append(a)
            elif name not in _NUMBER_IDENTITY:
                return
        if not numbers:
            return
        alpha = kwargs.get("alpha", 1)
        mode = kwargs.get("rounding_mode")
        if name in _NUMBER_IDENTITY:
            value = numbers[0]
        elif name == "div" and mode in (None, "floor") and len(numbers) == 2 and alpha == 1:
            value = self.scalar_op(operator.truediv if mode is None else operator.floordiv, tuple(numbers))
        elif name == "rsub" and len(numbers) == 2 and alpha == 1:
            value = self.scalar_op(operator.sub, (numbers[1], numbers[0]))
        elif name in _NUMBER_ARITHMETIC and not (set(kwargs) - {"alpha"}) and alpha == 1:
            try:
                value = self.scalar_op(_NUMBER_ARITHMETIC[name], tuple(numbers))
            except Exception:
                return
        else:
            return
        meta = value.meta["val"] if isinstance(value, torch.fx.Node) else value
        if result.dtype.is_floating_point:
            if _is_symbolic(meta):
                return
            value = float(torch.tensor(meta, dtype=result.dtype))
        elif result.dtype == torch.bool:
            if _is_symbolic(meta):
                return
            value = bool(meta)
        elif isinstance(meta, (torch.SymFloat, torch.SymBool)):
            return
        elif not _is_symbolic(meta):
            if isinstance(meta, float) and not (meta.is_integer() or name in ("_to_copy", "to")):
                return
            value = int(meta)
        self.from_int[out] = value

    def scalar_call(self, node: Any, target: Any, args: list, kwargs: dict, metas: Any) -> Any:
        """An op on numbers: computed now when they are known, else an FX sym op."""
        if isinstance(args[0] if args else None, list):
            return self.list_op(node, args)
        if not any(isinstance(x, torch.fx.Node) for x in pytree.tree_leaves((args, kwargs))):
            return target(*args, **kwargs)
        op = _SCALAR_OPS.get(node.kind())
        name = node.kind().split("::")[1]
        if op is None and name in ("floor", "ceil") and len(args) == 1:
            # As ops a program can hold (torch.export's serializer has no math.floor): the float's
            # floor (`x // 1`, ceil by negating twice), then that integral float as an int.
            x = args[0] if name == "floor" else self.scalar_op(operator.neg, (args[0],))
            whole = self.scalar_op(operator.floordiv, (x, 1))
            whole = whole if name == "floor" else self.scalar_op(operator.neg, (whole,))
            return self.scalar_op(torch.sym_int, (whole,))
        if op is None:
            op = {"sqrt": math.sqrt}.get(name)
        if op is None:
            raise _error(f"`{node.kind()}` on a size known only at run time", node)
        return self.scalar_op(op, tuple(args))

    def list_op(self, node: Any, args: list) -> Any:
        """TorchScript's list ops, on the Python lists the conversion holds (their items may be
        nodes)."""
        name = node.kind().split("::")[1]
        if name in ("add_", "insert", "pop", "reverse", "extend", "clear", "_set_item", "Delete"):
            self.changes_list(args[0], node)
        if name == "add":
            return list(args[0]) + list(args[1])
        if name == "add_":
            args[0].extend(args[1])
            return args[0]
        if name == "mul":
            return list(args[0]) * self.static_int(args[1], node)
        if name == "slice":
            # A bound known only at run time: the length of the list would be data; the bound is
            # the example's, and the sizes it is made of are static (a guard on them).
            items, start, end, step = (self.guarded_int(a) for a in args)
            return items[slice(start, end if end is None or end < (1 << 62) else None, step)]
        if name == "insert":
            args[0].insert(self.static_int(args[1], node), args[2])
            return None
        if name == "pop":
            return args[0].pop(self.static_int(args[1], node) if len(args) > 1 else -1)
        if name == "reverse":
            args[0].reverse()
            return None
        if name == "extend":
            args[0].extend(args[1])
            return None
        if name == "clear":
            args[0].clear()
            return None
        if name == "_set_item":
            items, index, item = args
            if isinstance(index, torch.fx.Node) and self.alike_tensors(items + [item]):
                # Written into the stack at the row known at run time, the rows read back.
                rows = self.tensor_op(torch.ops.aten.index_put.default, self.stacked(items, None),
                                      [self.stacked(index, torch.int64)], item)
                items[:] = [self.tensor_op(torch.ops.aten.select.int, rows, 0, k) for k in range(len(items))]
                return items
            items[self.static_int(index, node)] = item
            return items
        if name == "copy":
            return list(args[0])
        if name == "Delete":
            del args[0][self.static_int(args[1], node)]
            return None
        if not any(isinstance(x, torch.fx.Node) for x in pytree.tree_leaves(args)):
            return _overload(_schema(node))(*args)
        if name in ("eq", "ne") and len(args) == 2 and all(isinstance(a, list) for a in args):
            # Lists of numbers (an RNN's check of its hidden state's sizes): equal where every
            # item is, each compared as the numbers they are at run time.
            a, b = args
            if len(a) != len(b):
                return name == "ne"
            same: Any = True
            for x, y in zip(a, b):
                if x is y:
                    continue
                pair = self.scalar_op(operator.eq, (x, y)) if isinstance(x, torch.fx.Node) or isinstance(
                    y, torch.fx.Node) else x == y
                same = pair if same is True else (same if pair is True else
                                                  self.scalar_op(operator.and_, (same, pair)))
                if same is False:
                    break
            if name == "eq" or not isinstance(same, torch.fx.Node):
                return same if name == "eq" else not same
            return self.scalar_op(torch.sym_not, (same,))
        raise _error(f"`{node.kind()}` on a list holding values known only at run time", node)

    def op_aten_tensor(self, node: Any) -> Any:
        """``torch.tensor(data)``: a constant when ``data`` is known, else the numbers stacked."""
        data, dtype, device, requires_grad = (self.value(v) for v in node.inputs())
        dtype = _SCALAR_TYPES[dtype] if isinstance(dtype, int) else dtype
        if isinstance(data, SeqList):
            # Numbers a loop the model runs gathered: stacked; Python floats are doubles, and
            # `torch.tensor` of them is of the default type.
            joined = self.join_sequence(data, True, 0, node)
            default = torch.get_default_dtype() if joined.meta["val"].dtype == torch.float64 else None
            return self.stacked(joined, dtype or default)
        if not any(isinstance(x, torch.fx.Node) for x in pytree.tree_leaves(data)):
            return self.constant(torch.tensor(data, dtype=dtype), "tensor")
        return self.stacked(data, dtype)

    def stacked(self, data: Any, dtype: Any) -> torch.fx.Node:
        if isinstance(data, (list, tuple)):
            return self.tensor_op(torch.ops.aten.stack.default, [self.stacked(d, dtype) for d in data])
        if isinstance(data, torch.fx.Node) and isinstance(data.meta["val"], torch.Tensor):
            return data if dtype is None else self.tensor_op(torch.ops.aten._to_copy.default, data, dtype=dtype)
        val = data.meta["val"] if isinstance(data, torch.fx.Node) else data
        kind = dtype or (torch.float32 if isinstance(val, (float, torch.SymFloat)) else torch.bool
                         if isinstance(val, (bool, torch.SymBool)) else torch.int64)
        return self.tensor_op(torch.ops.aten.scalar_tensor.default, data, dtype=kind)

    def scalar_op(self, op: Callable, args: tuple) -> Any:
        metas = tuple(a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args)
        result = self.fake(op, *metas)
        if not _is_symbolic(result):
            return result
        return self.emit(op, args, val=result)

    # eager-mode quantization

    def op_aten_quantize_per_tensor(self, node: Any) -> Any:
        x, scale, zero_point, dtype = (self.value(v) for v in node.inputs())
        return self.quantize(x, scale, zero_point, _SCALAR_TYPES[dtype])

    def op_aten_quantize_per_channel(self, node: Any) -> Any:
        x, scales, zero_points, axis, dtype = (self.value(v) for v in node.inputs())
        qdtype = _SCALAR_TYPES[dtype]
        int_dtype, low, high = _QUANTIZED[qdtype]
        _decomposed()
        values = self.tensor_op(torch.ops.quantized_decomposed.quantize_per_channel.default, x, scales, zero_points,
                                axis, low, high, int_dtype)
        # Read back per tensor: a per-channel quantized activation is not what eager mode makes.
        return Quantized(values, ("per_channel", scales, axis), zero_points, qdtype)

    def op_aten_dequantize(self, node: Any) -> Any:
        x = self.value(node.input())
        if not isinstance(x, Quantized):
            return x  # dequantize of a float tensor is the tensor
        return self.dequantize(x)

    def op_aten_q_scale(self, node: Any) -> Any:
        return self.value(node.input()).scale

    def op_aten_q_zero_point(self, node: Any) -> Any:
        return self.value(node.input()).zero_point

    def op_aten_int_repr(self, node: Any) -> Any:
        return self.value(node.input()).values

    def quantize(self, x: Any, scale: Any, zero_point: Any, qdtype: Any) -> Quantized:
        int_dtype, low, high = _QUANTIZED[qdtype]
        _decomposed()
        if isinstance(scale, torch.fx.Node) or isinstance(zero_point, torch.fx.Node):
            target = torch.ops.quantized_decomposed.quantize_per_tensor.tensor
            scale, zero_point = self.as_tensor(scale, torch.float64), self.as_tensor(zero_point, torch.int64)
        else:
            target = torch.ops.quantized_decomposed.quantize_per_tensor.default
            scale, zero_point = float(scale), int(zero_point)
        values = self.tensor_op(target, x, scale, zero_point, low, high, int_dtype)
        return Quantized(values, scale, zero_point, qdtype)

    def dequantize(self, q: Quantized) -> torch.fx.Node:
        int_dtype, low, high = _QUANTIZED[q.qdtype]
        _decomposed()
        if isinstance(q.scale, tuple):  # per channel
            _, scales, axis = q.scale
            return self.tensor_op(torch.ops.quantized_decomposed.dequantize_per_channel.default, q.values, scales,
                                  q.zero_point, axis, low, high, int_dtype)
        if isinstance(q.scale, torch.fx.Node) or isinstance(q.zero_point, torch.fx.Node):
            target = torch.ops.quantized_decomposed.dequantize_per_tensor.tensor
            scale, zero_point = self.as_tensor(q.scale, torch.float64), self.as_tensor(q.zero_point, torch.int64)
        else:
            target = torch.ops.quantized_decomposed.dequantize_per_tensor.default
            scale, zero_point = float(q.scale), int(q.zero_point)
        return self.tensor_op(target, q.values, scale, zero_point, low, high, int_dtype)

    def cast(self, x: torch.fx.Node, dtype: Any) -> torch.fx.Node:
        if x.meta["val"].dtype == dtype:
            return x
        return self.tensor_op(torch.ops.aten._to_copy.default, x, dtype=dtype)

    def as_tensor(self, x: Any, dtype: Any) -> torch.fx.Node:
        if isinstance(x, torch.fx.Node) and isinstance(x.meta["val"], torch.Tensor):
            return x
        return self.tensor_op(torch.ops.aten.scalar_tensor.default, x, dtype=dtype)

    def weight(self, qweight: torch.Tensor, name: str) -> torch.fx.Node:
        """A quantized weight of a packed module, dequantized by the graph: its integers and its
        scales and zero points are constants of the program."""
        qdtype = qweight.dtype
        int_dtype, low, high = _QUANTIZED[qdtype]
        _decomposed()
        values = self.owner.constant_tensor(qweight.int_repr(), f"{name}_int", self)
        if qweight.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            return self.tensor_op(torch.ops.quantized_decomposed.dequantize_per_tensor.default, values,
                                  float(qweight.q_scale()), int(qweight.q_zero_point()), low, high, int_dtype)
        scales = self.owner.constant_tensor(qweight.q_per_channel_scales().to(torch.float32), f"{name}_scale", self)
        zero_points = self.owner.constant_tensor(qweight.q_per_channel_zero_points().to(torch.int64),
                                                 f"{name}_zero_point", self)
        return self.tensor_op(torch.ops.quantized_decomposed.dequantize_per_channel.default, values, scales,
                              zero_points, int(qweight.q_per_channel_axis()), low, high, int_dtype)

    def float_inputs(self, inputs: list[Any]) -> list[Any]:
        def one(x: Any) -> Any:
            return self.dequantize(x) if isinstance(x, Quantized) else x
        return [[one(i) for i in x] if isinstance(x, list) else one(x) for x in inputs]

    def quantized_op(self, node: Any, target: Any, inputs: list[Any]) -> Any:
        """An op of a quantized model: its float form on dequantized inputs, quantized again where
        TorchScript types its result as quantized."""
        kind = node.kind()
        name = kind.split("::")[1]
        first = next(x for x in pytree.tree_leaves(inputs, is_leaf=lambda x: isinstance(x, Quantized))
                     if isinstance(x, Quantized)) if any(isinstance(x, Quantized) for x in pytree.tree_leaves(
                         inputs, is_leaf=lambda x: isinstance(x, Quantized))) else None
        if kind.startswith("quantized::"):
            if name.startswith(("linear", "conv")):
                return self.quantized_layer(node, name, inputs)
            if name == "cat":
                tensors, dim, scale, zero_point = inputs
                out = self.tensor_op(torch.ops.aten.cat.default, self.float_inputs([tensors])[0], dim)
                return self.quantize(out, scale, zero_point, first.qdtype)
            float_op = _QUANTIZED_FLOAT_OPS.get(name)
            if float_op is None:
                raise _error(f"no conversion of the quantized op `{kind}`", node)
            op, relu = float_op
            *rest, scale, zero_point = inputs
            args = self.float_inputs(rest)
            if name == "leaky_relu":
                args = args[:2]  # (x, negative_slope); `inplace` has no meaning here
            elif name in ("batch_norm2d", "batch_norm2d_relu"):
                x, w, b, mean, var, eps = args
                args = [x, w, b, mean, var, False, 0.1, eps, False]
            elif name == "layer_norm":
                x, shape, w, b, eps = args
                args = [x, shape, w, b, eps]
            elif name == "group_norm":
                x, groups, w, b, eps = args
                args = [x, groups, w, b, eps]
            elif name == "instance_norm":
                x, w, b, eps = args
                args = [x, w, b, None, None, True, 0.0, eps, False]
            out = self.tensor_op(op, *args)
            if relu:
                out = self.tensor_op(torch.ops.aten.relu.default, out)
            return self.quantize(out, scale, zero_point, first.qdtype if first is not None else torch.quint8)
        # An ATen op on quantized tensors: on their float values; quantized again with the first
        # input's scale and zero point where TorchScript types the result as quantized.
        args, kwargs = _bind(target, self.float_inputs(inputs))
        metas = pytree.tree_map_only(torch.fx.Node, lambda n: n.meta["val"], (args, kwargs))
        result = self.fake(target, *metas[0], **metas[1])
        out = self.emit(target, tuple(args), kwargs, result)
        results = ([self.emit(operator.getitem, (out, i), val=r) for i, r in enumerate(result)]
                   if isinstance(result, (list, tuple)) else [out])
        quantized_out = [_is_quantized_type(o.type()) for o in node.outputs()]
        final = []
        for r, q in zip(results, quantized_out + [False] * len(results)):
            # Untyped (scripted): quantized as eager mode's ops on quantized tensors return, where
            # the result is a float tensor (not a mask, an index or a size).
            if q is not False and first is not None and isinstance(r.meta["val"], torch.Tensor) and r.meta["val"].is_floating_point():
                scale, zero_point = first.scale, first.zero_point
                fixed = _FIXED_QPARAMS.get((name.rstrip("_"), first.qdtype))
                if fixed is not None:
                    scale, zero_point = fixed
                final.append(self.quantize(r, scale, zero_point, first.qdtype))
            else:
                final.append(r)
        return final if len(final) > 1 else final[0]

    def quantized_layer(self, node: Any, name: str, inputs: list[Any]) -> Any:
        """``quantized::linear`` / ``conv*`` (``_relu``, ``_dynamic``): the weights unpacked from the
        packed parameters, dequantized; the float layer; quantized with the given scale and zero
        point (a dynamic one returns floats)."""
        x, packed = inputs[0], inputs[1]
        packed = packed.obj if isinstance(packed, ModuleValue) else packed
        dynamic = name.endswith("_dynamic") or "dynamic" in name
        relu = "_relu" in name
        base = name.replace("_relu", "").replace("_dynamic", "").replace("_fp16", "")
        x = self.dequantize(x) if isinstance(x, Quantized) else x
        if base == "linear":
            qweight, bias = torch.ops.quantized.linear_unpack(packed)
            w = self.weight(qweight, "weight") if qweight.is_quantized else self.owner.constant_tensor(
                qweight, "weight", self)
            b = self.owner.constant_tensor(bias, "bias", self) if bias is not None else None
            out = self.tensor_op(torch.ops.aten.linear.default, x, w, b)
        else:
            ops = torch.ops.quantized
            qweight, bias = getattr(ops, f"{base}_unpack")(packed)
            # 1-d convolutions' packed parameters are 2-d ones of height 1, read by the 2-d accessors.
            prefix = base.replace("1d", "2d")
            stride = list(getattr(ops, f"{prefix}_stride")(packed))
            padding = list(getattr(ops, f"{prefix}_padding")(packed))
            dilation = list(getattr(ops, f"{prefix}_dilation")(packed))
            groups = int(getattr(ops, f"{prefix}_groups")(packed))
            transposed = bool(getattr(ops, f"{prefix}_transpose")(packed))
            output_padding = list(getattr(ops, f"{prefix}_output_padding")(packed))
            if base.endswith("1d"):
                stride, padding, dilation, output_padding = stride[-1:], padding[-1:], dilation[-1:], output_padding[-1:]
                if qweight.dim() == 4:
                    qweight = qweight.squeeze(2)
            w = self.weight(qweight, "weight")
            b = self.owner.constant_tensor(bias, "bias", self) if bias is not None else None
            out = self.tensor_op(torch.ops.aten.convolution.default, x, w, b, stride, padding, dilation, transposed,
                                 output_padding, groups)
        if relu:
            out = self.tensor_op(torch.ops.aten.relu.default, out)
        if dynamic:
            return out
        scale, zero_point = inputs[-2], inputs[-1]
        return self.quantize(out, scale, zero_point, torch.quint8)

    # packed sequences

    def op_aten__pack_padded_sequence(self, node: Any) -> Any:
        input, lengths, batch_first = (self.value(v) for v in node.inputs())
        if batch_first:
            input = self.tensor_op(torch.ops.aten.transpose.int, input, 0, 1)
        lengths = self.tensor_op(torch.ops.aten._to_copy.default, lengths, dtype=torch.int64)
        packed = Packed(input, lengths)
        return [PackedData(packed), PackedBatchSizes(packed)]

    def op_aten__pad_packed_sequence(self, node: Any) -> Any:
        data, _batch_sizes, batch_first, padding_value, total_length = (self.value(v) for v in node.inputs())
        if not isinstance(data, PackedData):
            raise _error("pad_packed_sequence of data that is not a packed sequence", node)
        packed = data.packed
        padded = packed.padded
        if padding_value:
            # The layers write zeros past each length; torch writes padding_value there.
            steps = self.tensor_op(torch.ops.aten.arange.default, self.size(padded, padded.meta["val"], 0),
                                   dtype=torch.int64)
            valid = self.tensor_op(torch.ops.aten.lt.Tensor,
                                   self.tensor_op(torch.ops.aten.unsqueeze.default, steps, 1), packed.lengths)
            for _ in range(padded.meta["val"].dim() - 2):
                valid = self.tensor_op(torch.ops.aten.unsqueeze.default, valid, -1)
            padded = self.tensor_op(torch.ops.aten.where.ScalarOther, valid, padded, float(padding_value))
        if isinstance(total_length, int) and total_length > 0:  # a node: the steps themselves
            steps = padded.meta["val"].shape[0]
            if isinstance(steps, int) and total_length > steps:
                pad = [0, 0] * (padded.meta["val"].dim() - 1) + [0, total_length - steps]
                padded = self.tensor_op(torch.ops.aten.constant_pad_nd.default, padded, pad, 0.0)
        if batch_first:
            padded = self.tensor_op(torch.ops.aten.transpose.int, padded, 0, 1)
        return [padded, packed.lengths]

    def packed_op(self, node: Any, target: Any, inputs: list[Any]) -> Any:
        """An op that reads a packed sequence: a recurrent layer (over the padded tensor and the
        lengths, as ONNX's layers take them), or the batch sizes' first entry or length (the batch
        and the number of steps: what torch's RNN modules read of them)."""
        name = target._opname
        if name in ("lstm", "gru", "rnn_tanh", "rnn_relu") and target._overloadname == "data":
            data, _batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = inputs
            packed = data.packed
            op = _padded_rnn_ops()[name]
            args = (packed.padded, packed.lengths, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional)
            metas = pytree.tree_map_only(torch.fx.Node, lambda n: n.meta["val"], args)
            result = self.fake(op, *metas)
            out = self.emit(op, args, val=result)
            items = [self.emit(operator.getitem, (out, i), val=r) for i, r in enumerate(result)]
            return [PackedData(Packed(items[0], packed.lengths)), *items[1:]]
        if isinstance(inputs[0], PackedBatchSizes):
            padded = inputs[0].packed.padded
            meta = padded.meta["val"]
            if name == "select" and inputs[1:] == [0, 0]:
                batch = self.size(padded, meta, 1)
                return self.tensor_op(torch.ops.aten.scalar_tensor.default, batch, dtype=torch.int64)
            if name in ("size", "sym_size"):
                return self.size(padded, meta, 0)
        raise _error(f"`{node.kind()}` reads a packed sequence's data or batch sizes", node,
                     "unpack it with pad_packed_sequence first")

    def dynamic_chunk(self, args: list, kwargs: dict, metas: Any) -> list | None:
        """``chunk`` along an axis of dynamic size, or into a number of chunks known at run time:
        the example's number of chunks, each of ``ceil(size / chunks)`` but the last, which takes
        the rest (sizes computed when the model runs, as the TorchScript exporter computes them).
        A size that makes fewer chunks gives the last a negative size, which ``Split`` refuses:
        an error, not an empty extra chunk. ``None`` when the sizes are static."""
        (x, *rest), kw = metas
        chunks = rest[0] if rest else kw["chunks"]
        dim = rest[1] if len(rest) > 1 else kw.get("dim", 0)
        if not isinstance(x, torch.Tensor) or isinstance(dim, torch.SymInt):
            return None
        dim %= max(x.dim(), 1)
        if not (_dynamic(x.shape[dim]) or isinstance(chunks, torch.SymInt)):
            return None
        count = len(self.fake(torch.ops.aten.chunk.default, x, chunks, dim))
        if count == 1:
            return None
        chunks_arg = args[1] if len(args) > 1 else kwargs["chunks"]
        size = self.size(args[0], x, dim)
        each = self.scalar_op(operator.floordiv, (self.scalar_op(operator.add, (size, chunks_arg - 1 if isinstance(
            chunks_arg, int) else self.scalar_op(operator.sub, (chunks_arg, 1)))), chunks_arg))
        last = self.scalar_op(operator.sub, (size, self.scalar_op(operator.mul, (each, count - 1))))
        # last if last > 0 else negative: `last - 1 + min(last, 1)` is last for last >= 1, and
        # below 0 otherwise.
        last = self.scalar_op(operator.add, (self.scalar_op(operator.sub, (last, 1)),
                                             self.scalar_op(torch.sym_min, (last, 1))))
        out = self.tensor_op(torch.ops.aten.split_with_sizes.default, args[0], [each] * (count - 1) + [last], dim)
        return [self.emit(operator.getitem, (out, i), val=v) for i, v in enumerate(out.meta["val"])]

    def rank_from_data(self, target: Any, args: list, kwargs: dict, metas: Any) -> torch.fx.Node | None:
        """``squeeze`` of an axis whose size is known only at run time, ``squeeze``/``unsqueeze`` at
        an axis known only at run time: the rank of the result depends on the data, as the
        TorchScript exporter wrote it (``Squeeze`` without axes, or of the axes whose size is 1 when
        it runs). Only for a result the program returns: the model declares no sizes for it (ONNX
        wants a rank: the example's), and no op of the program reads it with the example's rank.
        ``None`` when the rank is static."""
        (x, *rest), kw = metas
        unsqueeze = target.name().startswith("aten::unsqueeze")
        dim = rest[0] if rest else kw.get("dim", None)
        rank = x.dim()
        if rank == 0 or not isinstance(x, torch.Tensor):
            return None
        dim_node = args[1] if len(args) > 1 else kwargs.get("dim")
        runtime_dim = isinstance(dim_node, torch.fx.Node)
        if unsqueeze and not runtime_dim:
            return None
        if runtime_dim:
            dims = [_hint(dim)]
        else:
            dims = list(range(rank)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
            dims = [d % rank for d in dims]
            if all(not _dynamic(x.shape[d]) for d in dims):
                return None
        # The example's result, without guarding on the sizes: its rank is not the model's.
        sizes = list(x.shape)
        if unsqueeze:
            d = dims[0] if dims[0] >= 0 else dims[0] + rank + 1
            sizes.insert(d, 1)
        else:
            sizes = [s for i, s in enumerate(sizes) if i not in {d % rank for d in dims} or _hint(s) != 1]
        val = self.fake(torch.empty_strided, sizes, [0] * len(sizes), dtype=x.dtype)
        inputs = [args[0]]
        if runtime_dim:
            inputs.append(self.stacked(dim_node, torch.int64))
        model = _rank_from_data_model(x.dtype, rank, None if runtime_dim else dims, unsqueeze,
                                      dim is None and not runtime_dim, self.owner.opset)
        return self.onnx_graph(model, inputs, [val])[0]

    def tensor_op(self, target: Any, *args: Any, **kwargs: Any) -> torch.fx.Node:
        """An ATen op on converted values, its result computed on fake tensors."""
        metas = pytree.tree_map_only(torch.fx.Node, lambda n: n.meta["val"], (args, kwargs))
        result = self.fake(target, *metas[0], **metas[1])
        out = self.emit(target, args, kwargs, result)
        if target is torch.ops.aten.scalar_tensor.default and args and isinstance(args[0], (torch.fx.Node, int)):
            self.from_int[out] = args[0]
        return out

    # helpers

    def tensor_meta(self, v: Any, node: Any) -> Any:
        x = self.value(v)
        if isinstance(x, Quantized):  # its sizes are its values' (the dtype: `op_prim_dtype`)
            x = x.values
        meta = x.meta["val"] if isinstance(x, torch.fx.Node) else x
        if not isinstance(meta, torch.Tensor):
            raise _error("expected a tensor", node)
        return meta

    def guarded_int(self, x: Any) -> Any:
        """``x``, or the example's value of the symbolic int ``x`` is, the program then taking
        only sizes that give it (a guard, as torch.export takes a size it must know)."""
        if isinstance(x, torch.fx.Node) and isinstance(x.meta["val"], torch.SymInt):
            val = x.meta["val"]
            if val.node.hint is not None:
                return int(val)
        return x

    def static_int(self, x: Any, node: Any) -> int:
        if isinstance(x, torch.fx.Node):
            val = x.meta["val"]
            if isinstance(val, torch.SymInt) and val.node.hint is not None:
                raise _error("an index known only at run time into a list", node,
                             "export with static sizes for that axis")
            raise _error("an index read from tensor data into a list", node)
        return int(x)


def _raises(block: Any) -> bool:
    """Whether a block raises (TorchScript's `raise`, at its top level)."""
    return any(n.kind() == "prim::RaiseException" for n in block.nodes())


def _is_tensor(x: Any) -> bool:
    return (isinstance(x, torch.fx.Node) and isinstance(x.meta.get("val"), torch.Tensor) and not _is_optional(x)
            and not _is_sequence(x))


# The TorchScript ops that change a list in place, which a sequence can (`change_sequence`).
_LIST_WRITES = {"aten::append", "aten::pop", "aten::insert", "aten::_set_item", "aten::clear"}


def _grown_lists(block: Any) -> list:
    """The TorchScript values of the lists defined outside ``block`` that it changes (appends to,
    pops, ...), directly or as the state of a loop inside it."""
    inside: set = set()
    found: list = []
    origin: dict = {}  # a loop's state: the value it starts from

    def walk(b: Any) -> None:
        inside.update(b.inputs())
        for n in b.nodes():
            if n.kind() in _LIST_WRITES and n.inputsAt(0).type().kind() == "ListType":
                items = origin.get(n.inputsAt(0), n.inputsAt(0))
                if items not in inside and items not in found:
                    found.append(items)
            if n.kind() == "prim::Loop":
                for sub in n.blocks():
                    for state, start in zip(list(sub.inputs())[1:], list(n.inputs())[2:]):
                        origin[state] = origin.get(start, start)
            for sub in n.blocks():
                walk(sub)
            inside.update(n.outputs())

    walk(block)
    return found


def _listed(t: Any) -> bool:
    """Whether the TorchScript type is a list a sequence can hold: of tensors, ints, floats or
    bools (numbers as 0-d tensors)."""
    return t.kind() == "ListType" and t.getElementType().kind() in ("TensorType", "IntType", "FloatType", "BoolType")


def _regroup(values: list, arity: list) -> list:
    """Values carried item by item, as the loop's values: the items of a tuple (``arity`` says how
    many, ``None`` for a value of its own) in one."""
    out, k = [], 0
    for n in arity:
        out.append(values[k] if n is None else tuple(values[k:k + n]))
        k += 1 if n is None else n
    return out


def _ungroup(values: list, arity: list, node: Any) -> list:
    """The loop's values item by item (``_regroup`` undone)."""
    out = []
    for v, n in zip(values, arity):
        if n is None:
            out.append(v)
        elif isinstance(v, (tuple, list)) and len(v) == n:
            out.extend(v)
        else:
            raise _error("a loop known only at run time whose carried tuple changes length", node)
    return out


def _number_kind(tensor: torch.fx.Node) -> type:
    """The Python type of the number a 0-d tensor holds."""
    dtype = tensor.meta["val"].dtype
    return bool if dtype == torch.bool else float if dtype.is_floating_point else int


def _dtype_of_number(v: Any) -> Any:
    """The tensor type of a number: a Python one or a symbolic one's node."""
    if isinstance(v, torch.fx.Node):
        return _number_dtype_of(v.meta["val"])
    return torch.bool if isinstance(v, bool) else torch.float64 if isinstance(v, float) else torch.int64


def _is_sequence(x: Any) -> bool:
    """An FX node holding an ONNX sequence (a ``SeqList``'s node)."""
    return isinstance(x, torch.fx.Node) and bool(x.meta.get(_SEQUENCE))


_SEQUENCE = "fxonnx_sequence"


def _is_optional(x: Any) -> bool:
    """An ONNX optional tensor (TorchScript's ``Optional[Tensor]`` decided at run time): an FX node
    marked so, its ``val`` the tensor it may hold."""
    return isinstance(x, torch.fx.Node) and bool(x.meta.get(_OPTIONAL))


_OPTIONAL = "fxonnx_optional"
# The marker of a loop's or an if's value of that kind.
_MARKERS = {"optional": _OPTIONAL, "sequence": _SEQUENCE}
# The Python type of each TorchScript number type.
_TS_NUMBERS = {"IntType": int, "FloatType": float, "BoolType": bool}


class SeqList:
    """A list of tensors whose length is known only at run time (built in a loop the model runs):
    an ONNX sequence, the FX node ``node``, its ``val`` an item's meta. Mutable as TorchScript's
    lists are: ``append`` moves ``node`` to the longer sequence, which every alias sees."""

    def __init__(self, node: torch.fx.Node) -> None:
        self.node = node


def _same_constant(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return a is b
    try:
        return bool(a == b)
    except Exception:
        return False


def _number_dtype_of(val: Any) -> Any:
    return torch.bool if isinstance(val, torch.SymBool) else torch.float64 if isinstance(val, torch.SymFloat) \
        else torch.int64


def _number_dtype(t: Any) -> Any:
    kind = t.kind()
    return torch.bool if kind == "BoolType" else torch.float64 if kind == "FloatType" else torch.int64


# Ops whose quantized kernels write a fixed output scale and zero point (their range is known:
# [0, 1] or [-1, 1] in 256 steps), not their input's: torch.ao's fixed-qparams ops.
_FIXED_QPARAMS = {
    **{(op, torch.quint8): (1.0 / 256, 0) for op in ("sigmoid", "hardsigmoid")},
    **{(op, torch.qint8): (1.0 / 256, -128) for op in ("sigmoid", "hardsigmoid")},
    ("tanh", torch.quint8): (2.0 / 256, 128),
    ("tanh", torch.qint8): (2.0 / 256, 0),
}


def _is_quantized_type(t: Any) -> bool | None:
    """Whether TorchScript types a value as a quantized tensor; ``None`` where its type does not
    say (a scripted graph's plain ``Tensor``)."""
    dtype = t.dtype() if hasattr(t, "dtype") else None
    if dtype is None:
        return None
    return dtype in _QUANTIZED


def _decomposed() -> None:
    """torch's ``quantized_decomposed`` ops (quantize/dequantize per tensor and channel), which
    fxonnx translates to QuantizeLinear / DequantizeLinear: registered by importing their module."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401


def _functional(target: Any, inputs: list[Any]) -> tuple[Any, list[Any]]:
    """An ``out=`` overload as its functional one (its result is the value the graph reads on):
    ``arange.out(end, out)`` is ``arange(end, dtype=out's)``."""
    names = [a.name for a in target._schema.arguments]
    packet = getattr(getattr(torch.ops, target.namespace), target._opname)
    given = dict(zip(names, inputs))
    out = given.pop("out", None)
    for overload in packet.overloads():
        candidate = getattr(packet, overload)
        params = [a.name for a in candidate._schema.arguments]
        if overload.endswith("out") or any(a.name not in params for a in target._schema.arguments
                                              if a.name != "out" and a.name in given and not a.kwarg_only):
            continue
        args = [given.get(p.name, _DEFAULT) for p in candidate._schema.arguments]
        if any(a is _DEFAULT and not p.has_default_value() and p.name != "dtype"
               for a, p in zip(args, candidate._schema.arguments)):
            continue
        values = []
        for a, p in zip(args, candidate._schema.arguments):
            if a is _DEFAULT:
                a = out.meta["val"].dtype if p.name == "dtype" and isinstance(out, torch.fx.Node) else (
                    p.default_value if p.has_default_value() else None)
                a = _SCALAR_TYPES.index(a) if isinstance(a, torch.dtype) else a
            values.append(a)
        return candidate, values
    raise TorchScriptError(f"`{target}` writes into a preallocated tensor, and no functional overload matches")


_DEFAULT = object()


def _schema(node: Any) -> str | None:
    try:
        schema = node.schema()
    except RuntimeError:
        return None
    return None if schema == "(no schema)" else schema


def _overload(schema: str) -> Any:
    """The OpOverload a TorchScript node's schema names (``aten::add.Tensor(...)``)."""
    name = schema.split("(", 1)[0]
    namespace, _, rest = name.partition("::")
    op, _, overload = rest.partition(".")
    try:
        packet = getattr(getattr(torch.ops, namespace), op)
        return getattr(packet, overload or "default")
    except (AttributeError, RuntimeError):
        return None


# Ops on tensors that return sizes: torch.export writes their symbolic twins.
_SYMBOLIC_TWINS = {
    torch.ops.aten.numel.default: torch.ops.aten.sym_numel.default,
    torch.ops.aten.stride.int: torch.ops.aten.sym_stride.int,
    torch.ops.aten.size.int: torch.ops.aten.sym_size.int,
}


def _convert_arg(value: Any, arg: Any) -> Any:
    """A TorchScript argument as the OpOverload takes it: dtypes, layouts and memory formats are
    numbers in TorchScript."""
    kind = str(arg.type)
    if value is None:
        return None
    if "ScalarType" in kind and isinstance(value, int):
        return _SCALAR_TYPES[value]
    if "Layout" in kind and isinstance(value, int):
        return _LAYOUTS[value]
    if "MemoryFormat" in kind and isinstance(value, int):
        return _MEMORY_FORMATS[value]
    return value


def _bind(target: Any, inputs: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """TorchScript passes every argument in schema order; the OpOverload takes keyword-only ones
    by name."""
    args, kwargs = [], {}
    for arg, value in zip(target._schema.arguments, inputs):
        value = _convert_arg(value, arg)
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return args, kwargs


class ProgramBuilder:
    """Holds what the conversion of one program shares: the fake tensor mode and its symbols, the
    root graph, state, lifted constants and subgraphs."""

    def __init__(self, *, opset: int, max_unroll: int = 4096):
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import ShapeEnv

        # A dynamic axis of size 1 in the example stays dynamic, as the TorchScript exporter keeps it.
        self.shape_env = ShapeEnv(specialize_zero_one=False, assume_static_by_default=True)
        self.mode = FakeTensorMode(shape_env=self.shape_env, allow_non_fake_inputs=False)
        self.root = torch.nn.Module()
        # The opset the symbolic functions of the program's custom ops are looked up and run at.
        self.opset = opset
        self.graph = torch.fx.Graph()
        self.max_unroll = max_unroll
        # A subgraph (`cond`, `while_loop`) wrote into a tensor in place; whether the graph was
        # converted with such writes made values first (`convert`).
        self.writes_in_subgraph = False
        self.functional_writes = False
        # The program is a scripted one (its empty lists of tensors are outputs: empty sequences).
        self.scripted = False
        # The stand-in types given before a first build said the real ones (`guess`).
        self.guesses: list = []
        self.placeholders: list[torch.fx.Node] = []
        self.input_specs: list[Any] = []
        self.state_dict: dict[str, torch.Tensor] = {}
        self.constants: dict[str, torch.Tensor] = {}
        # Per tensor object (by id, the tensor kept alive beside it so that no other object takes
        # its id), the placeholder that reads it.
        self.state_nodes: dict[int, tuple[torch.Tensor, torch.fx.Node]] = {}
        self.subgraph_count = 0
        # Sizes are read as unbacked ones (`_size_oblivious`).
        self.size_oblivious = False
        # Per user input placeholder, the name the user gave it (`input_names`).
        self.given_names: dict[str, str] = {}
        # The user inputs whose data the TorchScript graph reads (kept, even where the conversion
        # computed what it reads of them; `_data_read`).
        self.read_inputs: set[str] = set()
        # The user inputs by TorchScript value (`_data_read` decides which are read), and the
        # blocks of ifs decided when converting that the program does not take: (node, index).
        self.input_uses: dict[Any, list[str]] = {}
        self.skipped: set = set()
        self.names: set[str] = set()
        self.user_names: set[str] = set()
        # Module attributes the program wrote (prim::SetAttr): (id of the module, name) → value.
        self.attributes: dict[tuple[int, str], Any] = {}
        # Nodes' values on the example inputs, where one was needed (`real_value`).
        self.real: dict[torch.fx.Node, Any] = {}

    def size_of(self, d: Any, converter: "Converter") -> Any:
        """A symbolic size as a value of ``converter``'s graph: a size of a user input that is that
        symbol (``None`` for a size of another form)."""
        for placeholder in self.placeholders:
            val = placeholder.meta["val"]
            if placeholder.name in self.user_names and isinstance(val, torch.Tensor):
                for axis, size in enumerate(val.shape):
                    if isinstance(size, torch.SymInt) and str(size) == str(d):
                        return converter.size(converter.capture(placeholder), val, axis)
        return None

    def real_value(self, node: torch.fx.Node) -> Any:
        """``node``'s value on the example inputs, computed by running the root graph's nodes it
        depends on in torch (``None`` where that is not possible: a value inside a branch, an op
        that fails)."""
        if node in self.real:
            return self.real[node]
        if node.graph is not self.graph or node.op != "call_function" or isinstance(
                node.target, torch._ops.HigherOrderOperator):
            return None
        args = []
        for a in pytree.tree_leaves((node.args, node.kwargs)):
            if isinstance(a, torch.fx.Node) and self.real_value(a) is None and a not in self.real:
                return None
        try:
            real_args, real_kwargs = pytree.tree_map_only(torch.fx.Node, lambda n: self.real[n],
                                                          (node.args, node.kwargs))
            with torch.no_grad():
                value = node.target(*real_args, **real_kwargs)
        except Exception:
            return None
        del args
        self.real[node] = value
        return value

    def fake_of(self, t: torch.Tensor, dynamic: set[int] = frozenset()) -> Any:
        from torch.fx.experimental.symbolic_shapes import DimDynamic, StatelessSymbolicContext

        sizes = [DimDynamic.DYNAMIC if d in dynamic else DimDynamic.STATIC for d in range(t.dim())]
        context = StatelessSymbolicContext(dynamic_sizes=sizes, constraint_sizes=[None] * t.dim())
        return self.mode.from_tensor(t, symbolic_context=context)

    def _placeholder(self, name: str, val: Any) -> torch.fx.Node:
        base, k = name.replace(".", "_").replace("-", "_") or "arg", 1
        unique = base
        while unique in self.names:
            unique = f"{base}_{k}"
            k += 1
        self.names.add(unique)
        node = self.graph.placeholder(unique)
        node.meta["val"] = val
        self.placeholders.append(node)
        return node

    def state(self, tensor: torch.Tensor, path: str, module: Any, name: str) -> torch.fx.Node:
        """A parameter or buffer the graph reads off the module (``prim::GetAttr``)."""
        parameters = dict(module.named_parameters(recurse=False)) if hasattr(module, "named_parameters") else {}
        return self.state_tensor(tensor, path, name in parameters)

    def state_tensor(self, tensor: torch.Tensor, path: str, is_param: bool) -> torch.fx.Node:
        """A parameter or buffer of the module, read once however often the graph reads it."""
        from torch.export.graph_signature import InputKind, InputSpec, TensorArgument

        found = self.state_nodes.get(id(tensor))
        if found is not None:
            return found[1]
        prefix = "p_" if is_param else "b_"
        node = self._placeholder(prefix + path, self.fake_of(tensor))
        self.real[node] = tensor.detach()
        # The verifier wants a parameter's entry to be a Parameter (the same storage, no copy).
        self.state_dict[path] = torch.nn.Parameter(tensor.detach(), requires_grad=False) if is_param else tensor.detach()
        kind = InputKind.PARAMETER if is_param else InputKind.BUFFER
        self.input_specs.append(InputSpec(kind, TensorArgument(node.name), path, persistent=True if not is_param
                                          else None))
        self.state_nodes[id(tensor)] = (tensor, node)
        return node

    def constant_tensor(self, tensor: torch.Tensor, name: str, converter: Converter) -> Any:
        """A tensor constant of the graph: a lifted constant of the program."""
        from torch.export.graph_signature import InputKind, InputSpec, TensorArgument

        found = self.state_nodes.get(id(tensor))
        node = found[1] if found is not None else None
        if node is None:
            fqn = f"_tensor_constant{len(self.constants)}"
            node = self._placeholder(f"c_{name}", self.fake_of(tensor))
            self.real[node] = tensor.detach()
            self.constants[fqn] = tensor.detach()
            self.input_specs.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(node.name), fqn))
            self.state_nodes[id(tensor)] = (tensor, node)
        return converter.capture(node)

    def user_input(self, tensor: Any, name: str, dynamic: set[int]) -> torch.fx.Node:
        from torch.export.graph_signature import InputKind, InputSpec, TensorArgument

        node = self._placeholder(name, self.fake_of(tensor, dynamic))
        self.real[node] = tensor
        self.input_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.name), None))
        self.user_names.add(node.name)
        return node

    def user_int(self, value: int, name: str) -> torch.fx.Node:
        """An int input of the program: a symbol whose hint is the example's value."""
        from torch._dynamo.source import ConstantSource
        from torch.export.graph_signature import InputKind, InputSpec, SymIntArgument
        from torch.fx.experimental.symbolic_shapes import DimDynamic

        source = ConstantSource(name)
        symbol = self.shape_env.create_symbol(value, source, dynamic_dim=DimDynamic.DYNAMIC, positive=None)
        node = self._placeholder(name, self.shape_env.create_symintnode(symbol, hint=value, source=source))
        self.real[node] = value
        self.input_specs.append(InputSpec(InputKind.USER_INPUT, SymIntArgument(node.name), None))
        self.user_names.add(node.name)
        return node

    def finish(self, converter: Converter, outputs: Any, args: tuple) -> Any:
        """The ExportedProgram: the outputs flattened (numbers as 0-d tensors), the placeholders in
        the signature's order (state, constants, user inputs)."""
        from torch._export.verifier import TrainingIRVerifier
        from torch.export.exported_program import ExportedProgram, ModuleCallEntry, ModuleCallSignature
        from torch.export.graph_signature import ExportGraphSignature, OutputKind, OutputSpec, TensorArgument

        out_leaves, out_spec = pytree.tree_flatten(outputs, is_leaf=lambda x: isinstance(x, (Quantized, SeqList)) or (
            self.scripted and isinstance(x, list) and not x))
        output_nodes = []
        for leaf in out_leaves:
            if isinstance(leaf, Quantized):
                # As the TorchScript exporter returns one: integers, scale (float32), zero point (of
                # the integers' type), what torch.onnx's unpack_quantized_tensor gives of an output.
                int_dtype = _QUANTIZED[leaf.qdtype][0]
                scale = converter.as_tensor(leaf.scale, torch.float32)
                zero_point = converter.as_tensor(leaf.zero_point, int_dtype)
                output_nodes += [leaf.values, converter.cast(scale, torch.float32), converter.cast(zero_point, int_dtype)]
            else:
                output_nodes.append(_as_output(converter, leaf))
        output_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(n.name), None) for n in output_nodes]
        self.graph.output(tuple(output_nodes))
        order = {n.name: i for i, n in enumerate(self.placeholders)}
        specs = sorted(self.input_specs, key=lambda s: (s.kind.name == "USER_INPUT", order[s.arg.name]))
        by_name = {n.name: n for n in self.placeholders}
        first = next(iter(self.graph.nodes))
        for spec in reversed(specs):
            node = by_name[spec.arg.name]
            if node is not first:
                first.prepend(node)
                first = node
        self.graph.eliminate_dead_code()
        specs = self.prune_unused_inputs(specs)
        gm = torch.fx.GraphModule(self.root, self.graph)
        example = tuple(args)
        in_spec = pytree.tree_structure((_writable_keys(example), {}))
        call = ModuleCallEntry("", ModuleCallSignature(inputs=[], outputs=[], in_spec=in_spec, out_spec=out_spec))
        # The training IR's verifier: in-place ops stay in the graph, as torch.export's training IR
        # keeps them (fxonnx functionalizes them).
        return ExportedProgram(root=gm, graph=gm.graph, graph_signature=ExportGraphSignature(specs, output_specs),
                               state_dict=self.state_dict, range_constraints=_range_constraints(self),
                               module_call_graph=[call], example_inputs=(example, {}), constants=self.constants,
                               verifiers=[TrainingIRVerifier])

    def prune_unused_inputs(self, specs: list) -> list:
        """The user's inputs the program never reads are not inputs of the model, as the
        TorchScript exporter drops them (names given stay with the inputs they were given to):
        not those whose data its graph reads (``_data_read``), nor one whose symbolic sizes other
        values are computed in."""
        from torch.export.graph_signature import InputKind
        from torch.fx.experimental.symbolic_shapes import free_symbols

        def symbols(node: torch.fx.Node) -> set:
            val = node.meta.get("val")
            return set(free_symbols(val)) if isinstance(val, (torch.Tensor, torch.SymInt)) else set()

        for ts_value, names in self.input_uses.items():
            if _data_read(ts_value, self.skipped):
                self.read_inputs.update(names)
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        computed = set().union(*(symbols(n) for n in self.graph.nodes if n.op != "placeholder"))
        unused = [n for n in placeholders if not n.users and n.name in self.user_names and n.name not in self.read_inputs]
        for node in unused:
            kept = set().union(*(symbols(p) for p in placeholders if p is not node))
            if (symbols(node) & computed) - kept:
                continue
            placeholders.remove(node)
            self.graph.erase_node(node)
            self.placeholders.remove(node)
            self.user_names.discard(node.name)
        names = {p.name for p in self.placeholders}
        return [s for s in specs if s.kind != InputKind.USER_INPUT or s.arg.name in names]

    def subgraph(self, sub: Converter, operands: list[torch.fx.Node], outputs: list[torch.fx.Node],
                 prefix: str) -> str:
        """A branch's graph as a submodule of the root, its placeholders in ``operands``' order."""
        graph = sub.graph
        # A branch returning one of its inputs as it is: torch.cond wants a value of the branch's own.
        outputs = [graph.call_function(torch.ops.aten.clone.default, (o,)) if o.op == "placeholder" else o
                   for o in outputs]
        for o in outputs:
            if "val" not in o.meta:
                o.meta["val"] = o.args[0].meta["val"]
        placeholders = []
        for outer in operands:
            inner = sub.captured.get(outer)
            if inner is None:
                first = next(iter(graph.nodes), None)
                with graph.inserting_before(first):
                    inner = graph.placeholder(f"{outer.name}_unused")
                inner.meta["val"] = outer.meta["val"]
            placeholders.append(inner)
        # Placeholders first, in operand order (FX binds them by position).
        for p in reversed(placeholders):
            first = next(iter(graph.nodes))
            if p is not first:
                first.prepend(p)
        graph.output(tuple(outputs))
        name = f"{prefix}_{self.subgraph_count}"
        self.subgraph_count += 1
        self.root.add_module(name, torch.fx.GraphModule(self.root, graph))
        return name

    def loop_graph(self, sub: Converter, own: int, additional: list[torch.fx.Node], outputs: list[Any],
                   prefix: str) -> str:
        """A while_loop function's graph as a submodule: its own ``own`` placeholders (the loop's
        state), then one per additional input, in ``additional``'s order."""
        graph = sub.graph
        own_nodes = [n for n in graph.nodes if n.op == "placeholder"][:own]
        extra = []
        for outer in additional:
            inner = sub.captured.get(outer)
            if inner is None:
                inner = graph.placeholder(f"{outer.name}_unused")
                inner.meta["val"] = outer.meta["val"]
            extra.append(inner)
        anchor = next(iter(graph.nodes))
        for p in [*own_nodes, *extra][::-1]:
            if p is not anchor:
                anchor.prepend(p)
            anchor = p
        graph.output(tuple(outputs))
        name = f"{prefix}_{self.subgraph_count}"
        self.subgraph_count += 1
        self.root.add_module(name, torch.fx.GraphModule(self.root, graph))
        return name

    def guess(self) -> Any:
        """A stand-in type for the items of an empty list or a ``None`` until a first build of the
        code that fills them says theirs (a float32 0-d tensor's meta), recorded as a guess."""
        with self.mode:
            meta = torch.empty((), dtype=torch.float32)
        self.guesses.append(meta)
        return meta

    def guessed(self, meta: Any) -> bool:
        return any(meta is g for g in self.guesses)

    def join(self, a: Any, b: Any) -> Any:
        """One value for two branches' results: where they differ in shape, a fresh symbol."""
        # Compared as text: a size one of them has from data cannot be compared with a number.
        if a.dim() == b.dim() and all(str(x) == str(y) for x, y in zip(a.shape, b.shape)) and a.dtype == b.dtype:
            return a
        if a.dim() != b.dim() or a.dtype != b.dtype:
            raise _BranchesDiffer("the branches of an `if` return tensors of different ranks or types")
        sizes = [x if str(x) == str(y) else self.shape_env.create_unbacked_symint() for x, y in zip(a.shape, b.shape)]
        with self.mode:
            return torch.empty(sizes, dtype=a.dtype)


def _flatten_with_paths(value: Any, prefix: str) -> list[tuple[str, Any]]:
    leaves, _ = pytree.tree_flatten_with_path(value)
    out = []
    for path, leaf in leaves:
        suffix = "_".join(str(getattr(k, "idx", getattr(k, "key", k))) for k in path)
        out.append((f"{prefix}_{suffix}" if suffix else prefix, leaf))
    return out


def convert(model: Any, args: tuple, kwargs: dict, *, dynamic_axes: Any = None, input_names: Any = None,
            training: Any = None, opset: int) -> Program:
    """``model`` (a module, traced on ``args``, or a scripted one) as an ExportedProgram of ATen ops."""
    if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
        model = torch.jit.load(model)
    if kwargs:
        args = _positional(model, args, kwargs)
    # Dynamic axes are first read as torch.export reads unbacked sizes (`_size_oblivious`); a
    # loop or branch known only at run time that writes into a tensor in place, which its subgraph
    # cannot, converts again from the graph with those writes made values (`_functional_writes`).
    functional, oblivious = False, bool(_dynamic_axes(dynamic_axes))
    while True:
        builder = ProgramBuilder(opset=opset)
        builder.functional_writes, builder.size_oblivious = functional, oblivious
        builder.scripted = is_script(model)
        try:
            program = _convert(builder, model, args, dynamic_axes, input_names, training)
        except Exception:
            if builder.writes_in_subgraph and not functional:
                functional = True
            elif oblivious:
                oblivious = False
            else:
                raise
            continue
        if builder.writes_in_subgraph and not functional:
            functional = True
            continue
        return program


def _convert(builder: "ProgramBuilder", model: Any, args: tuple, dynamic_axes: Any, input_names: Any,
             training: Any) -> Program:
    converter = Converter(builder, builder.graph)
    names = list(input_names or [])
    dyn = _dynamic_axes(dynamic_axes)
    structures: list = []
    if not is_script(model) and _is_quantized_model(model, args):
        # As the TorchScript exporter does: a quantized model is traced as a ScriptModule first (its
        # packed parameters are objects the graph reads, not tensors the trace can take).
        changed = _set_training(model, training)
        try:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = torch.jit.trace(model, args, check_trace=False)
        finally:
            if changed:
                model.train(not model.training)
    if is_script(model):
        graph, user_values, structures = _scripted(model, args, converter)
    else:
        graph, user_values = _traced(model, args, training, builder, converter)
    dim_names: dict[str, str] = {}
    # The user's tensors, in the order the TorchScript exporter flattens them: `input_names` and
    # `dynamic_axes` name them in that order.
    k = 0

    def given(node: torch.fx.Node) -> torch.fx.Node:
        # The name the user gave the input `node` is (the `k`th); the placeholder's may differ.
        if k <= len(names):
            builder.given_names[node.name] = names[k - 1]
        builder.input_uses.setdefault(ts_value.argument if isinstance(ts_value, _Leaf) else ts_value, []).append(
            node.name)
        return node

    for ts_value, leaf, default_name in user_values:
        if type(leaf) is int:
            name = names[k] if k < len(names) else default_name
            k += 1
            converter.env[ts_value] = given(builder.user_int(leaf, name))
            continue
        if type(leaf) in (float, bool):
            name = names[k] if k < len(names) else default_name
            k += 1
            # A 0-d tensor input (double, bool), as the TorchScript exporter takes it, read as
            # the number the program computes with.
            tensor = torch.tensor(leaf, dtype=torch.float64 if type(leaf) is float else torch.bool)
            node = given(builder.user_input(tensor, name, set()))
            converter.env[ts_value] = converter.tensor_op(torch.ops.aten.item.default, node)
            continue
        parts = _quantized_parts(leaf) if leaf.is_quantized else [leaf]
        nodes = []
        for part in parts:
            name = names[k] if k < len(names) else (default_name if len(nodes) == 0 else
                                                    f"{default_name}_{('scale', 'zero_point')[len(nodes) - 1]}")
            k += 1
            axes = dyn.get(name, {}) if len(nodes) == 0 else {}
            node = given(builder.user_input(part, name, set(axes)))
            for axis, dim_name in axes.items():
                d = node.meta["val"].shape[axis]
                if isinstance(d, torch.SymInt):
                    dim_names[str(d)] = dim_name
            nodes.append(node)
        if len(nodes) == 1 and isinstance(ts_value, _Leaf) and ts_value.number:
            # A 0-d tensor where the program takes an int (`pad: List[int]` given tensors): an
            # input, read as the number, as the TorchScript exporter takes it.
            converter.env[ts_value] = converter.tensor_op(torch.ops.aten.item.default, nodes[0])
            continue
        converter.env[ts_value] = nodes[0] if len(nodes) == 1 else Quantized(nodes[0], nodes[1], nodes[2], leaf.dtype)
    for ts_value, leaves, spec in structures:
        converter.env[ts_value] = pytree.tree_unflatten(
            [converter.env[x] if isinstance(x, _Leaf) else x for x in leaves], spec)
    with _size_oblivious(builder):
        results = converter.run_block(graph, [converter.env[v] for v in graph.inputs()])
        outputs = results[0] if len(results) == 1 else tuple(results)
        exported = builder.finish(converter, outputs, args)
    kept = [builder.given_names.get(n.name, "") for n in builder.placeholders if n.name in builder.user_names]
    return Program(exported, dim_names, kept)


def _size_oblivious(builder: ProgramBuilder) -> Any:
    """A dynamic axis must not become static where torch's own kernels ask "is it 1?" or "is it
    0?" of the example's size (broadcasting, views): the TorchScript exporter kept such an axis
    dynamic. Sizes are then read as torch.export reads unbacked ones (the answer for any size).
    Only with dynamic axes: the same reading would take a number the program computes
    (``expand(size)``, ``size`` -1) as not -1; where a kernel then fails (``repeat_interleave``'s
    repeats of size 1), ``convert`` converts again without it. torch.export patches its own
    configs in the same way; torch keeps such patches per thread, so other threads' exports and
    kernels do not see it (``test_trust.py``)."""
    import contextlib

    from torch.fx.experimental import _config as shapes_config

    if not builder.size_oblivious:
        return contextlib.nullcontext()
    return shapes_config.patch(backed_size_oblivious=True)


def _positional(model: Any, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments (a dict ending ``args``) in their places of the forward's signature, the
    parameters between left to their defaults, as the TorchScript exporter orders them."""
    forward = getattr(model, "forward", model)
    try:
        params = [p for name, p in inspect.signature(forward).parameters.items() if name != "self"]
    except (TypeError, ValueError):
        raise _error("keyword inputs for a model whose forward's signature cannot be read") from None
    out = list(args)
    scripted = is_script(model)
    for p in params[len(args):]:
        if p.name in kwargs:
            out.append(kwargs[p.name])
        elif p.default is not inspect.Parameter.empty:
            # A scripted program's default is a constant of the model, not an input (the
            # TorchScript exporter made it an optional input, which fxonnx's programs cannot hold).
            out.append(_Default(p.default) if scripted else p.default)
        else:
            raise _error(f"no value for the input `{p.name}`")
    while scripted and out and isinstance(out[-1], _Default):
        out.pop()  # trailing defaults: the program's own (`_scripted`)
    unknown = set(kwargs) - {p.name for p in params}
    if unknown:
        raise _error(f"keyword inputs the forward does not take: {', '.join(sorted(unknown))}")
    while not scripted and out and out[-1] is None:
        out.pop()  # trailing defaults of None: nothing to trace
    return tuple(out)


@dataclasses.dataclass
class _Unbound:
    """``tensor.unbind(dim)`` along a dynamic axis, which the program only counts (``len``)."""

    tensor: torch.fx.Node
    dim: int


def _only_counted(node: Any) -> bool:
    """Whether the program only takes ``len`` of ``node``'s result."""
    uses = [u.user.kind() for v in node.outputs() for u in v.uses()]
    return bool(uses) and all(k == "aten::len" for k in uses)


@dataclasses.dataclass
class _Default:
    """A scripted program's parameter left to its default value."""

    value: Any


class _NoneArgument(TorchScriptError, ValueError):
    """``None`` among a scripted program's arguments (a ``ValueError`` too, as the TorchScript
    exporter raised it)."""


def _constant(converter: Any, value: Any, name: str) -> Any:
    """A default value as the conversion holds it: a tensor as a constant of the program."""
    if isinstance(value, torch.Tensor):
        return converter.owner.constant_tensor(value, name, converter)
    return value


class _Leaf:
    """Stands for a tensor leaf of a scripted program's argument until its placeholder exists;
    ``argument`` is the graph's input that holds it."""

    def __init__(self, argument: Any, number: bool = False):
        self.argument = argument
        # A 0-d tensor given where the program takes an int.
        self.number = number


def _is_quantized_model(model: Any, args: tuple) -> bool:
    """torch.onnx's test for a model of eager-mode quantization (`_pre_trace_quant_model`)."""
    modules = model.modules() if isinstance(model, torch.nn.Module) else []
    return any(hasattr(m, "_packed_params") for m in modules) or any(
        getattr(a, "is_quantized", False) for a in pytree.tree_leaves(args))


def _quantized_parts(t: torch.Tensor) -> list[torch.Tensor]:
    """A quantized tensor as the TorchScript exporter passes it in and out of the model: its
    integers, its scale (float64) and its zero point (int64), as torch.onnx's
    ``unpack_quantized_tensor`` gives them."""
    return [t.int_repr(), torch.tensor(t.q_scale(), dtype=torch.float64),
            torch.tensor(t.q_zero_point(), dtype=torch.int64)]


def _scripted(model: Any, args: tuple, converter: Converter) -> tuple[Any, list, list]:
    """A scripted module or function: its graph inlined, the module as ``self``, each tensor and
    each number (int, float, bool) of the arguments an input, as the TorchScript exporter makes
    them; ``None`` among them is a constant of the program."""
    graph = model.graph.copy()
    torch._C._jit_pass_inline(graph)
    if converter.owner.functional_writes:
        _functional_writes(graph, getattr(model, "_c", None))
    ts_inputs = list(graph.inputs())
    if ts_inputs and ts_inputs[0].type().kind() == "ClassType":
        converter.env[ts_inputs[0]] = ModuleValue(model, "")
        ts_inputs = ts_inputs[1:]
    if len(args) > len(ts_inputs):
        raise _error(f"{len(args)} inputs given to a program that takes {len(ts_inputs)}")
    nones = sum(1 for leaf in pytree.tree_leaves(list(args), is_leaf=lambda x: x is None) if leaf is None)
    if nones:
        # As the TorchScript exporter refused them (its message, which torch.onnx's users match).
        err = _NoneArgument(f"args contained {nones} None's after flattening. When exporting a ScriptModule or "
                            "ScriptFunction, no args may be None; leave the argument out for its default")
        err.hint = "leave the argument out (its default is the program's), or pass a tensor"
        raise err
    defaults = [a.default_value for a in model.schema.arguments] if hasattr(model, "schema") else None
    if defaults is None and hasattr(model, "forward") and hasattr(model.forward, "schema"):
        defaults = [a.default_value for a in model.forward.schema.arguments][1:]
    user, structures = [], []
    for i, (ts_value, arg) in enumerate(zip(ts_inputs, args)):
        if isinstance(arg, _Default):
            converter.env[ts_value] = _constant(converter, arg.value, ts_value.debugName().split(".")[0])
            continue
        base = ts_value.debugName().split(".")[0]
        leaves, spec = pytree.tree_flatten(arg)
        keys = []
        for i, leaf in enumerate(leaves):
            # A tensor, or an int the scripted program takes (an input of the model, as the
            # TorchScript exporter makes it).
            if isinstance(leaf, torch.Tensor) or (type(leaf) in (int, float, bool) and _primitive_input(ts_value)):
                key = _Leaf(ts_value, number=isinstance(leaf, torch.Tensor) and leaf.dim() == 0 and not (
                    leaf.is_floating_point() or leaf.is_complex()) and _takes_ints(ts_value))
                user.append((key, leaf, base if len(leaves) == 1 else f"{base}_{i}"))
                keys.append(key)
            else:
                keys.append(leaf)
        structures.append((ts_value, keys, spec))
    for i, ts_value in enumerate(ts_inputs[len(args):], start=len(args)):
        default = defaults[i] if defaults is not None and i < len(defaults) else None
        converter.env[ts_value] = _constant(converter, default, ts_value.debugName().split(".")[0])
    return graph, user, structures


def _traced_expand(value: Any) -> bool:
    """Whether ``value`` is an ``expand`` to sizes all constant (as a trace records them)."""
    return (isinstance(value, torch.fx.Node) and value.target is torch.ops.aten.expand.default
            and all(type(d) is int for d in value.args[1]))


_NEW_FACTORIES = {
    torch.ops.aten.new_zeros.default: torch.ops.aten.zeros.default,
    torch.ops.aten.new_ones.default: torch.ops.aten.ones.default,
    torch.ops.aten.new_empty.default: torch.ops.aten.empty.memory_format,
    torch.ops.aten.new_full.default: torch.ops.aten.full.default,
}


# What reads a tensor's type or sizes only (or replaces it, `set_`): the TorchScript exporter's
# graph no longer reads an input so read where its sizes are static.
_TYPE_READS = {"aten::size", "aten::dim", "prim::dtype", "prim::device", "prim::layout", "aten::new_zeros",
               "aten::new_ones", "aten::new_empty", "aten::new_full", "aten::set_", "prim::shape", "aten::__isnot__",
               "aten::__is__", "prim::is_cuda"}


def _data_read(ts_value: Any, skipped: set) -> bool:
    """Whether a TorchScript graph reads the data of its input ``ts_value`` (any use but one of
    ``_TYPE_READS`` as its first argument), which the TorchScript exporter keeps an input for.
    Not a use in a block the program does not take of an if its sizes decide (``skipped``): the
    TorchScript exporter folds that if away too (one on the length of a list it does not)."""
    uses = getattr(ts_value, "uses", None)
    if uses is None:
        return False

    def folded(node: Any) -> bool:
        while True:
            block = node.owningBlock()
            owner = block.owningNode() if block is not None else None
            if owner is None:
                return False
            if owner.kind() == "prim::If" and _from_sizes(owner.input()):
                index = next(k for k, b in enumerate(owner.blocks()) if b == block)
                if (owner, index) in skipped:
                    return True
            node = owner

    return any((u.user.kind() not in _TYPE_READS or u.offset != 0) and not folded(u.user) for u in uses())


# What computes a number from sizes and constants only (what the TorchScript exporter folds where
# the sizes are static).
_SIZE_ARITHMETIC = {"aten::size", "aten::dim", "prim::Constant", "aten::eq", "aten::ne", "aten::lt", "aten::gt",
                    "aten::le", "aten::ge", "aten::add", "aten::sub", "aten::mul", "aten::floordiv", "aten::__not__",
                    "aten::__and__", "aten::__or__", "aten::__getitem__", "prim::shape"}


def _from_sizes(value: Any, depth: int = 0) -> bool:
    """Whether a TorchScript number is computed from tensors' sizes and constants only."""
    node = value.node()
    if depth > 32 or node.kind() not in _SIZE_ARITHMETIC:
        return False
    if node.kind() in ("aten::size", "aten::dim", "prim::shape", "prim::Constant"):
        return True
    return all(_from_sizes(v, depth + 1) for v in node.inputs())


def _writable_keys(value: Any) -> Any:
    """``value`` with the keys of its dicts that an archive cannot write (a tensor, as the
    TorchScript exporter took them) as their text: the tree the archive records names inputs."""
    if isinstance(value, dict):
        return {k if isinstance(k, (str, int)) else str(k.tolist() if isinstance(k, torch.Tensor) else k):
                _writable_keys(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_writable_keys(v) for v in value)
    return value


def _takes_ints(ts_value: Any) -> bool:
    """Whether the scripted program's input is an int, or a list or tuple of ints."""
    t = ts_value.type()
    if t.kind() == "ListType":
        return t.getElementType().kind() == "IntType"
    if t.kind() == "TupleType":
        return all(e.kind() == "IntType" for e in t.elements())
    return t.kind() == "IntType"


def _primitive_input(ts_value: Any) -> bool:
    """Whether the scripted program's input holds numbers the model takes as inputs: an int,
    float or bool, or a tuple of them among tensors (not a list, whose length is the program's)."""
    t = ts_value.type()
    if t.kind() == "OptionalType":
        t = t.getElementType()
    if t.kind() == "TupleType":
        return any(e.kind() in ("IntType", "FloatType", "BoolType") for e in t.elements())
    return t.kind() in ("IntType", "FloatType", "BoolType")


def _hint(v: Any) -> int | None:
    """An int, or a symbolic one's value in the example (``None`` for one made from data)."""
    if isinstance(v, torch.SymInt):
        return v.node.hint
    return v


def _dynamic(size: Any) -> bool:
    return isinstance(size, torch.SymInt) and size.node.maybe_as_int() is None


def _only_returned(node: Any, converter: Any) -> bool:
    """Whether the program only returns ``node``'s result (in a tuple or list, maybe): no op of
    the program reads it."""
    if converter.parent is not None:
        return False

    def returned(value: Any) -> bool:
        for use in value.uses():
            kind = use.user.kind()
            if kind == "prim::Return":
                continue
            if kind in ("prim::TupleConstruct", "prim::ListConstruct") and returned(use.user.output()):
                continue
            return False
        return True

    return all(returned(v) for v in node.outputs())


def _container_model(step: str, dtype: Any, count: int, opset: int) -> tuple[bytes, str | None]:
    """The ONNX of one op on an optional or a sequence of tensors of ``dtype``, and what its result
    is (``_OPTIONAL``, ``_SEQUENCE`` or ``None`` for a tensor). Optionals: ``wrap``
    (``Optional(x)``), ``none`` (an ``Optional`` of no value), ``has`` (``OptionalHasElement``),
    ``get`` (``OptionalGetElement``), ``same_optional`` (an ``Identity``, for a branch that returns
    one it reads). Sequences: ``empty``, ``construct`` (of ``count`` tensors), ``insert`` (at the
    end), ``insert_at`` (a position), ``erase``, ``at``, ``length``, ``stack`` or ``cat`` (``ConcatFromSequence`` on axis ``count``, new or
    not), ``same_sequence``."""
    from onnx import TensorProto, helper
    from torch.onnx._internal.exporter._core import torch_dtype_to_onnx_dtype

    elem = int(torch_dtype_to_onnx_dtype(dtype))
    tensor = helper.make_tensor_type_proto(elem, None)
    optional, sequence = helper.make_optional_type_proto(tensor), helper.make_sequence_type_proto(tensor)
    index, boolean = (helper.make_tensor_type_proto(t, []) for t in (TensorProto.INT64, TensorProto.BOOL))
    xs = [f"x{k}" for k in range(count)]
    op = helper.make_node
    inputs, node, out = {
        "wrap": ([tensor], op("Optional", ["x0"], ["y"]), optional),
        "none": ([], op("Optional", [], ["y"], type=tensor), optional),
        "has": ([optional], op("OptionalHasElement", ["x0"], ["y"]), boolean),
        "get": ([optional], op("OptionalGetElement", ["x0"], ["y"]), tensor),
        "same_optional": ([optional], op("Identity", ["x0"], ["y"]), optional),
        "empty": ([], op("SequenceEmpty", [], ["y"], dtype=elem), sequence),
        "construct": ([tensor] * count, op("SequenceConstruct", xs, ["y"]), sequence),
        "insert": ([sequence, tensor], op("SequenceInsert", ["x0", "x1"], ["y"]), sequence),
        "insert_at": ([sequence, tensor, index], op("SequenceInsert", ["x0", "x1", "x2"], ["y"]), sequence),
        "erase": ([sequence, index], op("SequenceErase", ["x0", "x1"], ["y"]), sequence),
        "at": ([sequence, index], op("SequenceAt", ["x0", "x1"], ["y"]), tensor),
        "length": ([sequence], op("SequenceLength", ["x0"], ["y"]), index),
        "stack": ([sequence], op("ConcatFromSequence", ["x0"], ["y"], axis=count, new_axis=1), tensor),
        "cat": ([sequence], op("ConcatFromSequence", ["x0"], ["y"], axis=count, new_axis=0), tensor),
        "same_sequence": ([sequence], op("Identity", ["x0"], ["y"]), sequence),
    }[step]
    graph = helper.make_graph([node], step, [helper.make_value_info(n, t) for n, t in zip(node.input, inputs)],
                              [helper.make_value_info("y", out)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    kind = _OPTIONAL if out is optional else _SEQUENCE if out is sequence else None
    return model.SerializeToString(), kind


def _rank_from_data_model(dtype: Any, rank: int, dims: list[int] | None, unsqueeze: bool, every: bool,
                          opset: int) -> bytes:
    """The ONNX of a ``squeeze``/``unsqueeze`` whose result's rank is known only at run time:
    input ``x`` (and ``dim``, an int64 scalar, where ``dims`` is ``None``); its output is marked
    (``fxonnx.rank``) so that no shape is declared for it."""
    from onnx import TensorProto, helper
    from torch.onnx._internal.exporter._core import torch_dtype_to_onnx_dtype

    elem = int(torch_dtype_to_onnx_dtype(dtype))
    const = lambda name, values, kind=TensorProto.INT64: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=helper.make_tensor(name, kind, [len(values)], values))
    inputs = [helper.make_tensor_value_info("x", elem, None)]
    if dims is None:
        inputs.append(helper.make_tensor_value_info("dim", TensorProto.INT64, []))
    nodes = []
    if unsqueeze:
        nodes += [const("one_axis", [1]), helper.make_node("Reshape", ["dim", "one_axis"], ["axes"]),
                  helper.make_node("Unsqueeze", ["x", "axes"], ["y"])]
    elif every:
        nodes.append(helper.make_node("Squeeze", ["x"], ["y"]))
    else:
        if dims is None:
            # The axis the runtime `dim` names, negative ones counted from the end.
            nodes += [helper.make_node("Constant", [], ["rank"], value=helper.make_tensor("rank", TensorProto.INT64,
                                                                                          [], [rank])),
                      helper.make_node("Add", ["dim", "rank"], ["shifted"]),
                      helper.make_node("Mod", ["shifted", "rank"], ["axis"]),
                      const("axes", list(range(rank))),
                      helper.make_node("Equal", ["axes", "axis"], ["selected"])]
        else:
            nodes.append(const("selected", [int(i in dims) for i in range(rank)], TensorProto.BOOL))
        # Keep every size but the selected ones that are 1 when the model runs.
        nodes += [helper.make_node("Shape", ["x"], ["shape"]), const("one", [1]),
                  helper.make_node("Equal", ["shape", "one"], ["ones"]),
                  helper.make_node("And", ["ones", "selected"], ["dropped"]),
                  helper.make_node("Not", ["dropped"], ["kept"]),
                  helper.make_node("Compress", ["shape", "kept"], ["new_shape"], axis=0),
                  helper.make_node("Reshape", ["x", "new_shape"], ["y"], allowzero=1)]
    output = helper.make_tensor_value_info("y", elem, None)
    output.metadata_props.add(key="fxonnx.rank", value="from data")
    graph = helper.make_graph(nodes, "rank_from_data", inputs, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", max(opset, 14))])
    return model.SerializeToString()


def _warn_squeeze_of_dynamic(metas: Any, node: Any) -> None:
    """``squeeze`` of an axis whose size is known only at run time removes it where the size is 1:
    the rank of the result depends on the data. Where the program only returns the result,
    ``rank_from_data`` follows the data; here another op reads it with one rank, so the program
    keeps the axis (sizes 2 and up) and the user is told, naming the line, what a size of 1 gives."""
    import warnings

    (x, *rest), kwargs = metas
    if not isinstance(x, torch.Tensor):
        return
    dims = rest[0] if rest else kwargs.get("dim", None)
    if isinstance(dims, torch.SymInt):
        return  # an axis known only at run time: refused where the rank cannot be kept
    dims = range(x.dim()) if dims is None else ([dims] if isinstance(dims, int) else list(dims))
    dynamic = [d % max(x.dim(), 1) for d in dims if isinstance(x.shape[d], torch.SymInt)
               and x.shape[d].node.maybe_as_int() is None]
    if dynamic:
        where = (node.sourceRange().split("\n")[0] if hasattr(node, "sourceRange") else "").strip()
        warnings.warn(f"`squeeze` of axis {dynamic} of a tensor whose size there is dynamic ({where}): the "
                      "model keeps the axis, as for sizes of 2 and more (the dynamic axis' range); an input of "
                      "size 1 there gives the axis unsqueezed where eager removes it. Give that axis a static "
                      "size if 1 is a size the model will see.", stacklevel=2)


def _functional_writes(graph: Any, module: Any) -> None:
    """In-place tensor updates inside a loop or a branch made values, by the TorchScript
    exporter's own pass: the loop carries the tensor it updates, the branch returns it. A
    subgraph of a program (``while_loop``, ``cond``) cannot write to a tensor of its caller, so
    converted as they are such writes would be lost. Graphs without them are left as they are."""

    def writes_inside(block: Any, depth: int) -> bool:
        for n in block.nodes():
            kind = n.kind()
            if depth and kind.startswith("aten::") and kind.endswith("_") and not kind.endswith("__"):
                return True
            if any(writes_inside(b, depth + 1) for b in n.blocks()):
                return True
        return False

    if writes_inside(graph, 0):
        torch._C._jit_pass_onnx_remove_inplace_ops_for_onnx(graph, module)


def _traced(model: Any, args: tuple, training: Any, builder: "ProgramBuilder", converter: Converter) -> tuple:
    """A module traced on ``args`` as the TorchScript exporter traces it: its graph takes the
    arguments' tensors, flattened, then the module's state, which becomes the program's."""
    import warnings

    changed = _set_training(model, training)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's warnings about Python values it fixed
            graph, _ = torch.jit._get_trace_graph(model, args, strict=False, _force_outplace=False)
        torch._C._jit_pass_inline(graph)  # scripted functions the traced code calls
        if builder.functional_writes:
            _functional_writes(graph, None)
    except Exception as e:
        raise _error(f"torch.jit.trace cannot trace the model: {type(e).__name__}: {str(e).splitlines()[0]}",
                     hint="make the model traceable, or export it with dynamo=True") from e
    finally:
        if changed:
            model.train(not model.training)
    state = torch.jit._unique_state_dict(model, keep_vars=True) if isinstance(model, torch.nn.Module) else {}
    flat, _ = torch.jit._flatten(args)
    ts_inputs = list(graph.inputs())
    if len(ts_inputs) != len(flat) + len(state):
        raise _error(f"the trace takes {len(ts_inputs)} inputs for {len(flat)} tensors and {len(state)} weights")
    parameters = {id(p) for p in model.parameters()} if isinstance(model, torch.nn.Module) else set()
    for ts_value, (fqn, tensor) in zip(ts_inputs[len(flat):], state.items()):
        converter.env[ts_value] = builder.state_tensor(tensor, fqn, id(tensor) in parameters)
    names = _leaf_names(model, args, len(flat))
    return graph, [(v, t, n) for v, t, n in zip(ts_inputs[: len(flat)], flat, names)]


def _leaf_names(model: Any, args: tuple, count: int) -> list[str]:
    """Default names of the flattened input tensors: the forward's parameter names (with the
    leaf's place in a nested argument: ``d_a``), as torch.onnx names inputs it was not told."""
    forward = getattr(model, "forward", model)
    try:
        params = [p for p in inspect.signature(forward).parameters if p != "self"]
    except (TypeError, ValueError):
        params = []
    names = []
    for i, arg in enumerate(args):
        base = params[i] if i < len(params) else f"input_{i}"
        leaves = [leaf for _, leaf in _flatten_with_paths(arg, base) if isinstance(leaf, torch.Tensor)]
        paths = [p for p, leaf in _flatten_with_paths(arg, base) if isinstance(leaf, torch.Tensor)]
        names.extend(paths if len(leaves) > 1 else [base] * len(leaves))
    return names if len(names) == count else [f"input_{i}" for i in range(count)]


def _as_output(converter: Converter, leaf: Any) -> torch.fx.Node:
    """A graph output: a tensor as it is; a number as the 0-d tensor the TorchScript exporter
    writes for it."""
    if _is_optional(leaf):
        return leaf
    if isinstance(leaf, SeqList):
        return converter.capture(leaf.node)
    if isinstance(leaf, list):  # empty: a scripted program's empty list of tensors
        return converter.sequence([], converter.fake(torch.empty, (), dtype=torch.float32), None)
    if isinstance(leaf, torch.fx.Node) and isinstance(leaf.meta["val"], torch.Tensor):
        if leaf.meta["val"].is_complex():
            # ONNX has no complex tensors: torch.onnx's dynamo exporter returns the real view,
            # the TorchScript exporter refused; a model whose output changes shape is refused too.
            err = TorchScriptError("the program returns a complex tensor, which an ONNX model cannot; hint: return "
                                   "torch.view_as_real(...) of it (or export with dynamo=True, which returns that)")
            err.hint = "return torch.view_as_real(...) of the complex output"
            err.torch_onnx_class = "SymbolicValueError"
            raise err
        return leaf
    if leaf is None:
        # An empty ONNX optional, as the TorchScript exporter writes it (from opset 15).
        return converter.optional(None, converter.fake(torch.empty, (), dtype=torch.float32), None)
    value = leaf.meta["val"] if isinstance(leaf, torch.fx.Node) else leaf
    dtype = torch.bool if isinstance(value, (bool, torch.SymBool)) else torch.int64 if isinstance(
        value, (int, torch.SymInt)) else torch.float32
    return converter.emit(torch.ops.aten.scalar_tensor.default, (leaf,), {"dtype": dtype},
                          converter.fake(torch.ops.aten.scalar_tensor.default, value, dtype=dtype))


def _range_constraints(builder: ProgramBuilder) -> dict:
    from torch.utils._sympy.value_ranges import ValueRanges

    out = {}
    env = builder.shape_env
    for symbol in (env.backed_var_to_val if hasattr(env, "backed_var_to_val") else env.var_to_val):
        out[symbol] = builder.shape_env.var_to_range.get(symbol, ValueRanges(0, math.inf))
    for symbol in builder.shape_env.var_to_range:
        out.setdefault(symbol, builder.shape_env.var_to_range[symbol])
    return out


def _dynamic_axes(dynamic_axes: Any) -> dict[str, dict[int, str]]:
    """``dynamic_axes`` as torch.onnx's TorchScript exporter reads it: by input name, a dict of axis
    to name, or a list of axes (named ``<input>_dynamic_axes_<k>``)."""
    out: dict[str, dict[int, str]] = {}
    for name, axes in (dynamic_axes or {}).items():
        if isinstance(axes, dict):
            out[name] = {int(a): str(n) for a, n in axes.items()}
        else:
            out[name] = {int(a): f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(axes)}
    return out
