"""An ExportedProgram as the entries of a ``.pt2`` archive, in memory, without writing one.

``torch.export.save`` pickles nothing for plain tensors but copies every weight into the zip it
writes (and fails on programs torch.onnx converts in memory). fxonnx hands Rust the archive's
entries instead: the program's schema JSON from torch's graph-level serializer (the same JSON
``torch.export.save`` writes as ``models/model.json``), the payload configs, and each tensor's
storage as a zero-copy buffer (its address and size, kept alive by the tensor's storage object).

Where torch's serializer has no form for something the program holds, fxonnx fills the gap (with
overrides on its own serializer instance: nothing another caller of torch sees changes):

- a ``while_loop`` carrying a Python int (``(0, x)``): the int is carried as a 0-d int64 tensor
  made by an ``aten.scalar_tensor`` node (ONNX loops carry tensors anyway);
- a SymBool user output (``x.shape[0] < n``): as ``as_sym_bool`` (torch's output specs lack it);
- ``torch.sym_sum``: serialized as the symbolic op it is (torch's list of them lacks it);
- ``torch.float4_e2m1fn_x2``: dtype number 45 (c10's), which fxonnx reads as ONNX FLOAT4E2M1;
- nodes with a custom translation (``custom_translation_table``): written as an
  ``fxonnx::onnx_graph`` node that carries the ONNX the translation built for it.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable

import torch

from ._fxonnx import ExportError

# fxonnx's number for torch.float4_e2m1fn_x2, which torch's schema has none for: c10's ScalarType.
FLOAT4_E2M1FN_X2 = 45
MODEL = "model"


class Storage:
    """A tensor storage handed to Rust without a copy: ``address``/``nbytes`` of its bytes, and
    ``owner`` (the storage object) kept alive while Rust holds them."""

    __slots__ = ("address", "nbytes", "owner")

    def __init__(self, address: int, nbytes: int, owner: Any):
        self.address = address
        self.nbytes = nbytes
        self.owner = owner


def _storage_of(t: torch.Tensor) -> Storage:
    if t.device.type != "cpu":
        t = t.detach().cpu()
    storage = t.untyped_storage()
    return Storage(storage.data_ptr(), storage.nbytes(), storage)


def _payloads(tensors: dict[str, Any], folder: str, prefix: str, entries: dict[str, Any]) -> dict:
    """The payload config of ``tensors`` (fqn → tensor), one entry per distinct storage."""
    from torch._export.serde import schema

    serialize_tensor_meta = _tensor_meta({})

    config: dict[str, Any] = {}
    by_storage: dict[tuple[int, int], str] = {}
    for fqn, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            # A custom object (ScriptObject): only Python can unpickle it; fxonnx refuses it by name.
            config[fqn] = schema.PayloadMeta(path_name=f"{prefix}obj_{len(config)}", is_param=False, use_pickle=True,
                                             tensor_meta=None)
            continue
        subclass = type(t.data) is not torch.Tensor and not _is_fake(t)
        meta = serialize_tensor_meta(t)
        if subclass:
            config[fqn] = schema.PayloadMeta(path_name=f"{prefix}{len(by_storage)}_pickled", is_param=False,
                                             use_pickle=True, tensor_meta=meta)
            continue
        if _is_fake(t) or t.untyped_storage().data_ptr() == 0:
            key = (id(t), 0)
            storage = Storage(0, 0, None)
        else:
            storage = _storage_of(t)
            key = (storage.address, storage.nbytes)
        name = by_storage.get(key)
        if name is None:
            name = f"{prefix}{len(by_storage)}"
            by_storage[key] = name
            entries[f"{folder}/{name}"] = storage
        config[fqn] = schema.PayloadMeta(path_name=name, is_param=isinstance(t, torch.nn.Parameter),
                                         use_pickle=False, tensor_meta=meta)
    return config


def _is_fake(t: torch.Tensor) -> bool:
    try:
        from torch._subclasses.fake_tensor import is_fake

        return bool(is_fake(t))
    except ImportError:  # pragma: no cover
        return False


_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(obj: Any) -> Any:
    """torch's ``_dataclass_to_dict``, with each dataclass's fields looked up once and unions read
    without their checking ``__getattribute__`` (the same dicts, in a third of the time)."""
    import dataclasses
    import math

    from torch._export.serde.union import _Union

    t = type(obj)
    if t is dict:
        return {k: _plain(v) for k, v in obj.items()}
    if t is list:
        return [_plain(x) for x in obj]
    if t in (str, int, bool) or obj is None:
        return obj
    if isinstance(obj, _Union):
        tag = object.__getattribute__(obj, "_type")
        return {tag: _plain(object.__getattribute__(obj, tag))}
    names = _FIELDS.get(t)
    if names is None and dataclasses.is_dataclass(obj):
        names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(obj))
    if names is not None:
        return {n: _plain(getattr(obj, n)) for n in names}
    if isinstance(obj, float):
        if math.isnan(obj):
            return "NaN"
        return "Infinity" if obj == math.inf else "-Infinity" if obj == -math.inf else obj
    if isinstance(obj, tuple):
        return tuple(_plain(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(x) for x in obj]
    return obj


_UNIONS: set[type] = set()


def _shallow(obj: Any) -> Any:
    """One level of ``_plain``, for ``json.dumps(default=...)``: the C encoder walks the dicts
    and lists itself and calls back only for the schema's dataclasses and enums."""
    t = type(obj)
    names = _FIELDS.get(t)
    if names is not None:
        return {n: getattr(obj, n) for n in names}
    if t in _UNIONS:
        # The tag as a plain str: the union's tag class hashes and compares in Python.
        tag = str(object.__getattribute__(obj, "_type"))
        return {tag: object.__getattribute__(obj, tag)}
    import dataclasses
    import enum

    from torch._export.serde.union import _Union

    if isinstance(obj, _Union):
        _UNIONS.add(t)
        return _shallow(obj)
    if dataclasses.is_dataclass(obj):
        _FIELDS[t] = tuple(f.name for f in dataclasses.fields(obj))
        return _shallow(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    raise TypeError(f"cannot write {t.__name__} as JSON")


def _json(obj: Any) -> bytes:
    from torch._export.serde.serialize import EnumEncoder

    try:
        return json.dumps(obj, default=_shallow, allow_nan=False, separators=(", ", ": ")).encode("utf-8")
    except ValueError:
        # An infinite or NaN float, which torch writes as a string: the slower, exact walk.
        return json.dumps(_plain(obj), cls=EnumEncoder, allow_nan=False).encode("utf-8")


def _tensor_meta(cache: dict) -> Callable[[torch.Tensor], Any]:
    """torch's ``serialize_tensor_meta``, with ``torch.float4_e2m1fn_x2`` (which torch's schema has
    no number for) as c10's, and one result per shape and type: printing each SymInt with sympy
    is most of the serializer's time, and JSON writes equal metadata the same."""
    from torch._export.serde import schema
    from torch._export.serde import serialize as S

    float4 = getattr(torch, "float4_e2m1fn_x2", None)

    def dim(d):
        return d.node.expr if isinstance(d, torch.SymInt) else d

    def tensor_meta(t: torch.Tensor) -> Any:
        key = (t.dtype, tuple(map(dim, t.shape)), tuple(map(dim, t.stride())), dim(t.storage_offset()),
               t.requires_grad, t.device, t.layout)
        found = cache.get(key)
        if found is None:
            if float4 is not None and t.dtype == float4 and float4 not in S._TORCH_TO_SERIALIZE_DTYPE:
                found = schema.TensorMeta(
                    dtype=FLOAT4_E2M1FN_X2,
                    sizes=[S.serialize_sym_int(d) for d in t.shape],
                    requires_grad=t.requires_grad,
                    device=schema.Device(type=t.device.type, index=t.device.index),
                    strides=[S.serialize_sym_int(d) for d in t.stride()],
                    storage_offset=S.serialize_sym_int(t.storage_offset()),
                    layout=S._TORCH_TO_SERIALIZE_LAYOUT[t.layout],
                )
            else:
                found = S.serialize_tensor_meta(t)
            cache[key] = found
        return found

    return tensor_meta


def _graph_serializer(exported: Any, custom: Callable[[Any], Any] | None) -> Any:
    """torch's ``GraphModuleSerializer`` for ``exported``, with fxonnx's forms for what it cannot
    write (see the module docstring). The class cannot be subclassed (its metaclass forbids it),
    and patching it would change every serializer in the process, another thread's
    ``torch.export.save`` included: the overrides are this one instance's attributes."""
    import types

    from torch._export.serde import schema
    from torch._export.serde import serialize as S
    from torch.export import graph_signature as gs

    gm = S.GraphModuleSerializer(exported.graph_signature, exported.module_call_graph)
    tensor_meta = _tensor_meta({})
    sym_ops = S._SYM_OPS | {torch.sym_sum}

    float4 = getattr(torch, "float4_e2m1fn_x2", None)

    def serialize_input(self, arg, arg_type=None):
        if float4 is not None and arg is float4 and float4 not in S._TORCH_TO_SERIALIZE_DTYPE:
            # A dtype argument torch's schema has no number for (`empty(..., dtype=float4)`).
            return schema.Argument.create(as_scalar_type=FLOAT4_E2M1FN_X2)
        if isinstance(arg, (list, tuple)) and len(arg) == 0 and arg_type is None:
            # A higher-order op's empty operand list: what torch writes, without its warning.
            return schema.Argument.create(as_tensors=[])
        if isinstance(arg, (list, tuple)) and len(arg) > 0:
            nodes = [a for a in arg if isinstance(a, torch.fx.Node)]
            ints = [a for a in arg if type(a) is int]
            if nodes and ints and len(nodes) + len(ints) == len(arg) and all(
                isinstance(n.meta.get("val"), torch.Tensor) for n in nodes
            ):
                return _int_carry(self, arg)
        return S.GraphModuleSerializer.serialize_input(self, arg, arg_type)

    def serialize_argument_spec(self, x):
        if isinstance(x, gs.SymBoolArgument):
            return schema.Argument.create(as_sym_bool=schema.SymBoolArgument.create(as_name=x.name))
        return S.GraphModuleSerializer.serialize_argument_spec(self, x)

    def handle_call_function(self, node):
        if custom is not None and node.op == "call_function":
            replacement = custom(node)
            if replacement is not None:
                self.graph_state.nodes.append(_onnx_graph_node(self, node, *replacement))
                return
        if getattr(node.target, "namespace", None) == "onnx_symbolic" and "shapes" in node.kwargs:
            # torch.onnx.ops.symbolic_multi_out: its output shapes (SymInt[][], which torch's
            # serializer cannot write when they are symbolic) are the outputs' own shapes, which
            # the program records anyway: written empty.
            kwargs = {**node.kwargs, "shapes": []}
            self.graph_state.nodes.append(schema.Node(
                name=node.name,
                target=self.serialize_operator(node.target),
                inputs=self.serialize_inputs(node.target, node.args, kwargs),
                outputs=self.serialize_outputs(node),
                metadata=self.serialize_metadata(node),
            ))
            return
        if node.target in sym_ops and node.target not in S._SYM_OPS:
            # torch.sym_sum, which torch's list of symbolic ops lacks: written as the others are.
            self.graph_state.nodes.append(schema.Node(
                name=node.name,
                target=self.serialize_operator(node.target),
                # torch's serialize_sym_op_inputs, past its check of its own list.
                inputs=[schema.NamedArgument(name=name, arg=self.serialize_input(arg),
                                             kind=schema.ArgumentKind.POSITIONAL)
                        for name, arg in zip(inspect.signature(node.target).parameters, node.args)],
                outputs=[self.serialize_output(node.name, node.meta.get("val"))],
                metadata=self.serialize_metadata(node),
            ))
            return
        return S.GraphModuleSerializer.handle_call_function(self, node)

    def serialize_tensor_output(self, name, meta_val):
        if name in self.graph_state.tensor_values:
            raise AssertionError(f"name {name!r} already in tensor_values")
        self.graph_state.tensor_values[name] = tensor_meta(meta_val)
        return schema.TensorArgument(name=name)

    def serialize_graph(self, graph_module):
        # torch's, without printing the whole graph for a debug log that is off.
        for node in graph_module.graph.nodes:
            try:
                getattr(self, f"handle_{node.op}")(node)
            except ExportError:
                raise  # a custom translation's own error, already naming the node
            except Exception as e:
                raise S.SerializeError(f"Failed serializing node {node} in graph: {node.format_node()}") from e
        state = self.graph_state
        return schema.Graph(
            inputs=state.inputs,
            nodes=state.nodes,
            tensor_values=state.tensor_values,
            sym_int_values=state.sym_int_values,
            sym_float_values=state.sym_float_values,
            sym_bool_values=state.sym_bool_values,
            custom_obj_values=state.custom_obj_values,
            outputs=state.outputs,
            is_single_tensor_return=state.is_single_tensor_return,
        )

    for fn in (serialize_input, serialize_argument_spec, handle_call_function, serialize_tensor_output,
               serialize_graph):
        setattr(gm, fn.__name__, types.MethodType(fn, gm))
    return gm


def _int_carry(self: Any, arg: Any) -> Any:
    """A loop's carried values holding Python ints: each int carried as a 0-d int64 tensor made by
    an ``aten.scalar_tensor`` node (ONNX loops carry tensors anyway)."""
    from torch._export.serde import schema

    out = []
    for a in arg:
        if isinstance(a, torch.fx.Node):
            out.append(schema.TensorArgument(name=a.name))
            continue
        name = f"fxonnx_int_carry_{len(self.graph_state.nodes)}_{len(out)}"
        self.graph_state.tensor_values[name] = schema.TensorMeta(
            dtype=schema.ScalarType.LONG,
            sizes=[],
            requires_grad=False,
            device=schema.Device(type="cpu"),
            strides=[],
            storage_offset=schema.SymInt.create(as_int=0),
            layout=schema.Layout.Strided,
        )
        self.graph_state.nodes.append(
            schema.Node(
                target="torch.ops.aten.scalar_tensor.default",
                inputs=[
                    schema.NamedArgument(name="s", arg=schema.Argument.create(as_int=a),
                                         kind=schema.ArgumentKind.POSITIONAL),
                    schema.NamedArgument(
                        name="dtype",
                        arg=schema.Argument.create(as_scalar_type=schema.ScalarType.LONG),
                        kind=schema.ArgumentKind.KEYWORD,
                    ),
                ],
                outputs=[schema.Argument.create(as_tensor=schema.TensorArgument(name=name))],
                metadata={},
                name=name,
            )
        )
        out.append(schema.TensorArgument(name=name))
    return schema.Argument.create(as_tensors=out)


def _onnx_graph_node(self: Any, node: Any, inputs: list, graph_bytes: bytes) -> Any:
    """The ``fxonnx::onnx_graph`` node of a node with a custom translation: the ONNX it built."""
    from torch._export.serde import schema

    return schema.Node(
        name=node.name,
        target="torch.ops.fxonnx.onnx_graph.default",
        inputs=[
            schema.NamedArgument(
                name="inputs",
                arg=schema.Argument.create(as_tensors=[schema.TensorArgument(name=n.name) for n in inputs]),
                kind=schema.ArgumentKind.POSITIONAL,
            ),
            schema.NamedArgument(
                name="graph",
                arg=schema.Argument.create(as_string=graph_bytes.hex()),
                kind=schema.ArgumentKind.POSITIONAL,
            ),
        ],
        outputs=self.serialize_outputs(node),
        metadata=self.serialize_metadata(node),
    )


def program_json(exported: Any, custom: Callable[[Any], Any] | None = None) -> bytes:
    """``models/model.json``: what ``torch.export.save`` writes, from torch's graph-level
    serializer (no weights, no pickled example inputs). ``ExportedProgramSerializer.serialize``'s
    steps, without its canonical-form check (a deep copy of the whole program, most of its time,
    which rejects the forms above that Rust reads)."""
    from torch._export.serde import schema
    from torch._export.serde import serialize as S

    with S._enable_graph_inputs_of_type_nn_module(exported.example_inputs):
        exported.validate()
        graph_module = _graph_serializer(exported, custom).serialize(exported.graph_module)
        serialized = schema.ExportedProgram(
            graph_module=graph_module,
            opset_version={"aten": torch._C._get_max_operator_version()},
            range_constraints=S.serialize_range_constraints(exported.range_constraints),
            schema_version=schema.SchemaVersion(major=S.SCHEMA_VERSION[0], minor=S.SCHEMA_VERSION[1]),
            verifiers=[v.dialect for v in exported.verifiers],
            torch_version=torch.__version__,
            guards_code=exported._guards_code,
        )
    return _json(serialized)


def entries(exported: Any, custom: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """The archive entries of ``exported``: JSON as bytes, tensor storages as :class:`Storage`."""
    from torch._export.serde import schema

    out: dict[str, Any] = {"archive_format": b"pt2", "archive_version": b"0"}
    weights = _payloads(dict(exported.state_dict), "data/weights", "weight_", out)
    constants = _payloads(dict(exported.constants), "data/constants", "tensor_", out)
    out[f"data/weights/{MODEL}_weights_config.json"] = _json(schema.PayloadConfig(config=weights))
    out[f"data/constants/{MODEL}_constants_config.json"] = _json(schema.PayloadConfig(config=constants))
    out[f"models/{MODEL}.json"] = program_json(exported, custom)
    return out
