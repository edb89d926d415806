"""A port of the behaviours torch.onnx's own exporter tests check (torch 2.15's
test/onnx/exporter/test_small_models_e2e.py, test_api.py, test_dynamic_shapes.py and
test_hf_models_e2e.py), each test calling the exporter exactly as the torch.onnx test calls
``torch.onnx.export``, parametrized over ``torch.onnx.export`` and ``fxonnx.export``.

The ``torch.onnx`` parametrization says which behaviours torch.onnx itself passes (the yardstick);
it is marked ``torch_onnx`` so that CI can leave it out (``-m "not torch_onnx"``). Checks go
through torch's own ``assert_onnx_program``: the model in onnxruntime against the
``ExportedProgram`` in torch, and the capture strategy used.

Deliberate refusals are marked ``refused(reason)``: fxonnx fails them on purpose, and the test
checks that it fails with an error saying why.
"""

from __future__ import annotations

import io
import logging
import os
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")
pytest.importorskip("onnxruntime")
ir = pytest.importorskip("onnx_ir")

from onnxscript import BOOL, FLOAT, opset18 as op  # noqa: E402
from torch.onnx._internal.exporter import _testing as onnx_testing  # noqa: E402
from torch.utils import _pytree as torch_pytree  # noqa: E402

import fxonnx  # noqa: E402

EXPORTERS = {
    "torch_onnx": pytest.param(torch.onnx.export, id="torch_onnx", marks=pytest.mark.torch_onnx),
    "fxonnx": pytest.param(fxonnx.export, id="fxonnx"),
}


@pytest.fixture(params=list(EXPORTERS.values()))
def export_fn(request):
    return request.param


def is_fxonnx(export_fn):
    return export_fn is fxonnx.export


@pytest.fixture
def export(export_fn):
    """test_small_models_e2e.py's `_WithExport.export`."""

    def _export(model, args=(), kwargs=None, **options):
        if isinstance(model, torch.nn.Module):
            model = model.eval()
        onnx_program = export_fn(model, args, kwargs=kwargs, dynamo=True, verbose=False, **options)
        if onnx_program is None:
            raise AssertionError("Exported ONNX program is None")
        return onnx_program

    return _export


@pytest.fixture
def assert_export(export_fn):
    """test_api.py's `TestExportAPIDynamo.assert_export`."""

    def _assert_export(*args, strategy="TorchExportNonStrictStrategy", **kwargs):
        onnx_program = export_fn(*args, **kwargs, dynamo=True, verbose=False)
        assert onnx_program is not None
        onnx_testing.assert_onnx_program(onnx_program, strategy=strategy)
        return onnx_program

    return _assert_export


def op_types(onnx_program):
    return [node.op_type for node in onnx_program.model.graph]


# ---------------------------------------------------------------------------------------------
# test_small_models_e2e.py: DynamoExporterTest


def test_insert_contiguous_between_transpose_and_view(export):
    class Model(torch.nn.Module):
        def forward(self, query, key, value):
            res = torch.nn.functional.scaled_dot_product_attention(query, key, value)
            rest = res.transpose(0, 1)
            return rest.view(8, 32, 128 * 64)

    model = Model()
    query = torch.rand(32, 8, 128, 64, dtype=torch.float16)
    key = torch.rand(32, 8, 128, 64, dtype=torch.float16)
    value = torch.rand(32, 8, 128, 64, dtype=torch.float16)
    ep = torch.export.export(model, (query, key, value), strict=False)
    assert "call_method" not in str(ep.graph)
    onnx_program = export(model, (query, key, value))
    onnx_testing.assert_onnx_program(onnx_program, atol=1e-3, rtol=1)


def test_constant_complex(export):
    class MulModule(torch.nn.Module):
        def forward(self, x):
            y = 2 + 3j
            return torch.ops.aten.mul(x, y)

    x = torch.tensor([[1.0 + 2.0j, 3.0 + 4.0j], [5.0 + 6.0j, 7.0 + 8.0j]], dtype=torch.complex64)
    onnx_program = export(MulModule(), (x,))
    onnx_testing.assert_onnx_program(onnx_program)


def test_pow_does_not_trigger_type_promotion(export):
    class Model(torch.nn.Module):
        def forward(self, x):
            return x**2.0

    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float16)
    onnx_program = export(Model(), (x,))
    onnx_testing.assert_onnx_program(onnx_program)
    assert "Cast" not in op_types(onnx_program)


def test_onnx_export_conditional(export):
    class CondModel(torch.nn.Module):
        def forward(self, x):
            def true_fn(x):
                return x + 1.0

            def false_fn(x):
                return x - 42.0

            return torch.cond(x.sum() > 0, true_fn, false_fn, [x])

    onnx_program = export(CondModel(), (torch.tensor([1, 2]),))
    assert "If" in op_types(onnx_program)
    onnx_testing.assert_onnx_program(onnx_program)
    onnx_testing.assert_onnx_program(onnx_program, args=(torch.tensor([-1, -2]),))


def test_onnx_export_nested_conditional_and_nested_weights(export):
    class Submodule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.tensor([100.0]))

        def forward(self, x):
            def true_fn(x):
                return x * self.weight

            def false_fn(x):
                return x / self.weight

            return torch.cond(x.sum() <= 0, true_fn, false_fn, [x])

    class CondModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.submodule = Submodule()
            self.weight = torch.nn.Parameter(torch.tensor([42.0]))

        def forward(self, x):
            def true_fn(x):
                return self.submodule(x - self.weight)

            def false_fn(x):
                return x - self.weight

            return torch.cond(x.sum() > 0, true_fn, false_fn, [x])

    onnx_program = export(CondModel(), (torch.tensor([1, 2]),))
    onnx_testing.assert_onnx_program(onnx_program)
    onnx_testing.assert_onnx_program(onnx_program, args=(torch.tensor([0, 0]),))
    onnx_testing.assert_onnx_program(onnx_program, args=(torch.tensor([43, 43]),))


def test_onnx_export_conditional_multi_outputs(export):
    class CondModel(torch.nn.Module):
        def forward(self, x):
            z = torch.ones_like(x)

            def true_fn(x, z):
                x = x + 1.0
                z = z * 1.0
                return x, z

            def false_fn(x, z):
                x = x - 1.0
                z = z * 0.0
                return x, z

            x = torch.cond(x.sum() > 0, true_fn, false_fn, (x, z))
            return x, z

    onnx_program = export(CondModel(), (torch.tensor([1, 2]),))
    onnx_testing.assert_onnx_program(onnx_program)
    onnx_testing.assert_onnx_program(onnx_program, args=(torch.tensor([-1, -2]),))


def test_onnx_export_while_loop_nested(export):
    class Nested(torch.nn.Module):
        def forward(self, ci, cj, a, b):
            def cond_fn(i1, j1, x1, y1):
                return i1 > 0

            def body_fn(i1, j1, x1, y1):
                def cond_fn_nested(i2, j2, x2, y2):
                    return j2 > 0

                def body_fn_nested(i2, j2, x2, y2):
                    return i2.clone(), j2 - 1, x2 + 3.14, y2 - 2.71

                i1, j1, x1, y1 = torch.ops.higher_order.while_loop(
                    cond_fn_nested, body_fn_nested, [i1, j1, x1, y1], []
                )
                return i1 - 1, j1.clone(), x1 * 2, y1 / 2

            return torch.ops.higher_order.while_loop(cond_fn, body_fn, [ci, cj, a, b], [])

    onnx_program = export(Nested(), (torch.tensor(2), torch.tensor(3), torch.tensor(1.0), torch.tensor(2.0)))
    onnx_testing.assert_onnx_program(onnx_program)


class IntCarry(torch.nn.Module):
    def forward(self, x):
        def cond_fn(it, x):
            return it < x.shape[0]

        def body_fn(it, x):
            x_clone = x.clone()
            torch._check(it >= 0)
            torch._check(it < x.shape[0])
            x_clone.select(0, it).copy_(x_clone.select(0, it) + it)
            return it + 1, x_clone

        out_it, out_x = torch.ops.higher_order.while_loop(cond_fn, body_fn, (0, x), tuple())
        torch._check(out_it > 0)
        return (out_it + 1, out_it + out_x, out_it < x.shape[0], torch.ones(out_it * 2))


def test_onnx_export_while_loop_int_carry(export):
    onnx_program = export(IntCarry(), (torch.tensor([10.0, 20.0, 30.0]),))
    onnx_testing.assert_onnx_program(onnx_program)


def test_empty(export):
    class EmptyModel(torch.nn.Module):
        def forward(self, x):
            return torch.empty(x.size(), dtype=torch.int64)

    _ = export(EmptyModel(), (torch.randn(1, 2),))


def test_multiple_outputs_op_with_evaluator(export):
    class TopKModel(torch.nn.Module):
        def forward(self, x):
            values, _ = torch.topk(x, 3)
            return torch.sum(values)

    onnx_program = export(TopKModel(), (torch.arange(1.0, 6.0, requires_grad=True),))
    onnx_testing.assert_onnx_program(onnx_program)


def test_exported_program_torch_distributions_normal_Normal(export):
    class Model(torch.nn.Module):
        def __init__(self) -> None:
            self.normal = torch.distributions.normal.Normal(0, 1)
            super().__init__()

        def forward(self, x):
            return self.normal.sample(x.shape)

    with torch.no_grad():
        exported_program = torch.export.export(Model(), args=(torch.randn(2),), strict=False)
        _ = export(exported_program)


@pytest.mark.parametrize(
    "float8_type, onnx_type",
    [
        pytest.param(torch.float8_e5m2, ir.DataType.FLOAT8E5M2, id="torch_float8_e5m2"),
        pytest.param(torch.float8_e5m2fnuz, ir.DataType.FLOAT8E5M2FNUZ, id="torch_float8_e5m2fnuz"),
        pytest.param(torch.float8_e4m3fn, ir.DataType.FLOAT8E4M3FN, id="torch_float8_e4m3fn"),
        pytest.param(torch.float8_e4m3fnuz, ir.DataType.FLOAT8E4M3FNUZ, id="torch_float8_e4m3fnuz"),
    ],
)
def test_float8_support(export, float8_type, onnx_type):
    class Float8Module(torch.nn.Module):
        def forward(self, input: torch.Tensor):
            return input.to(float8_type)

    onnx_program = export(Float8Module(), (torch.randn(1, 2),))
    assert onnx_program.model.graph.outputs[0].dtype == onnx_type


def test_float4_support(export):
    class Float4Module(torch.nn.Module):
        def forward(self):
            return torch.empty([1], dtype=torch.float4_e2m1fn_x2)

    onnx_program = export(Float4Module(), optimize=False)
    output = onnx_program.model.graph.outputs[0]
    assert output.dtype == ir.DataType.FLOAT4E2M1
    # ONNX stores the shape of the unpacked tensor: [*shape[:-1], shape[-1] * 2].
    assert output.shape.numpy() == (2,) or list(output.shape.numpy()) == [2]


def test_bfloat16_support(export):
    class BfloatModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = torch.nn.Parameter(torch.tensor(2.0, dtype=torch.bfloat16))

        def forward(self, x):
            const = torch.tensor(1.0, dtype=torch.bfloat16)
            return x * const * self.param

    input = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
    onnx_program = export(BfloatModel(), (input,), optimize=False)
    initializers = onnx_program.model.graph.initializers.values()
    assert len(initializers) == 2
    for initializer in initializers:
        assert initializer.dtype == ir.DataType.BFLOAT16
    assert onnx_program.model.graph.inputs[0].dtype == ir.DataType.BFLOAT16
    assert onnx_program.model.graph.outputs[0].dtype == ir.DataType.BFLOAT16


def test_export_with_logging_logger(export):
    logger = logging.getLogger(__name__)

    class LoggingLoggerModule(torch.nn.Module):
        def forward(self, x):
            logger.info("abc")
            return x + 1

    onnx_program = export(LoggingLoggerModule(), (torch.tensor(1),))
    onnx_testing.assert_onnx_program(onnx_program)


def test_export_with_hf_logging_logger(export):
    transformers = pytest.importorskip("transformers")
    logger = transformers.utils.logging.get_logger(__name__)

    class HFLoggingLoggerModule(torch.nn.Module):
        def forward(self, x):
            logger.warning_once("abc")
            return x + 1

    onnx_program = export(HFLoggingLoggerModule(), (torch.tensor(1),))
    onnx_testing.assert_onnx_program(onnx_program)


def test_export_with_print(export):
    class PrintModule(torch.nn.Module):
        def forward(self, x):
            print("abc")
            return x + 1

    onnx_program = export(PrintModule(), (torch.tensor(1),))
    onnx_testing.assert_onnx_program(onnx_program)


def test_export_with_dynamic_input(export):
    class Model(torch.nn.Module):
        def forward(self, x):
            return x + 1.0

    dim0 = torch.export.Dim("dim0")
    onnx_program = export(Model(), (torch.randn(2, 3, 4, dtype=torch.float),), dynamic_shapes=({0: dim0},))
    onnx_testing.assert_onnx_program(onnx_program, args=(torch.randn(3, 3, 4, dtype=torch.float),))


def test_export_with_specialized_input_during_tracing(export):
    class Model(torch.nn.Module):
        def forward(self, x, y):
            return x + y

    dim0_x = torch.export.Dim("dim0_x", min=6)
    dynamic_shapes = {"x": {0: dim0_x}, "y": torch.export.Dim.STATIC}
    onnx_program = export(Model(), (torch.ones(7, 5), 5), dynamic_shapes=dynamic_shapes)
    onnx_testing.assert_onnx_program(onnx_program, args=(torch.ones(8, 5), 5))


def test_export_with_none_arg_name_in_dynamic(export):
    class Model(torch.nn.Module):
        def forward(self, a, b):
            return a.sum() + b.sum()

    dim = torch.export.Dim("dim")
    onnx_program = export(Model(), (torch.randn(4, 4), torch.randn(4, 4)), dynamic_shapes=(None, {0: dim}))
    onnx_testing.assert_onnx_program(onnx_program, args=(torch.randn(4, 4), torch.randn(7, 4)))


def test_export_with_non_arg_name_with_kwarg(export):
    class Model(torch.nn.Module):
        def forward(self, a, b, kw1, kw2):
            return a.sum() + b.sum() + kw1.sum() - kw2.sum()

    dim = torch.export.Dim("dim")
    dim_for_kw1 = torch.export.Dim("dim_for_kw1")
    onnx_program = export(
        Model(),
        (torch.randn(4, 4), torch.randn(4, 4)),
        {"kw2": torch.ones(4, 4), "kw1": torch.zeros(4, 4)},
        dynamic_shapes=(None, {0: dim}, {0: dim_for_kw1}, None),
    )
    onnx_testing.assert_onnx_program(
        onnx_program,
        args=(torch.randn(4, 4), torch.randn(7, 4)),
        kwargs={"kw2": torch.ones(4, 4), "kw1": torch.zeros(9, 4)},
    )


def test_export_with_input_lifting_buffers_mutation(export):
    for persistent in (True, False):

        class CustomModule(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.register_buffer("my_buffer", torch.tensor(4.0), persistent=persistent)

            def forward(self, x, b):
                output = x + b
                (self.my_buffer.add_(1.0) + 3.0)
                return output

        dim = torch.export.Dim("dim")
        onnx_program = export(
            CustomModule(),
            (torch.rand((3, 3), dtype=torch.float32), torch.randn(3, 3)),
            dynamic_shapes=({0: dim}, {0: dim}),
        )
        onnx_testing.assert_onnx_program(
            onnx_program, args=(torch.rand((4, 3), dtype=torch.float32), torch.randn(4, 3))
        )


def test_export_with_non_arg_name_with_container_type(export):
    class Model(torch.nn.Module):
        def forward(self, a, b):
            return a[0].sum() + a[1].sum() + b.sum()

    count = 0

    def dynamify_inp(x):
        nonlocal count
        if count == 1:
            dim = torch.export.Dim("dim", min=3)
            count += 1
            return {0: dim}
        count += 1
        return None

    dynamic_shapes = torch_pytree.tree_map(
        dynamify_inp, ((torch.randn(4, 4), torch.randn(4, 4)), torch.randn(4, 4))
    )
    onnx_program = export(
        Model(), ((torch.randn(4, 4), torch.randn(4, 4)), torch.randn(4, 4)), dynamic_shapes=dynamic_shapes
    )
    onnx_testing.assert_onnx_program(
        onnx_program, args=((torch.randn(4, 4), torch.randn(6, 4)), torch.randn(4, 4))
    )


def test_export_with_lazy_module_kwargs(export):
    class LazyModule(torch.nn.modules.lazy.LazyModuleMixin, torch.nn.Module):
        def initialize_parameters(self, *args, **kwargs):
            pass

        def forward(self, x, y):
            return x + y

    m = LazyModule()
    dim = torch.export.Dim("dim")
    dynamic_shapes = ({0: dim}, {0: dim})
    onnx_program = export(m, (), {"x": torch.randn(3, 3), "y": torch.randn(3, 3)}, dynamic_shapes=dynamic_shapes)
    onnx_testing.assert_onnx_program(onnx_program, kwargs={"x": torch.randn(6, 3), "y": torch.randn(6, 3)})


def test_export_of_rename_dynamic_axes_required_model_with_mixed_type_of_dynamic_shapes(export):
    class NestedModel(torch.nn.Module):
        def forward(self, x: torch.Tensor, ys: list[torch.Tensor], zs: dict[str, torch.Tensor], c: torch.Tensor):
            y = ys[0] + ys[1] + zs["a"] + zs["b"]
            w = 5
            if x.shape[0] < 3 and c.shape[0] != 4:
                return x + w, x + y, c
            else:
                return x - w, x - y, c

    input = (torch.ones(5), [torch.zeros(5), torch.ones(5)], {"a": torch.zeros(5), "b": torch.ones(5)}, torch.ones(6))
    dynamic_shapes = (
        {0: torch.export.Dim("dim_x", min=3)},
        [("custom_name_axis_ys_0",), (torch.export.Dim.AUTO,)],
        {"a": {0: torch.export.Dim.AUTO}, "b": ("custom_name_axis_zs_b_0",)},
        {0: "custom_name_axis_c_0"},
    )
    with pytest.warns(
        UserWarning,
        match="# The axis name: .* will not be used, since it shares the same shape constraints with another axis: .*.",
    ):
        onnx_program = export(NestedModel(), input, dynamic_shapes=dynamic_shapes, optimize=False)
    input = (torch.ones(4), [torch.zeros(4), torch.ones(4)], {"a": torch.zeros(4), "b": torch.ones(4)}, torch.ones(5))
    onnx_testing.assert_onnx_program(onnx_program, args=input)
    expected_axis_names = ["dim_x", "dim_x", "dim_x", "dim_x", "dim_x", "custom_name_axis_c_0"]
    for expected_axis_name, graph_input in zip(expected_axis_names, onnx_program.model.graph.inputs):
        assert graph_input.shape[0].value == expected_axis_name


def test_export_of_static_dim_constraints(export):
    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.l = torch.nn.Linear(6, 4)

        def forward(self, x, y, z):
            x0 = self.l(x) + y[1:]
            return x0, z * 2.0

    inputs = (torch.randn(4, 6), torch.randn(5, 4), torch.randn(3, 3))
    dx = torch.export.Dim("dx", min=3, max=6)
    dy = dx + 1
    dz = torch.export.Dim("dz", min=3, max=6)
    dynamic_shapes = (
        {0: dx, 1: torch.export.Dim.AUTO},
        {0: dy, 1: torch.export.Dim.STATIC},
        {0: dz, 1: 3},
    )
    onnx_program = export(Model(), inputs, dynamic_shapes=dynamic_shapes)
    onnx_testing.assert_onnx_program(onnx_program)
    assert onnx_program.model.graph.inputs[0].shape[0] == "dx"


def _sym_model_test(export, model, inputs, op_type):
    dynamic_shapes = ({0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC},)
    onnx_program = export(model, inputs, dynamic_shapes=dynamic_shapes)
    onnx_testing.assert_onnx_program(onnx_program)
    assert op_type in op_types(onnx_program)


def test_export_sym_max(export):
    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.sym_max(*x.shape)

    _sym_model_test(export, Model(), (torch.zeros((2, 3)),), "Max")


def test_export_sym_min(export):
    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.sym_min(*x.shape)

    _sym_model_test(export, Model(), (torch.zeros((2, 3)),), "Min")


def test_export_sym_not(export):
    class SymNotModel(torch.nn.Module):
        def forward(self, x):
            comparison = x.shape[0] == x.shape[1]
            return torch.sym_not(comparison)

    _sym_model_test(export, SymNotModel(), (torch.zeros((2, 2)),), "Not")


def test_export_sym_float(export):
    class SymFloatModel(torch.nn.Module):
        def forward(self, x):
            a = x.shape[0]
            return torch.sym_float(a)

    _sym_model_test(export, SymFloatModel(), (torch.zeros((2, 2)),), "Cast")


def test_export_sym_sum(export):
    class SymSumModel(torch.nn.Module):
        def forward(self, x):
            return torch.sym_sum(x.shape)

    _sym_model_test(export, SymSumModel(), (torch.zeros((2, 3, 4)),), "Add")


def test_export_sym_ite(export):
    class SymIteModel(torch.nn.Module):
        def forward(self, x):
            condition = x.shape[0] > x.shape[1]
            return torch.sym_ite(condition, x.shape[0], x.shape[1])

    _sym_model_test(export, SymIteModel(), (torch.zeros((3, 2)),), "Where")


def test_scan_cdist_add(export):
    def dist(unused: torch.Tensor, x: torch.Tensor, samex: torch.Tensor):
        sub = samex - x.reshape((1, -1))
        sq = sub * sub
        rd = torch.sqrt(sq.sum(axis=1))
        return [unused.clone(), rd]

    class ScanModel(torch.nn.Module):
        def forward(self, x):
            z = torch.tensor([0], dtype=torch.float32)
            y = x.clone()
            out = torch.ops.higher_order.scan(dist, [z], [x], additional_inputs=[y])
            return out[1]

    inputs = (torch.tensor([[1, 2, 3, -1], [4, 5, 6, -1], [7, 8, 9, -1]], dtype=torch.float32),)
    onnx_program = export(ScanModel(), inputs)
    onnx_testing.assert_onnx_program(onnx_program)


def test_scan_cdist_dynamic_shapes(export):
    def dist(y: torch.Tensor, scanned_x: torch.Tensor):
        sub = y - scanned_x.reshape((1, -1))
        sq = sub * sub
        rd = torch.sqrt(sq.sum(axis=1))
        return [y.clone(), rd]

    class ScanModel(torch.nn.Module):
        def forward(self, x, y):
            carry, out = torch.ops.higher_order.scan(dist, [y], [x], additional_inputs=[])
            return out

    x_rows = torch.export.Dim("x_rows")
    y_rows = torch.export.Dim("y_rows")
    dim = torch.export.Dim("dim")
    inputs = (torch.randn(3, 4), torch.randn(5, 4))
    onnx_program = export(ScanModel(), inputs, dynamic_shapes=({0: x_rows, 1: dim}, {0: y_rows, 1: dim}))
    onnx_testing.assert_onnx_program(onnx_program)


def test_complex_initializer(export):
    class ComplexInitModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.buffer = torch.nn.parameter.Buffer(
                torch.complex(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0]))
            )
            self.weight = torch.nn.Parameter(
                torch.complex(torch.tensor([7.0, 8.0, 9.0]), torch.tensor([10.0, 11.0, 12.0]))
            )

        def forward(self, x):
            constant = torch.complex(torch.tensor([11.0, 12.0, 13.0]), torch.tensor([14.0, 15.0, 16.0]))
            return (x + constant + self.buffer) * self.weight

    x = torch.complex(torch.tensor([10.0, 20.0, 30.0]), torch.tensor([40.0, 50.0, 60.0]))
    onnx_program = export(ComplexInitModel(), (x,))
    onnx_testing.assert_onnx_program(onnx_program)


# DynamoExporterNewOpsetsTest


def test_group_norm_opset_21(export):
    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.group_norm(x, 4)

    x = torch.randn(1, 4, 4, 4, dtype=torch.float32)
    onnx_program = export(Model(), (x,), opset_version=21)
    assert "GroupNormalization" in op_types(onnx_program)


def test_attention_opset_23(export):
    class Model(torch.nn.Module):
        def forward(self, query, key, value):
            return torch.nn.functional.scaled_dot_product_attention(query, key, value)

    query = torch.rand(32, 8, 128, 64, dtype=torch.float16)
    key = torch.rand(32, 8, 128, 64, dtype=torch.float16)
    value = torch.rand(32, 8, 128, 64, dtype=torch.float16)
    onnx_program = export(Model(), (query, key, value), opset_version=23)
    assert op_types(onnx_program) == ["Attention"]
    onnx_testing.assert_onnx_program(onnx_program, atol=1e-2, rtol=1)


def test_rms_norm(export):
    class RMSNormModel(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.rms_norm(x, [3])

    onnx_program = export(RMSNormModel(), (torch.randn(2, 5, 3),), opset_version=23)
    onnx_testing.assert_onnx_program(onnx_program)

    class RMSNormModel2D(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.rms_norm(x, [7, 3])

    onnx_program = export(RMSNormModel2D(), (torch.randn(2, 5, 7, 3),), opset_version=23)
    onnx_testing.assert_onnx_program(onnx_program)


def test_rms_norm_with_weight(export):
    class RMSNormWithWeight(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(3))

        def forward(self, x):
            return torch.nn.functional.rms_norm(x, [3], weight=self.weight)

    onnx_program = export(RMSNormWithWeight(), (torch.randn(2, 5, 3),), opset_version=23)
    onnx_testing.assert_onnx_program(onnx_program)


def test_rms_norm_with_eps(export):
    class RMSNormWithEps(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.rms_norm(x, [3], eps=1e-5)

    onnx_program = export(RMSNormWithEps(), (torch.randn(2, 5, 3),), opset_version=23)
    onnx_testing.assert_onnx_program(onnx_program)


def test_enable_gqa_in_attention_23_with_dropout(export_fn, export):
    class Model(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True, dropout_p=0.1)

    args = (torch.randn(2, 4, 8, 16), torch.randn(2, 2, 8, 16), torch.randn(2, 2, 8, 16))
    if is_fxonnx(export_fn):
        # Deliberate refusal: attention with dropout in an exported model is random at inference;
        # fxonnx refuses it naming the node instead of emitting a random model.
        with pytest.raises(fxonnx.ExportError, match="dropout"):
            export(Model(), args, opset_version=23)
        return
    onnx_program = export(Model(), args, opset_version=23)
    all_ops = op_types(onnx_program)
    assert "Unsqueeze" in all_ops and "Expand" in all_ops and "Reshape" in all_ops


def test_onnx_export_invoke_subgraph(export):
    class InvokeSubgraphModel(torch.nn.Module):
        def forward(self, x, y):
            def inner_fn(a, b):
                return torch.mul(a, b) + a

            return torch.compiler.nested_compile_region(inner_fn)(x, y)

    x = torch.randn(8)
    y = torch.randn(8)
    onnx_program = export(InvokeSubgraphModel(), (x, y), optimize=False)
    onnx_testing.assert_onnx_program(onnx_program, args=(x, y))


# ---------------------------------------------------------------------------------------------
# test_api.py: TestExportAPIDynamo


class SampleModel(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        z = y.relu()
        return (y, z)


class SampleModelTwoInputs(torch.nn.Module):
    def forward(self, x, b):
        y = x + b
        z = y.relu()
        return (y, z)


class SampleModelReduction(torch.nn.Module):
    def forward(self, x):
        return x.sum()


class SampleModelForDynamicShapes(torch.nn.Module):
    def forward(self, x, b):
        return x.relu(), b.sigmoid()


class NestedModelForDynamicShapes(torch.nn.Module):
    def forward(self, x: torch.Tensor, ys: list[torch.Tensor], zs: dict[str, torch.Tensor], c: torch.Tensor):
        y = ys[0] + ys[1] + zs["a"] + zs["b"]
        w = 5
        if x.shape[0] < 3 and c.shape[0] != 4:
            return x + w, x + y, c
        else:
            return x - w, x - y, c


class SampleModelForDimOne(torch.nn.Module):
    def forward(self, x, y, z):
        return torch.cat((x, y), axis=1) + z


def test_args_normalization_with_no_kwargs(assert_export):
    assert_export(SampleModelTwoInputs(), (torch.randn(1, 1, 2), torch.randn(1, 1, 2)))


def test_lower_opset_support(assert_export):
    onnx_program = assert_export(SampleModelReduction(), (torch.randn(1, 1, 2),), opset_version=18)
    assert onnx_program.model.opset_imports[""] == 18
    onnx_program = assert_export(SampleModelReduction(), (torch.randn(1, 1, 2),), opset_version=16)
    assert onnx_program.model.opset_imports[""] == 16


def test_symbolic_argument_user_input_is_supported_by_report_and_call(assert_export, tmp_path):
    class constant_plus_tensor_inputs(torch.nn.Module):
        def forward(self, a, x):
            return a + torch.tensor(1) + x

    log_capture = io.StringIO()
    log_handler = logging.StreamHandler(log_capture)
    log_handler.setLevel(logging.ERROR)
    logger = logging.getLogger("torch.onnx._internal.exporter._core")
    original_level = logger.level
    logger.addHandler(log_handler)
    logger.setLevel(logging.ERROR)
    try:
        assert_export(
            constant_plus_tensor_inputs(),
            (1, torch.ones(2)),
            dynamic_shapes=(torch.export.Dim.DYNAMIC, {0: torch.export.Dim.DYNAMIC}),
            report=True,
            artifacts_dir=tmp_path,
        )
        log_output = log_capture.getvalue()
        assert "Failed to save report due to an error" not in log_output
        assert "KeyError: 'tensor_meta'" not in log_output
    finally:
        logger.removeHandler(log_handler)
        logger.setLevel(original_level)


def test_constant_argument_user_input_is_omitted_in_onnx_graph(export_fn):
    class constant_plus_tensor_inputs(torch.nn.Module):
        def forward(self, a, x):
            return a + torch.tensor(1) + x

    onnx_program = export_fn(
        constant_plus_tensor_inputs(),
        (1, torch.ones(2)),
        dynamic_shapes=(None, {0: torch.export.Dim.DYNAMIC}),
        dynamo=True,
    )
    assert len(onnx_program.model.graph.inputs) == 1


def test_dynamic_axes_enable_dynamic_shapes_with_fully_specified_axes(assert_export):
    assert_export(
        SampleModelForDynamicShapes(),
        (torch.randn(2, 2, 3), {"b": torch.randn(2, 2, 3)}),
        dynamic_axes={
            "x": {0: "customx_dim_0", 1: "customx_dim_1", 2: "customx_dim_2"},
            "b": {0: "customb_dim_0", 1: "customb_dim_1", 2: "customb_dim_2"},
        },
    )


def test_dynamic_axes_enable_dynamic_shapes_with_default_axe_names(assert_export):
    assert_export(
        SampleModelForDynamicShapes(),
        (torch.randn(2, 2, 3), {"b": torch.randn(2, 2, 3)}),
        dynamic_axes={"x": [0, 1, 2], "b": [0, 1, 2]},
    )


def test_dynamic_axes_supports_partial_dynamic_shapes(assert_export):
    assert_export(
        SampleModelForDynamicShapes(),
        (torch.randn(2, 2, 3), {"b": torch.randn(2, 2, 3)}),
        input_names=["x", "b"],
        dynamic_axes={"b": [0, 1, 2]},
    )


def test_dynamic_axes_supports_output_names(assert_export):
    assert_export(
        SampleModelForDynamicShapes(),
        (torch.randn(2, 2, 3), {"b": torch.randn(2, 2, 3)}),
        input_names=["x", "b"],
        dynamic_axes={"b": [0, 1, 2]},
    )
    assert_export(
        SampleModelForDynamicShapes(),
        (torch.randn(2, 2, 3), torch.randn(2, 2, 3)),
        input_names=["x", "b"],
        output_names=["x_out", "b_out"],
        dynamic_axes={"b": [0, 1, 2], "b_out": [0, 1, 2]},
    )


def test_from_dynamic_axes_to_dynamic_shapes_deprecation_warning(assert_export):
    with pytest.warns(
        DeprecationWarning,
        match="from_dynamic_axes_to_dynamic_shapes is deprecated and will be removed in a future release. "
        "This function converts 'dynamic_axes' format \\(including custom axis names\\) to 'dynamic_shapes' format. "
        "Instead of relying on this conversion, provide 'dynamic_shapes' directly with custom names.",
    ):
        assert_export(
            SampleModelForDynamicShapes(),
            (torch.randn(2, 2, 3), {"b": torch.randn(2, 2, 3)}),
            dynamic_axes={"x": [0, 1, 2], "b": [0, 1, 2]},
        )


def test_from_dynamic_axes_to_dynamic_shapes_keeps_custom_axis_names(export_fn):
    model = SampleModelForDynamicShapes()
    input = (torch.randn(2, 2, 3), {"b": torch.randn(2, 2, 3)})
    dynamic_axes = {
        "x": {0: "customx_x_0", 1: "customx_x_1", 2: "customx_x_2"},
        "b": {0: "customb_b_0", 1: "customb_b_1", 2: "customb_b_2"},
        "x_out": {0: "customx_out_x_0", 1: "customx_out_x_1", 2: "customx_out_x_2"},
        "b_out": {0: "customb_out_b_0", 1: "customb_out_b_1", 2: "customb_out_b_2"},
    }
    onnx_program = export_fn(
        model, input, dynamic_axes=dynamic_axes, input_names=["x", "b"], output_names=["x_out", "b_out"], dynamo=True
    )
    shapes = [[d.value for d in i.shape] for i in onnx_program.model.graph.inputs]
    assert shapes == [["customx_x_0", "customx_x_1", "customx_x_2"], ["customb_b_0", "customb_b_1", "customb_b_2"]]


def test_saved_f_exists_after_export(export_fn, tmp_path):
    path = str(tmp_path / "model.onnx")
    _ = export_fn(SampleModel(), (torch.randn(1, 1, 2),), path, dynamo=True)
    assert os.path.exists(path)


def test_dynamic_shapes_with_fully_specified_axes(assert_export):
    ep = torch.export.export(
        SampleModelForDynamicShapes(),
        (torch.randn(2, 2, 3), torch.randn(2, 2, 3)),
        dynamic_shapes={
            "x": {
                0: torch.export.Dim("customx_dim_0"),
                1: torch.export.Dim("customx_dim_1"),
                2: torch.export.Dim("customx_dim_2"),
            },
            "b": {
                0: torch.export.Dim("customb_dim_0"),
                1: torch.export.Dim("customb_dim_1"),
                2: torch.export.Dim("customb_dim_2"),
            },
        },
        strict=True,
    )
    assert_export(ep, strategy=None)


def test_partial_dynamic_shapes(assert_export):
    assert_export(
        SampleModelForDynamicShapes(),
        (torch.randn(2, 2, 3), torch.randn(2, 2, 3)),
        dynamic_shapes={
            "x": None,
            "b": {
                0: torch.export.Dim("customb_dim_0"),
                1: torch.export.Dim("customb_dim_1"),
                2: torch.export.Dim("customb_dim_2"),
            },
        },
    )


def test_dynamic_shapes_supports_nested_input_model_with_input_names_assigned(export_fn, assert_export):
    input_names = ["input_x", "input_y", "input_z", "d", "e", "f"]
    dynamic_axes = {
        "input_x": {0: "dim"},
        "input_y": {0: "dim"},
        "input_z": {0: "dim"},
        "d": {0: "dim"},
        "e": {0: "dim"},
    }
    model = NestedModelForDynamicShapes()
    input = (torch.ones(5), [torch.zeros(5), torch.ones(5)], {"a": torch.zeros(5), "b": torch.ones(5)}, torch.ones(4))
    assert_export(model, input, dynamic_axes=dynamic_axes, input_names=input_names)
    onnx_program = export_fn(model, input, dynamic_axes=dynamic_axes, input_names=input_names, dynamo=True)
    assert all([i.type.tensor_type.shape.dim[0].dim_param for i in onnx_program.model_proto.graph.input][:-1])


def test_upgraded_torchlib_impl(export_fn):
    class GeluModel(torch.nn.Module):
        def forward(self, input):
            return torch.nn.functional.gelu(input, approximate="tanh")

    input = (torch.randn(1, 3, 4, 4),)
    onnx_program_op18 = export_fn(GeluModel(), input, opset_version=18, dynamo=True)
    all_nodes_op18 = op_types(onnx_program_op18)
    assert "Tanh" in all_nodes_op18
    assert "Gelu" not in all_nodes_op18
    onnx_program_op20 = export_fn(GeluModel(), input, opset_version=20, dynamo=True)
    assert "Gelu" in op_types(onnx_program_op20)


def test_refine_dynamic_shapes_with_onnx_export(assert_export):
    class TestRefineDynamicShapeModel(torch.nn.Module):
        def forward(self, x, y):
            if x.shape[0] >= 6 and y.shape[0] <= 16:
                return x * 2.0, y + 1

    inps = (torch.randn(16), torch.randn(12))
    dynamic_shapes = {"x": (torch.export.Dim("dx"),), "y": (torch.export.Dim("dy"),)}
    assert_export(TestRefineDynamicShapeModel(), inps, dynamic_shapes=dynamic_shapes)


def test_zero_output_aten_node(assert_export):
    class Model(torch.nn.Module):
        def forward(self, x):
            torch.ops.aten._assert_async.msg(torch.tensor(True), "assertion failed")
            return x + x

    input = torch.randn(2)
    assert_export(Model(), (input))


def test_export_successful_when_dynamic_dimension_is_one(assert_export):
    assert_export(
        SampleModelForDimOne(),
        (torch.randn(1, 3), torch.randn(1, 5), torch.randn(1, 8)),
        dynamic_shapes=(
            {0: "batch", 1: "sequence"},
            {0: "batch", 1: "sequence"},
            {0: "batch", 1: "sequence"},
        ),
    )


def test_is_in_onnx_export(export_fn):
    class Mod(torch.nn.Module):
        def forward(self, x):
            def f(x):
                return x.sin() if torch.onnx.is_in_onnx_export() else x.cos()

            return f(x)

    assert not torch.onnx.is_in_onnx_export()
    onnx_program = export_fn(Mod(), (torch.randn(3, 4),), dynamo=True)
    assert not torch.onnx.is_in_onnx_export()
    assert "Sin" in op_types(onnx_program)


def test_torchscript_exporter_raises_deprecation_warning(export_fn):
    if is_fxonnx(export_fn):
        # Deliberate difference: fxonnx's dynamo=False is its own TorchScript front end (issue 39),
        # not a deprecated path: it exports, without the warning.
        buffer = io.BytesIO()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            export_fn(SampleModel(), (torch.randn(1, 1, 2),), buffer, dynamo=False)
        assert not [w for w in caught if "legacy TorchScript" in str(w.message)]
        assert ir.from_proto(__import__("onnx").load_from_string(buffer.getvalue())).graph.num_nodes() > 0
        return
    with pytest.warns(DeprecationWarning, match="You are using the legacy TorchScript-based ONNX export"):
        export_fn(SampleModel(), (torch.randn(1, 1, 2),), io.BytesIO(), dynamo=False)


def test_model_output_can_be_none(export_fn):
    class ModelWithNoneOutput(torch.nn.Module):
        def forward(self, x):
            return x + 1, None

    onnx_program = export_fn(ModelWithNoneOutput(), (torch.randn(1, 1, 2),), dynamo=True)
    onnx_testing.assert_onnx_program(onnx_program)


# test_api.py: TestCustomTranslationTable


def test_custom_translation_table_overrides_ops(export_fn):
    from onnxscript import opset18 as op

    class Model(torch.nn.Module):
        def forward(self, x, y):
            return x + y

    def custom_add(self, other):
        return op.Sub(self, other)

    custom_translation_table = {torch.ops.aten.add.Tensor: custom_add}
    onnx_program = export_fn(
        Model(), (torch.randn(2, 2), torch.randn(2, 2)), custom_translation_table=custom_translation_table, dynamo=True
    )
    all_nodes = op_types(onnx_program)
    assert "Sub" in all_nodes
    assert "Add" not in all_nodes


def test_custom_translation_table_supports_overloading_ops(export_fn):
    """From torch.onnx's test_api.py of 2.6 to 2.8: a list of functions dispatched on the input
    types. torch.onnx 2.15 rejects a list (TypeError); fxonnx dispatches it."""

    class Model(torch.nn.Module):
        def forward(self, x, y):
            return torch.ops.aten.logical_and.default(x, y)

    def custom_add_bool(self: BOOL, other: BOOL) -> BOOL:
        return op.Sub(self, other)

    def custom_add(self: FLOAT, other: FLOAT) -> FLOAT:
        return op.Mul(self, other)

    custom_translation_table = {torch.ops.aten.logical_and.default: [custom_add, custom_add_bool]}
    onnx_program = export_fn(
        Model(),
        (torch.tensor(1, dtype=torch.bool), torch.tensor(1, dtype=torch.bool)),
        custom_translation_table=custom_translation_table,
        dynamo=True,
    )
    all_nodes = op_types(onnx_program)
    assert "Sub" in all_nodes
    assert "Add" not in all_nodes
    assert "Mul" not in all_nodes


def test_custom_translation_table_supports_custom_op_as_target(export_fn):
    @torch.library.custom_op("custom::add", mutates_args=())
    def custom_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b

    @custom_add.register_fake
    def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(a) + torch.empty_like(b)

    class Model(torch.nn.Module):
        def forward(self, x, y):
            return custom_add(x, y)

    def onnx_add(self: FLOAT, other: FLOAT) -> FLOAT:
        return op.Sub(self, other)

    custom_translation_table = {torch.ops.custom.add.default: onnx_add}
    onnx_program = export_fn(
        Model(),
        (torch.tensor(1, dtype=torch.bool), torch.tensor(1, dtype=torch.bool)),
        custom_translation_table=custom_translation_table,
        dynamo=True,
    )
    all_nodes = op_types(onnx_program)
    assert "Sub" in all_nodes
    assert "Add" not in all_nodes


def test_custom_translation_table_supports_custom_op_with_its_decomp(export_fn):
    with torch.library._scoped_library("mylib", "FRAGMENT") as lib:
        torch.library.define("mylib::foo", "(Tensor a, Tensor b) -> Tensor", tags=torch.Tag.pt2_compliant_tag, lib=lib)

        @torch.library.impl("mylib::foo", "CompositeImplicitAutograd", lib=lib)
        @torch.library.register_fake("mylib::foo")
        def foo_impl(a, b):
            return a + b

        class M(torch.nn.Module):
            def forward(self, x, y):
                return torch.ops.mylib.foo(x, y)

        def onnx_add(self: FLOAT, other: FLOAT) -> FLOAT:
            return op.Sub(self, other)

        custom_translation_table = {torch.ops.mylib.foo.default: onnx_add}
        onnx_program = export_fn(
            M(), (torch.ones(3, 3), torch.ones(3, 3)), custom_translation_table=custom_translation_table, dynamo=True
        )
        all_nodes = op_types(onnx_program)
        assert "Sub" in all_nodes
        assert "Add" not in all_nodes
        onnx_program_decomp = export_fn(M(), (torch.ones(3, 3), torch.ones(3, 3)), dynamo=True)
        all_nodes_decomp = op_types(onnx_program_decomp)
        assert "Add" in all_nodes_decomp
        assert "Sub" not in all_nodes_decomp


def test_01_specialization_with_run_decomp_is_supported(export_fn):
    class Phi3RMSNorm(torch.nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            input_dtype = hidden_states.dtype
            hidden_states = hidden_states.to(torch.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states.to(input_dtype)

    onnx_program = export_fn(
        Phi3RMSNorm(256).eval(),
        args=(),
        kwargs={"hidden_states": torch.rand((1, 32, 256))},
        dynamic_shapes={"hidden_states": {0: "batch_size", 1: "seq_len"}},
        dynamo=True,
    )
    assert onnx_program.model.graph.outputs[0].shape[0] != 1


# ---------------------------------------------------------------------------------------------
# test_dynamic_shapes.py: the forms of dynamic_shapes and dynamic_axes that torch.onnx converts
# (its helpers are unit-tested there; here each form goes through the exporter and the names
# are checked on the model).


def _dims(value):
    return [d if isinstance(d, int) else d.value for d in value.shape]


@pytest.mark.parametrize(
    "dynamic_shapes, input_names, expected",
    [
        pytest.param(
            {"x": {0: torch.export.Dim("customx_dim_0"), 1: torch.export.Dim("customx_dim_1")},
             "b": {0: torch.export.Dim("customb_dim_0")}},
            ["input_x", "input_b"],
            [["customx_dim_0", "customx_dim_1", 3], ["customb_dim_0", 2, 3]],
            id="dict_of_dims",
        ),
        pytest.param(
            ({0: torch.export.Dim("customx_dim_0"), 1: torch.export.Dim("customx_dim_1")},
             {0: torch.export.Dim("customb_dim_0"), 1: None, 2: torch.export.Dim("customb_dim_2")}),
            ["input_x", "input_b"],
            [["customx_dim_0", "customx_dim_1", 3], ["customb_dim_0", 2, "customb_dim_2"]],
            id="tuple_with_none_axis",
        ),
        pytest.param(
            ({0: "customx_dim_0", 1: torch.export.Dim.STATIC}, {0: torch.export.Dim.AUTO, 2: "customb_dim_2"}),
            None,
            [["customx_dim_0", 2, 3], [None, 2, "customb_dim_2"]],
            id="strings_static_and_auto",
        ),
    ],
)
def test_dynamic_shapes_forms_name_the_inputs(export_fn, dynamic_shapes, input_names, expected):
    onnx_program = export_fn(
        SampleModelForDynamicShapes(),
        (torch.randn(3, 2, 3), torch.randn(4, 2, 3)),
        dynamic_shapes=dynamic_shapes,
        input_names=input_names,
        dynamo=True,
    )
    got = [_dims(i) for i in onnx_program.model.graph.inputs]
    for g, e in zip(got, expected):
        for gd, ed in zip(g, e):
            if ed is None:  # Dim.AUTO: a symbol of the program's own (sNN)
                assert isinstance(gd, str)
            else:
                assert gd == ed
    if input_names:
        assert [i.name for i in onnx_program.model.graph.inputs] == input_names
    onnx_testing.assert_onnx_program(onnx_program, args=(torch.randn(5, 2, 3), torch.randn(6, 2, 3)))


class SignatureOnlyDecoder(torch.nn.Module):
    """test_dynamic_shapes.py's `SingnatureOnlyLlamaModel` made to compute: a decoder step whose
    inputs and outputs are named as Optimum names them."""

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None):
        present = []
        for key, value in past_key_values:
            present.append((torch.cat([key, key[:, :, -input_ids.shape[1]:] * 2], 2),
                            torch.cat([value, value[:, :, -input_ids.shape[1]:] + 1], 2)))
        logits = input_ids.unsqueeze(-1) * attention_mask.sum(-1, keepdim=True).unsqueeze(-1) + position_ids.unsqueeze(-1)
        return logits, present


def test_from_dynamic_axes_to_dynamic_shapes_on_llm(export_fn):
    kwargs = {
        "input_ids": torch.randint(0, 10, (2, 16)),
        "attention_mask": torch.ones(2, 32, dtype=torch.int64),
        "position_ids": torch.randint(0, 10, (2, 16)),
        "past_key_values": [(torch.randn(2, 8, 16, 64), torch.randn(2, 8, 16, 64)) for _ in range(2)],
    }
    input_names = ["input_ids", "attention_mask", "position_ids", "past_key_values.0.key",
                   "past_key_values.0.value", "past_key_values.1.key", "past_key_values.1.value"]
    output_names = ["logits", "present.0.key", "present.0.value", "present.1.key", "present.1.value"]
    dynamic_axes = {
        "input_ids": {0: "batch_size", 1: "sequence_length"},
        "attention_mask": {0: "batch_size", 1: "past_sequence_length + sequence_length"},
        "position_ids": {0: "batch_size", 1: "sequence_length"},
        **{f"past_key_values.{i}.{kv}": {0: "batch_size", 2: "past_sequence_length"}
           for i in range(2) for kv in ("key", "value")},
        "logits": {0: "batch_size", 1: "sequence_length"},
        **{f"present.{i}.{kv}": {0: "batch_size", 2: "past_sequence_length + sequence_length"}
           for i in range(2) for kv in ("key", "value")},
    }
    onnx_program = export_fn(
        SignatureOnlyDecoder(), (), kwargs=kwargs, input_names=input_names, output_names=output_names,
        dynamic_axes=dynamic_axes, dynamo=True,
    )
    inputs = onnx_program.model.graph.inputs
    assert [i.name for i in inputs] == input_names
    assert [o.name for o in onnx_program.model.graph.outputs] == output_names
    assert _dims(inputs[0]) == ["batch_size", "sequence_length"]
    assert _dims(inputs[3]) == ["batch_size", 8, "past_sequence_length", 64]
    onnx_testing.assert_onnx_program(onnx_program)


# ---------------------------------------------------------------------------------------------
# test_hf_models_e2e.py, with the tiny GPT-J built from the configuration of
# hf-internal-testing/tiny-random-gptj (no download; random weights). transformers 5 takes the
# cache as a `DynamicCache` (a list of (key, value) tuples fails in GPT-J's forward, with
# torch.onnx too): the cache is one, registered as a pytree of `{key_cache: [...],
# value_cache: [...]}`, and `dynamic_shapes` follows that structure.


@pytest.fixture
def executorch_cache_registration():
    """`register_dynamic_cache_export_support` registers the cache with pytree for the whole
    process; the registration is undone after the test, so that later tests (transformers'
    exporters, which register their own flattening) see the cache as they would alone."""
    transformers = pytest.importorskip("transformers")
    import torch.fx._pytree as fx_pytree
    import torch.utils._pytree as pytree

    cls = transformers.DynamicCache
    before = cls in pytree.SUPPORTED_NODES
    yield
    if not before and cls in pytree.SUPPORTED_NODES:
        pytree._deregister_pytree_node(cls)
        fx_pytree.SUPPORTED_NODES.pop(cls, None)
        getattr(fx_pytree, "SUPPORTED_NODES_EXACT_MATCH", {}).pop(cls, None)


def _prepare_llm_model_gptj_to_test():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPTJConfig(
        vocab_size=1000, n_positions=512, n_embd=32, n_layer=5, n_head=4, rotary_dim=4,
        n_inner=None, activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )
    model = transformers.GPTJForCausalLM(config).eval()
    batch_size, input_seq_len, mask_seq_len, active_prob, vocab_size = 2, 16, 32, 0.5, 1000
    input_ids = torch.randint(100, vocab_size, (batch_size, input_seq_len))
    attention_mask = torch.bernoulli(torch.full((batch_size, mask_seq_len), active_prob)).int()
    position_ids = torch.tensor(
        [
            [1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1],
            [1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0],
        ]
    )
    from transformers.integrations.executorch import register_dynamic_cache_export_support

    register_dynamic_cache_export_support()
    past_key_values = transformers.DynamicCache(config=config)
    for layer in range(5):
        past_key_values.update(torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8), layer)
    kwargs = {
        "input_ids": input_ids,
        "past_key_values": past_key_values,
        "attention_mask": attention_mask,
        "position_ids": position_ids,
    }
    dynamic_axes = {
        "input_ids": {0: "batch_size", 1: "sequence_length"},
        **{f"past_key_values.{i}.{kv}": {0: "batch_size", 2: "past_sequence_length"}
           for i in range(5) for kv in ("key", "value")},
        "attention_mask": {0: "batch_size", 1: "past_sequence_length + sequence_length"},
        "position_ids": {0: "batch_size", 1: "sequence_length"},
        "logits": {0: "batch_size", 1: "sequence_length"},
        **{f"present.{i}.{kv}": {0: "batch_size", 2: "past_sequence_length + sequence_length"}
           for i in range(5) for kv in ("key", "value")},
    }
    input_names = ["input_ids"] + [f"past_key_values.{i}.{kv}" for i in range(5) for kv in ("key", "value")] + [
        "attention_mask", "position_ids"]
    output_names = ["logits"] + [f"present.{i}.{kv}" for i in range(5) for kv in ("key", "value")]
    return model, kwargs, dynamic_axes, input_names, output_names


@pytest.mark.slow
def test_onnx_export_huggingface_llm_models_with_kv_cache(export, executorch_cache_registration):
    model, kwargs, dynamic_axes, input_names, output_names = _prepare_llm_model_gptj_to_test()
    onnx_program = export(
        model, kwargs=kwargs, input_names=input_names, output_names=output_names, dynamic_axes=dynamic_axes
    )
    onnx_testing.assert_onnx_program(onnx_program)


@pytest.mark.slow
def test_onnx_export_with_custom_axis_names_in_dynamic_shapes(export, executorch_cache_registration):
    model, kwargs, _, input_names, output_names = _prepare_llm_model_gptj_to_test()
    dynamic_shapes = {
        "input_ids": {0: "batch_size", 1: "sequence_length"},
        "past_key_values": [[{0: "batch_size", 2: "past_sequence_length"}] * 5] * 2,
        "attention_mask": {0: "batch_size", 1: "masked_sequence_length"},
        "position_ids": {0: "batch_size", 1: "sequence_length"},
    }
    onnx_program = export(
        model, kwargs=kwargs, input_names=input_names, output_names=output_names,
        dynamic_shapes=dynamic_shapes, optimize=False,
    )
    onnx_testing.assert_onnx_program(onnx_program)
    for dim, custom_name in zip(onnx_program.model.graph.inputs[0].shape, dynamic_shapes["input_ids"].values()):
        assert dim.value == custom_name
    for idx in range(1, 11):
        assert _dims(onnx_program.model.graph.inputs[idx]) == ["batch_size", 4, "past_sequence_length", 8]
    for dim, custom_name in zip(onnx_program.model.graph.inputs[11].shape, dynamic_shapes["attention_mask"].values()):
        assert dim.value == custom_name
    for dim, custom_name in zip(onnx_program.model.graph.inputs[12].shape, dynamic_shapes["position_ids"].values()):
        assert dim.value == custom_name
