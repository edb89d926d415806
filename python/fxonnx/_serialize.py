"""An ExportedProgram as the entries of a ``.pt2`` archive, in memory, without writing one.

``torch.export.save`` pickles nothing for plain tensors but copies every weight into the zip it
writes (and fails on programs torch.onnx converts in memory). fxonnx hands Rust the archive's
entries instead: the program's schema JSON from torch's graph-level serializer (the same JSON
``torch.export.save`` writes as ``models/model.json``), the payload configs, and each tensor's
storage as a zero-copy buffer (its address and size, kept alive by the tensor's storage object).

Where torch's serializer has no form for something the program holds, fxonnx fills the gap while
it serializes (the serializer's classes are patched for the call, then restored):

- a ``while_loop`` carrying a Python int (``(0, x)``): the int is carried as a 0-d int64 tensor
  made by an ``aten.scalar_tensor`` node (ONNX loops carry tensors anyway);
- a SymBool user output (``x.shape[0] < n``): as ``as_sym_bool`` (torch's output specs lack it);
- ``torch.sym_sum``: serialized as the symbolic op it is (torch's list of them lacks it);
- ``torch.float4_e2m1fn_x2``: dtype number 45 (c10's), which fxonnx reads as ONNX FLOAT4E2M1;
- nodes with a custom translation (``custom_translation_table``): written as an
  ``fxonnx::onnx_graph`` node that carries the ONNX the translation built for it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from typing import Any, Callable

import torch

# fxonnx's number for torch.float4_e2m1fn_x2, which torch's schema has none for: c10's ScalarType.
FLOAT4_E2M1FN_X2 = 45
MODEL = "model"
_lock = threading.Lock()


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
    from torch._export.serde.serialize import serialize_tensor_meta

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


@contextlib.contextmanager
def _serializer_gaps(custom: Callable[[Any], Any] | None):
    """Patch torch's GraphModuleSerializer for what it cannot write (see the module docstring)."""
    from torch._export.serde import schema
    from torch._export.serde import serialize as S

    cls = S.GraphModuleSerializer
    saved_input = cls.serialize_input
    saved_call = cls.handle_call_function
    saved_spec = cls.serialize_argument_spec
    saved_canonicalize = S.canonicalize

    def canonicalize(*args, **kwargs):
        # torch calls it only to check that its canonical form is defined and drops the result;
        # it deep-copies the whole program (most of the serializer's time) and rejects the forms
        # above, which Rust reads. Not needed here.
        return None
    added_sym = torch.sym_sum not in S._SYM_OPS
    float4 = getattr(torch, "float4_e2m1fn_x2", None)
    added_dtype = float4 is not None and float4 not in S._TORCH_TO_SERIALIZE_DTYPE

    def serialize_input(self, arg, arg_type=None):
        if isinstance(arg, (list, tuple)) and len(arg) > 0:
            nodes = [a for a in arg if isinstance(a, torch.fx.Node)]
            ints = [a for a in arg if type(a) is int]
            if nodes and ints and len(nodes) + len(ints) == len(arg) and all(
                isinstance(n.meta.get("val"), torch.Tensor) for n in nodes
            ):
                # A loop carrying an int: carry it as a 0-d int64 tensor.
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
        return saved_input(self, arg, arg_type)

    def serialize_argument_spec(self, x):
        from torch.export import graph_signature as gs

        if isinstance(x, gs.SymBoolArgument):
            return schema.Argument.create(as_sym_bool=schema.SymBoolArgument.create(as_name=x.name))
        return saved_spec(self, x)

    def handle_call_function(self, node):
        if custom is not None and node.op == "call_function":
            replacement = custom(node)
            if replacement is not None:
                inputs, graph_bytes = replacement
                ex_node = schema.Node(
                    name=node.name,
                    target="torch.ops.fxonnx.onnx_graph.default",
                    inputs=[
                        schema.NamedArgument(
                            name="inputs",
                            arg=schema.Argument.create(
                                as_tensors=[schema.TensorArgument(name=n.name) for n in inputs]
                            ),
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
                self.graph_state.nodes.append(ex_node)
                return
        return saved_call(self, node)

    with _lock:
        cls.serialize_input = serialize_input
        cls.handle_call_function = handle_call_function
        cls.serialize_argument_spec = serialize_argument_spec
        S.canonicalize = canonicalize
        # Tensors of one shape and type share their serialized metadata (printing each SymInt
        # with sympy is most of the serializer's time); JSON writes each the same.
        saved_meta = S.serialize_tensor_meta
        metas: dict[tuple, Any] = {}

        def serialize_tensor_meta(t):
            def k(d):
                return d.node.expr if isinstance(d, torch.SymInt) else d

            key = (t.dtype, tuple(map(k, t.shape)), tuple(map(k, t.stride())), k(t.storage_offset()),
                   t.requires_grad, t.device, t.layout)
            found = metas.get(key)
            if found is None:
                found = metas[key] = saved_meta(t)
            return found

        S.serialize_tensor_meta = serialize_tensor_meta
        # Unions: the reserved-name check of each instance (the same for every instance of a
        # class) skipped, each class's empty fields computed once.
        from torch._export.serde import union as U

        saved_create = U._Union.__dict__["create"]
        saved_post_init = U._Union.__post_init__
        empty: dict[type, dict[str, None]] = {}

        def create(cls, **kwargs):
            blank = empty.get(cls)
            if blank is None:
                blank = empty[cls] = {f.name: None for f in dataclasses.fields(cls)}
            obj = cls(**{**blank, **kwargs})
            obj._type = U._UnionTag.create(next(iter(kwargs)), cls)
            return obj

        U._Union.create = classmethod(create)
        U._Union.__post_init__ = lambda self: None
        # The serializer prints each graph for a debug log whether or not the log is on.
        saved_print = torch.fx.GraphModule.print_readable
        torch.fx.GraphModule.print_readable = lambda self, *a, **k: ""
        if added_sym:
            S._SYM_OPS.add(torch.sym_sum)
        if added_dtype:
            S._TORCH_TO_SERIALIZE_DTYPE[float4] = FLOAT4_E2M1FN_X2
        try:
            yield
        finally:
            cls.serialize_input = saved_input
            cls.handle_call_function = saved_call
            cls.serialize_argument_spec = saved_spec
            S.canonicalize = saved_canonicalize
            torch.fx.GraphModule.print_readable = saved_print
            S.serialize_tensor_meta = saved_meta
            U._Union.create = saved_create
            U._Union.__post_init__ = saved_post_init
            if added_sym:
                S._SYM_OPS.discard(torch.sym_sum)
            if added_dtype:
                S._TORCH_TO_SERIALIZE_DTYPE.pop(float4, None)


def program_json(exported: Any, custom: Callable[[Any], Any] | None = None) -> bytes:
    """``models/model.json``: what ``torch.export.save`` writes, from torch's graph-level
    serializer (no weights, no pickled example inputs)."""
    from torch._export.serde import serialize as S

    with _serializer_gaps(custom), S._enable_graph_inputs_of_type_nn_module(exported.example_inputs):
        serialized = S.ExportedProgramSerializer().serialize(
            exported, serialize_state_dict=False, serialize_constants=False, serialize_example_inputs=False
        )
    return _json(serialized.exported_program)


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
