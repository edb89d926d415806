"""``fxonnx.export(..., dynamo=False)``: the models torch.onnx's TorchScript exporter took (issue 39):
traced and scripted modules, scripted control flow, packed sequences, eager-mode quantization,
symbolic functions, ``torch.jit.save`` files. Each checked in ONNX Runtime against eager at the
example size and at another size of each dynamic axis. Needs torch, onnx, onnxruntime."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from typing import List, Optional, Tuple

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import torch.nn.utils.rnn as rnn_utils  # noqa: E402
from torch import Tensor  # noqa: E402

import fxonnx  # noqa: E402


def export(model, args, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = fxonnx.export(model, args, dynamo=False, verbose=False, **options)
    onnx.checker.check_model(program.model_proto, full_check=True)
    return program


def close(program, model, *args, atol=1e-5):
    got = [torch.as_tensor(o) for o in program(*args)]
    with torch.no_grad():
        want = [w for w in torch.utils._pytree.tree_leaves(model(*args)) if isinstance(w, torch.Tensor)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w.to(g.dtype) if w.dtype != g.dtype else w, atol=atol, rtol=1e-4)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.bn = torch.nn.BatchNorm1d(3)

    def forward(self, x, y):
        n = x.size(0)
        z = self.bn(self.fc(x)).view(n, -1) + y[:, :3]
        return torch.arange(n), z.relu()


@pytest.mark.parametrize("script", [False, True], ids=["traced", "scripted"])
def test_traced_and_scripted_modules_keep_their_dynamic_axes(script):
    model = Block().eval()
    x, y = torch.randn(2, 4), torch.randn(2, 5)
    program = export(torch.jit.script(model) if script else model, (x, y), input_names=["x", "y"],
                     dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    assert [d.dim_param for d in program.model_proto.graph.input[0].type.tensor_type.shape.dim][:1] == ["n"]
    for n in (2, 5):
        close(program, model, torch.randn(n, 4), torch.randn(n, 5))


class Branches(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        for i in range(x.size(0)):
            y = y + i
        while y.abs().sum() < 100:
            y = y * 3
        return y


def test_scripted_control_flow_becomes_if_and_loop():
    model = torch.jit.script(Branches())
    x = torch.rand(3, 4) + 0.1
    program = export(model, (x,), input_names=["x"], dynamic_axes={"x": [0]})
    ops = {n.op_type for n in program.model_proto.graph.node}
    assert {"If", "Loop"} <= ops, ops
    for t in (x, -x, torch.rand(6, 4) + 0.1):
        close(program, model, t)


class Packed(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(3, 5, 2, bidirectional=True)

    def forward(self, x, lengths):
        out, h = self.rnn(rnn_utils.pack_padded_sequence(x, lengths))
        y, _ = rnn_utils.pad_packed_sequence(out)
        return y, h


@pytest.mark.parametrize("cell", [torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN], ids=["lstm", "gru", "rnn"])
def test_packed_sequences_become_sequence_lens(cell):
    model = Packed(cell).eval()
    x, lengths = torch.randn(6, 4, 3), torch.tensor([6, 5, 3, 2])
    program = export(model, (x, lengths), input_names=["x", "lengths"], dynamic_axes={"x": [0, 1], "lengths": [0]})
    close(program, model, x, lengths)
    close(program, model, torch.randn(7, 3, 3), torch.tensor([7, 4, 1]))


def test_an_eager_mode_quantized_linear_matches_the_quantized_module():
    model = torch.ao.nn.quantized.Linear(4, 8)
    weight = torch.quantize_per_tensor(torch.arange(32, dtype=torch.float).view(8, 4), 0.5, 0, torch.qint8)
    model.set_weight_bias(weight, torch.arange(8, dtype=torch.float))
    x = torch.quantize_per_tensor(torch.arange(16, dtype=torch.float).view(4, 4) - 8, 0.5, 128, torch.quint8)
    program = export(model, (x,))
    ops = [n.op_type for n in program.model_proto.graph.node]
    assert "QuantizeLinear" in ops and "DequantizeLinear" in ops
    values, scale, zero_point = program(x.int_repr(), torch.tensor(0.5, dtype=torch.float64), torch.tensor(128))
    want = model(x)
    assert torch.equal(torch.as_tensor(values), want.int_repr())
    assert float(scale) == want.q_scale() and int(zero_point) == want.q_zero_point()


class QuantizedConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.relu = torch.nn.ReLU()
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.relu(self.conv(self.quant(x))))


def test_a_model_quantized_by_prepare_and_convert():
    model = QuantizedConv().eval()
    model.qconfig = torch.ao.quantization.get_default_qconfig("fbgemm")
    torch.ao.quantization.fuse_modules(model, [["conv", "relu"]], inplace=True)
    torch.ao.quantization.prepare(model, inplace=True)
    model(torch.randn(4, 3, 8, 8))
    torch.ao.quantization.convert(model, inplace=True)
    x = torch.randn(2, 3, 8, 8)
    program = export(model, (x,))
    scale = model.conv.scale
    close(program, model, x, atol=scale + 1e-6)  # one quantization step: rounding may differ by it


class MyRelu(torch.autograd.Function):
    @staticmethod
    def symbolic(g, x):
        return g.op("Relu", x)

    @staticmethod
    def forward(ctx, x):
        return x.clamp(min=0) * 1


class MyClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, low):
        return x.clamp(min=low)


class Functions(torch.nn.Module):
    def forward(self, x, low):
        return MyRelu.apply(MyClip.apply(x, low))


def test_autograd_functions_use_their_symbolic_or_are_inlined():
    x, low = torch.randn(3, 3), torch.tensor([0.1])
    program = export(Functions(), (x, low))
    ops = [n.op_type for n in program.model_proto.graph.node]
    assert "Relu" in ops  # MyRelu.symbolic; MyClip inlined as traced
    close(program, Functions(), x, low)


def test_register_custom_op_symbolic_overrides_an_aten_op():
    def addmm(g, self, mat1, mat2, beta, alpha):
        return g.op("Add", g.op("MatMul", mat1, mat2), self)

    class AddMm(torch.nn.Module):
        def forward(self, x, a, b):
            return torch.addmm(x, a, b)

    torch.onnx.register_custom_op_symbolic("::addmm", addmm, 9)
    try:
        args = (torch.randn(2, 3), torch.randn(2, 4), torch.randn(4, 3))
        program = export(AddMm(), args)
        assert [n.op_type for n in program.model_proto.graph.node] == ["MatMul", "Add"]
        close(program, AddMm(), *args)
    finally:
        torch.onnx.unregister_custom_op_symbolic("::addmm", 9)


def test_torch_onnx_ops_symbolic_in_a_dynamo_program():
    class Symbolic(torch.nn.Module):
        def forward(self, x):
            y = torch.onnx.ops.symbolic("Relu", [x], dtype=x.dtype, shape=x.shape, version=18)
            a, b = torch.onnx.ops.symbolic_multi_out("Split", [y], {"axis": 1, "num_outputs": 2},
                                                     dtypes=[x.dtype, x.dtype],
                                                     shapes=[[x.shape[0], 2], [x.shape[0], 2]], version=18)
            return a + b

    x = torch.randn(3, 4)
    program = fxonnx.export(Symbolic(), (x,), verbose=False, dynamic_shapes=({0: "b"},))
    assert [n.op_type for n in program.model_proto.graph.node] == ["Relu", "Split", "Add"]
    y = torch.relu(x)
    torch.testing.assert_close(torch.as_tensor(program(x)[0]), y[:, :2] + y[:, 2:])


SCRIPTED_FILE = """
import torch, numpy as np, sys
class M(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1
torch.jit.save(torch.jit.script(M()), sys.argv[1])
np.savez(sys.argv[2], input_0=np.ones((2, 3), np.float32))
"""


def test_a_torch_jit_save_file_from_python_and_the_command_line(tmp_path):
    script = tmp_path / "make.py"
    script.write_text(SCRIPTED_FILE)
    pt, npz, out = tmp_path / "m.pt", tmp_path / "in.npz", tmp_path / "m.onnx"
    subprocess.run([sys.executable, str(script), str(pt), str(npz)], check=True, capture_output=True)
    program = export(str(pt), (torch.ones(2, 3),))
    torch.testing.assert_close(torch.as_tensor(program(-torch.ones(2, 3))[0]), -2 * torch.ones(2, 3))
    cli = [sys.executable, "-m", "fxonnx", "export", str(pt), "-o", str(out), "--example", str(npz),
           "--dynamic-axes", "x:0=batch"]
    done = subprocess.run(cli, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    model = onnx.load(str(out))
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"


def test_when_torch_export_cannot_capture_the_error_says_dynamo_false_would():
    class DataDependent(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # a Python branch on data: torch.export cannot capture it, a trace takes it
                return x * 2
            return x - 1

    with pytest.raises(fxonnx.CaptureError) as caught:
        fxonnx.export(DataDependent(), (torch.ones(3),), verbose=False)
    message = str(caught.value)
    assert "dynamo=False" in message


class SizeArithmetic(torch.nn.Module):
    """A traced size turned tensor and back: TorchScript records `size` → tensor arithmetic."""

    def forward(self, x):
        n = x.size(0) * 2 - 1
        return x.narrow(0, 0, n // 2), torch.ones(n + 1) * n


def test_sizes_carried_through_tensor_arithmetic_stay_symbolic():
    model = SizeArithmetic()
    program = export(torch.jit.trace(model, torch.randn(4, 3)), (torch.randn(4, 3),), input_names=["x"],
                     dynamic_axes={"x": [0]})
    for n in (4, 7):
        close(program, model, torch.randn(n, 3))


class ByteMask(torch.nn.Module):
    def forward(self, x):
        mask = (x > 0).to(torch.uint8)
        return torch.where(mask, x, -x), x[mask]


def test_a_uint8_mask_selects_as_torch_script_did():
    # A uint8 mask was torch's pre-bool mask: where and indexing read it as bool.
    x = torch.randn(3, 4)
    program = export(ByteMask(), (x,))
    got = program(x)
    assert torch.equal(torch.as_tensor(got[0]), x.abs())
    assert torch.equal(torch.as_tensor(got[1]), x[x > 0])


class AttributeList(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = [torch.zeros(2)]

    def forward(self, x):
        for i in range(3):
            self.seen.append(x + i)
        return torch.stack(self.seen[-3:])


def test_a_list_attribute_appended_in_a_loop_keeps_every_item():
    model = torch.jit.script(AttributeList())
    x = torch.randn(2)
    program = export(model, (x,))
    torch.testing.assert_close(torch.as_tensor(program(x)[0]), torch.stack([x, x + 1, x + 2]))


class Dropout(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.dropout(x, p=0.5, training=True)


def test_dropout_in_training_mode_drops_and_rescales():
    x = torch.ones(64, 64)
    program = export(Dropout(), (x,), training=torch.onnx.TrainingMode.TRAINING)
    got = torch.as_tensor(program(x)[0])
    kept = got != 0
    assert torch.all(got[kept] == 2.0)  # kept values scaled by 1 / (1 - p)
    assert 0.3 < kept.float().mean() < 0.7


@pytest.mark.parametrize("qdtype", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("op", ["sigmoid", "tanh"])
def test_quantized_sigmoid_and_tanh_take_torch_s_fixed_output_scale(op, qdtype):
    x = torch.quantize_per_tensor(torch.linspace(-4, 4, 24).view(2, 12), 0.05, 128 if qdtype == torch.quint8 else 0,
                                  qdtype)

    class Model(torch.nn.Module):
        def forward(self, x):
            return getattr(torch, op)(x)

    program = export(Model(), (x,))
    want = getattr(torch, op)(x)
    values, scale, zero_point = program(x.int_repr(), torch.tensor(x.q_scale(), dtype=torch.float64),
                                        torch.tensor(x.q_zero_point()))
    assert float(scale) == want.q_scale() and int(zero_point) == want.q_zero_point()
    assert (torch.as_tensor(values).int() - want.int_repr().int()).abs().max() <= 1


class CarriedUpdate(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        for _ in range(x.size(0)):
            y.add_(1)
        return y


class PartUpdateInLoop(torch.nn.Module):
    def forward(self, x):
        y = torch.zeros_like(x)
        for i in range(x.size(0)):
            y[0] += x[i]
            y[1:, 0] = float(i)
        return y


class PartUpdateInBranch(torch.nn.Module):
    def forward(self, x):
        y = torch.zeros_like(x)
        if x.size(0) == 3:
            y[0] += 1
        return y


@pytest.mark.parametrize("model", [CarriedUpdate, PartUpdateInLoop, PartUpdateInBranch])
def test_in_place_updates_inside_runtime_loops_and_branches_are_kept(model):
    # The loop's trip count and the branch's condition are known only at run time: the update
    # must be carried out of the loop or branch (a subgraph cannot write to its caller's tensor).
    scripted = torch.jit.script(model())
    program = export(scripted, (torch.rand(3, 2),), input_names=["x"], dynamic_axes={"x": [0]})
    for n in (3, 4):
        x = torch.rand(n, 2)
        close(program, scripted, x)


class Windows(torch.nn.Module):
    def forward(self, n: torch.Tensor, x: torch.Tensor):
        k = int(n.item())
        return (torch.hann_window(k), torch.hamming_window(k, periodic=False), torch.blackman_window(k),
                torch.linspace(-1.0, 2.0, k), torch.nn.functional.one_hot(x, k))


def test_sizes_read_from_data_make_windows_linspace_and_one_hot():
    model = torch.jit.script(Windows())
    x = torch.tensor([0, 1])
    program = export(model, (torch.tensor(5), x))
    for n in (2, 5, 9):
        close(program, model, torch.tensor(n), x, atol=1e-6)


class ToList(torch.jit.ScriptModule):
    @torch.jit.script_method
    def forward(self, x):
        values: list[int] = x.tolist()
        return values


def test_tolist_of_a_runtime_tensor_is_the_tensor():
    x = torch.randint(100, (3,))
    program = export(ToList(), (x,))
    assert torch.equal(torch.as_tensor(program(x)[0]), x)


class SqueezeDynamic(torch.nn.Module):
    def forward(self, x):
        return x.squeeze(2)


class SqueezeDynamicThenAdd(torch.nn.Module):
    def forward(self, x):
        return x.squeeze(2) + 1


def test_squeeze_of_a_dynamic_axis_follows_the_size_the_model_runs_on():
    # As the TorchScript exporter wrote it: the axis goes where its size is 1 when the model runs,
    # whatever the example had there; the output's rank is not fixed.
    for example in (torch.randn(2, 3, 4), torch.randn(2, 3, 1)):
        program = export(SqueezeDynamic(), (example,), input_names=["x"], dynamic_axes={"x": [0, 2]})
        for shape in ((3, 3, 5), (3, 3, 1), (2, 3, 4)):
            x = torch.randn(*shape)
            (got,) = program(x)
            assert tuple(got.shape) == tuple(x.squeeze(2).shape)
            close(program, SqueezeDynamic(), x)


def test_squeeze_of_a_dynamic_axis_read_by_an_op_warns_what_size_1_gives():
    # Another op reads the result with the example's rank: the model keeps the axis (sizes 2 and
    # up) and says so, naming the axis.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = fxonnx.export(SqueezeDynamicThenAdd(), (torch.randn(2, 1, 4),), dynamo=False, verbose=False,
                                input_names=["x"], dynamic_axes={"x": [0, 2]})
    assert any("`squeeze` of axis [2]" in str(w.message) for w in caught)
    close(program, SqueezeDynamicThenAdd(), torch.randn(3, 1, 5))


class SqueezeAt(torch.nn.Module):
    def forward(self, x, dim: int):
        return torch.squeeze(x, dim), torch.unsqueeze(x, dim)


def test_squeeze_and_unsqueeze_at_an_axis_given_at_run_time():
    program = export(SqueezeAt(), (torch.randn(2, 1, 4), 1))
    x = torch.randn(2, 1, 4)
    for dim in (1, -2, 2):
        got = program(x, torch.tensor(dim))
        want = SqueezeAt()(x, dim)
        for g, w in zip(got, want):
            torch.testing.assert_close(torch.as_tensor(g), w)


class Chunk3(torch.nn.Module):
    def forward(self, x):
        return torch.chunk(x, 3, dim=1)


def test_chunk_of_a_dynamic_axis_and_a_size_that_makes_fewer_chunks():
    program = export(Chunk3(), (torch.randn(1, 18),), input_names=["x"], dynamic_axes={"x": [1]})
    for n in (18, 13, 5):
        close(program, Chunk3(), torch.randn(1, n))
    # torch makes 2 chunks of a size of 4: the model's 3 outputs cannot be right, and it fails
    # rather than returning an empty third chunk.
    with pytest.raises(Exception, match="Split"):
        program(torch.randn(1, 4))


class Numbers(torch.nn.Module):
    def forward(self, x, y: int, z: bool, t: float):
        if z:
            x = x * y
        return x / t, z


def test_numbers_a_scripted_program_takes_are_inputs():
    # As the TorchScript exporter makes them: int64, bool and double inputs, read when it runs.
    model = torch.jit.script(Numbers())
    program = export(model, (torch.randn(2, 3), 2, False, 2.5))
    assert [i.type.tensor_type.elem_type for i in program.model_proto.graph.input] == [1, 7, 9, 11]
    x = torch.randn(2, 3)
    for y, z, t in ((2, False, 2.5), (3, True, 0.5)):
        got = program(x, torch.tensor(y), torch.tensor(z), torch.tensor(t, dtype=torch.float64))
        want = model(x, y, z, t)
        torch.testing.assert_close(torch.as_tensor(got[0]), want[0])
        assert bool(got[1]) == z


class SetFrom(torch.nn.Module):
    def forward(self, x, y):
        x.set_(y)
        return x + 1


class Unused(torch.nn.Module):
    def forward(self, x, y, z: int):
        return y + 1


def test_inputs_the_program_never_reads_are_dropped_with_their_names():
    # As the TorchScript exporter drops them; a name given stays with its input.
    program = export(Unused(), (torch.ones(2), torch.ones(2), 3), input_names=["a", "b", "c"])
    assert [i.name for i in program.model_proto.graph.input] == ["b"]
    program = export(SetFrom(), (torch.ones(2, 3), torch.randn(4, 6)), input_names=["x", "y"],
                     dynamic_axes={"y": [0, 1]})
    assert [i.name for i in program.model_proto.graph.input] == ["y"]
    y = torch.randn(5, 2)
    torch.testing.assert_close(torch.as_tensor(program(y)[0]), y + 1)


class Tbc(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(3, 4, 5))
        self.bias = torch.nn.Parameter(torch.randn(5))

    def forward(self, x):
        return torch.conv_tbc(x, self.weight, self.bias, 1)


def test_conv_tbc():
    model = Tbc()
    program = export(model, (torch.randn(7, 2, 4),), input_names=["x"], dynamic_axes={"x": [0, 1]})
    close(program, model, torch.randn(9, 3, 4), atol=1e-4)


class ScaledSize(torch.nn.Module):
    def forward(self, x):
        s = float(x.size(1)) * 0.7
        return torch.nn.functional.interpolate(x[None], size=[int(math.floor(s)), int(math.ceil(s))])[0]


def test_floor_and_ceil_of_a_runtime_size():
    # torchvision's GeneralizedRCNNTransform resizes by floor(size * scale).
    model = torch.jit.script(ScaledSize())
    program = export(model, (torch.rand(3, 10, 20),), input_names=["x"], dynamic_axes={"x": [0, 1, 2]})
    for shape in ((3, 10, 20), (2, 13, 7)):
        close(program, model, torch.rand(*shape))


class RuntimeListIndex(torch.nn.Module):
    def forward(self, x, y):
        rows = []
        for i in range(x.size(0)):
            rows.append(x[i])
        rows[y] = x[y] * 2
        return rows[-y], rows[int(y)]


def test_a_list_of_alike_tensors_indexed_and_written_at_a_runtime_index():
    model = torch.jit.script(RuntimeListIndex())
    x = torch.randn(6, 4)
    program = export(model, (x, torch.tensor(2)))
    for y in (2, 4, 0):
        close(program, model, x, torch.tensor(y))


class ScriptedGru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(4, 6, num_layers=2, batch_first=True)

    def forward(self, x, h):
        return self.rnn(x, h)


def test_a_scripted_rnn_checks_its_hidden_state_sizes_at_run_time():
    # nn.GRU compares the hidden state's size list with the expected one: lists of sizes known at
    # run time only, compared item by item (the raising branch is not one the model takes).
    model = torch.jit.script(ScriptedGru().eval())
    program = export(model, (torch.randn(2, 5, 4), torch.randn(2, 2, 6)), input_names=["x", "h"],
                     dynamic_axes={"x": [0, 1], "h": [1]})
    close(program, model, torch.randn(3, 7, 4), torch.randn(2, 3, 6))


class Volume(torch.nn.Module):
    def forward(self, x, grid):
        return torch.nn.functional.grid_sample(x, grid, align_corners=False)


def test_export_errors_are_torch_onnx_exporter_errors_too():
    # Code written for torch.onnx catches fxonnx's errors; they stay fxonnx's, and pickle as them.
    import pickle

    args = (torch.rand(1, 1, 2, 3, 4), torch.rand(1, 2, 3, 4, 3))
    with pytest.raises(torch.onnx.OnnxExporterError, match="GridSample") as caught:
        fxonnx.export(Volume(), args, dynamo=False, opset_version=18, verbose=False)
    assert isinstance(caught.value, fxonnx.TranslationError) and caught.value.node == "grid_sampler"
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is fxonnx.TranslationError and again.node == "grid_sampler"
    export(Volume(), args, opset_version=20)  # volumes from opset 20


class CountRows(torch.nn.Module):
    def forward(self, x):
        return len(x.unbind()) + x


def test_counting_the_pieces_of_an_unbind_along_a_dynamic_axis():
    model = torch.jit.script(CountRows())
    program = export(model, (torch.randn(4, 5),), input_names=["x"], dynamic_axes={"x": [0]})
    for rows in (4, 7):
        close(program, model, torch.randn(rows, 5))


class PickOne(torch.nn.Module):
    def forward(self, x, y, z, i: int):
        return [x, y, z][i]


def test_a_list_item_chosen_at_run_time_among_tensors_of_different_sizes():
    model = torch.jit.script(PickOne())
    tensors = (torch.randn(3, 4), torch.randn(1, 4), torch.randn(2, 4))
    program = export(model, (*tensors, 1))
    for i in (0, 1, 2, -1, -3):
        (got,) = program(*tensors, torch.tensor(i))
        torch.testing.assert_close(torch.as_tensor(got), tensors[i])


class RankByBranch(torch.nn.Module):
    def forward(self, x):
        if x.size(0) > 1:
            return x.new_zeros(x.shape[1:])
        return x


def test_an_if_whose_branches_differ_in_rank_is_decided_on_the_example_and_says_so():
    model = torch.jit.script(RankByBranch())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = fxonnx.export(model, (torch.randn(2, 3, 4),), dynamo=False, verbose=False, input_names=["x"],
                                dynamic_axes={"x": [0, 1, 2]})
    assert any("different ranks" in str(w.message) for w in caught)
    close(program, model, torch.randn(3, 5, 2))


class NewZerosOnly(torch.nn.Module):
    def forward(self, x, y):
        return x.new_zeros(x.shape[1:]) + y


def test_an_input_read_only_for_its_type_and_static_sizes_is_dropped():
    # The TorchScript exporter's graph no longer reads `x`: it is not an input; `y` keeps its name.
    program = export(NewZerosOnly(), (torch.randn(2, 3), torch.randn(3)), input_names=["x", "y"])
    assert [i.name for i in program.model_proto.graph.input] == ["y"]


class KeyedByTensor(torch.nn.Module):
    def forward(self, d):
        key = list(d.keys())[0]
        return d[key] + key


def test_a_dict_input_keyed_by_a_tensor():
    # As torch.onnx.export takes a dict input: followed by an empty dict of keyword arguments.
    x = {torch.tensor(1.0): torch.randn(1, 2, 3)}
    program = export(KeyedByTensor(), (x, {}))
    # The key the program adds is an input too, as the TorchScript exporter flattens the dict.
    (got,) = program(*x.keys(), *x.values())
    torch.testing.assert_close(torch.as_tensor(got), KeyedByTensor()(x))


class ComplexOut(torch.nn.Module):
    def forward(self, x):
        return torch.stft(x, n_fft=16, center=False, return_complex=True)


def test_a_complex_output_is_refused_as_the_torchscript_exporter_refused_it():
    # ONNX has no complex tensors; the real view would be an output of another shape.
    with pytest.raises(torch.onnx.errors.SymbolicValueError, match="view_as_real"):
        fxonnx.export(ComplexOut(), (torch.randn(1, 32),), dynamo=False, verbose=False)


class SplitBySize(torch.nn.Module):
    def forward(self, x):
        return torch.tensor_split(x, x.size(1))


def test_tensor_split_into_a_traced_size_of_sections():
    x = torch.randn(1, 2, 3)
    close(export(SplitBySize(), (x,)), SplitBySize(), x)


def test_quantized_conv_transpose1d():
    model = torch.ao.nn.quantized.ConvTranspose1d(4, 6, 3, output_padding=1, stride=2)
    model.set_weight_bias(torch.quantize_per_tensor(torch.randn(4, 6, 3), 0.5, 0, torch.qint8),
                          torch.arange(6).to(torch.float) - 3)
    x = torch.quantize_per_tensor(torch.randn(2, 4, 8), 0.5, 128, torch.quint8)
    program = export(model, (x,))
    # A quantized input or output is its integers, scale and zero point, as torch.onnx passes it.
    values, scale, zero_point = program(x.int_repr(), torch.tensor(0.5, dtype=torch.float64), torch.tensor(128))
    want = model(x)
    torch.testing.assert_close(torch.as_tensor(values).to(torch.int64), want.int_repr().to(torch.int64), atol=1,
                               rtol=0)
    assert float(scale) == want.q_scale() and int(zero_point) == want.q_zero_point()


class IfList(torch.nn.Module):
    def forward(self, x, y, cond):
        res = []
        if cond:
            res = res + [x]
        else:
            res = res + [y * 2]
        return res


def test_an_if_on_data_whose_branches_return_lists_of_tensors():
    # Each item is a result of the If, in its own type (before, the list was read as numbers).
    model = torch.jit.script(IfList())
    x, y = torch.randn(2, 3), torch.randn(3, 3)
    program = export(model, (x, y, torch.tensor(True)))
    for cond in (True, False):
        (got,) = program(x, y, torch.tensor(cond))
        torch.testing.assert_close(torch.as_tensor(got), model(x, y, torch.tensor(cond))[0])


class PadBy(torch.nn.Module):
    def forward(self, x, pad: List[int]):
        return torch.nn.functional.pad(x, pad)


def test_ints_a_scripted_program_takes_given_as_tensors():
    model = torch.jit.script(PadBy())
    x = torch.randn(2, 2, 4, 4)
    program = export(model, (x, [torch.tensor(2), torch.tensor(4)]))
    for pad in ((2, 4), (1, 0)):
        (got,) = program(x, *map(torch.tensor, pad))
        torch.testing.assert_close(torch.as_tensor(got), model(x, list(pad)))


class WriteTail(torch.nn.Module):
    def forward(self, x):
        x[:, x.size(0):] = torch.tensor([1.0, 2.0, 3.0])
        return x


def test_a_traced_write_into_a_slice_of_dynamic_size():
    # The trace records the value's expand to the example's sizes; the model broadcasts it to the
    # slice's sizes when it runs.
    program = export(WriteTail(), (torch.ones(2, 5, 3),), input_names=["x"], dynamic_axes={"x": [0, 1]})
    for shape in ((2, 5, 3), (3, 4, 3)):
        x = torch.randn(*shape)
        close(program, WriteTail(), x.clone())


class WhereIndices(torch.nn.Module):
    def forward(self, x):
        rows, cols = torch.where(x > 0)
        return x[rows, cols] * 2, rows


def test_torch_where_of_a_condition_alone_gives_its_indices():
    program = export(WhereIndices(), (torch.randn(4, 5),), input_names=["x"], dynamic_axes={"x": [0, 1]})
    for shape in ((4, 5), (6, 2)):
        close(program, WhereIndices(), torch.randn(*shape))


class Defaults(torch.nn.Module):
    def forward(self, x, y: Optional[Tensor] = torch.ones(2, 3), z: Optional[Tensor] = torch.zeros(2, 3)):
        if y is not None:
            return x + y
        if z is not None:
            return x + z
        return x


def test_a_scripted_program_s_defaults_are_constants_and_none_is_refused():
    # A parameter left to its default is not an input; None among the arguments is refused with
    # the TorchScript exporter's ValueError (it made optional inputs fxonnx's programs cannot hold).
    model = torch.jit.script(Defaults())
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    program = export(model, (x, {"y": y}), input_names=["x", "y"])
    assert [i.name for i in program.model_proto.graph.input] == ["x", "y"]
    close(program, model, x, y)
    with pytest.raises(ValueError, match="args contained 1 None's after flattening"):
        fxonnx.export(model, (x, y, None), dynamo=False, verbose=False)


class MaybeDoubled(torch.nn.Module):
    def forward(self, x) -> Optional[Tensor]:
        y: Optional[Tensor] = None
        if x.size(0) > 2:
            y = x * 2
        return y


class MaybeUsed(torch.nn.Module):
    def forward(self, x):
        y: Optional[Tensor] = None
        for _ in range(x.size(0) - 2):
            y = x * 2
        if y is None:
            return x - 1
        return y + 1


@pytest.mark.parametrize("cls", [MaybeDoubled, MaybeUsed])
def test_optional_tensors_decided_at_run_time_are_onnx_optionals(cls):
    import onnxruntime as ort

    model = torch.jit.script(cls())
    program = export(model, (torch.randn(3, 2),), input_names=["x"], dynamic_axes={"x": {0: "n"}})
    ops = {n.op_type for n in program.model_proto.graph.node}
    output = program.model_proto.graph.output[0].type
    if cls is MaybeDoubled:
        # The If's branches make the optional: `Optional(x * 2)` and an `Optional` of no value.
        assert output.HasField("optional_type") and ops == {"Shape", "Squeeze", "Greater", "If"}
    else:
        assert {"Loop", "OptionalHasElement"} <= ops and output.HasField("tensor_type")
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    for n in (1, 2, 3, 5):
        x = torch.randn(n, 2)
        got, want = session.run(None, {"x": x.numpy()})[0], model(x)
        if want is None:
            assert got is None, n
        else:
            torch.testing.assert_close(torch.as_tensor(got), want)


def test_none_among_a_scripted_program_s_outputs_is_an_empty_optional():
    import onnxruntime as ort

    class TupleModel(torch.nn.Module):
        def forward(self, x):
            return (x, (x + 1, None))

    program = export(torch.jit.script(TupleModel()), (torch.randn(3, 4),))
    assert [o.type.HasField("optional_type") for o in program.model_proto.graph.output] == [False, False, True]
    x = torch.randn(3, 4)
    got = ort.InferenceSession(program.model_proto.SerializeToString()).run(None, {"x": x.numpy()})
    torch.testing.assert_close(torch.as_tensor(got[1]), x + 1)
    assert got[2] is None
    with pytest.raises(fxonnx.CaptureError, match="opset 15"):
        export(torch.jit.script(TupleModel()), (torch.randn(3, 4),), opset_version=14)


class Grown(torch.nn.Module):
    """A list grown in a loop the model runs (its length is the input's): a sequence, stacked,
    concatenated, measured, indexed and returned."""

    def forward(self, x):
        items: List[Tensor] = []
        for i in range(x.size(0)):
            items.append(x[i] * i)
        return torch.stack(items, 1), len(items), items, items[-1], torch.cat(items, -1)


class GrownInBranches(torch.nn.Module):
    """Appends decided by the data, in loops of static length: the list's length is the data's."""

    def forward(self, x):
        kept: List[Tensor] = []
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                for j in range(2):
                    kept.append(x[i, j])
        return kept


def _sequence_close(session, model, x):
    got, want = session.run(None, {session.get_inputs()[0].name: x.numpy()}), model(x)
    flat = [v for o in got for v in (o if isinstance(o, list) else [o])]
    expected = [torch.as_tensor(w) for w in torch.utils._pytree.tree_leaves(want)]
    assert len(flat) == len(expected), (len(flat), len(expected))
    for g, w in zip(flat, expected):
        torch.testing.assert_close(torch.as_tensor(g), w.to(torch.as_tensor(g).dtype))


def test_lists_whose_length_is_known_at_run_time_are_onnx_sequences():
    import onnxruntime as ort

    model = torch.jit.script(Grown())
    program = export(model, (torch.randn(3, 2),), input_names=["x"], dynamic_axes={"x": {0: "n"}})
    graph = program.model_proto.graph
    assert {"Loop", "SequenceEmpty", "ConcatFromSequence", "SequenceLength", "SequenceAt"} <= {
        n.op_type for n in graph.node}
    assert graph.output[2].type.HasField("sequence_type")
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    for n in (1, 3, 5):
        _sequence_close(session, model, torch.randn(n, 2))

    model = torch.jit.script(GrownInBranches())
    program = export(model, (torch.randn(4, 2, 3),))
    assert program.model_proto.graph.output[0].type.HasField("sequence_type")
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    for seed in range(4):
        torch.manual_seed(seed)
        _sequence_close(session, model, torch.randn(4, 2, 3))
    with pytest.raises(fxonnx.CaptureError, match="opset 14"):
        export(torch.jit.script(Grown()), (torch.randn(3, 2),), input_names=["x"], dynamic_axes={"x": {0: "n"}},
               opset_version=13)


def test_an_empty_list_a_scripted_program_returns_is_an_empty_sequence():
    import onnxruntime as ort

    class Empty(torch.nn.Module):
        def forward(self, x):
            res: List[Tensor] = []
            for i in range(x.size(0)):
                if i > 10:
                    res.append(x[i])
            return res, x + 1

    program = export(torch.jit.script(Empty()), (torch.randn(3, 4),))
    graph = program.model_proto.graph
    assert graph.output[0].type.HasField("sequence_type")
    got = ort.InferenceSession(program.model_proto.SerializeToString()).run(None, {graph.input[0].name: np_ones()})
    assert got[0] == [] and got[1].shape == (3, 4)


def np_ones():
    return torch.ones(3, 4).numpy()


class Counted(torch.nn.Module):
    """Ints as many as a dynamic axis, more appended in branches the sizes and the list's own last
    item decide."""

    def forward(self, x):
        sizes = list(range(x.size(0)))
        if x.size(1) > 3:
            sizes.append(x.size(1))
        if sizes[-1] % 2 == 0:
            sizes.append(-1)
        return sizes


def test_a_list_of_ints_whose_length_is_known_at_run_time_is_a_sequence_of_numbers():
    import onnxruntime as ort

    model = torch.jit.script(Counted())
    program = export(model, (torch.ones(3, 4, dtype=torch.int),), input_names=["x"], dynamic_axes={"x": [0, 1]})
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    for n, m in ((1, 2), (3, 4), (4, 5), (6, 3), (2, 6)):
        x = torch.ones(n, m, dtype=torch.int)
        assert [int(v) for v in session.run(None, {"x": x.numpy()})[0]] == model(x), (n, m)


@torch.jit.script
def _add_state(state: Tensor, prev: Tensor) -> Tensor:
    if prev.size(0) == 1:
        state = state + prev  # broadcasts only for a state the example's (empty) one is not
    return state * 2


class Stateful(torch.nn.Module):
    def forward(self, x, prev):
        return _add_state(torch.zeros(2, x.size(0), 3), prev)


def test_a_branch_whose_kernels_fail_on_the_example_s_sizes_converts_on_sizes_without_hints():
    import onnxruntime as ort

    model = Stateful()
    empty = torch.zeros(0, 0, 0)
    program = export(model, (torch.randn(4, 3), empty), input_names=["x", "prev"],
                     dynamic_axes={"x": [0], "prev": [0, 1, 2]})
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    for prev in (empty, torch.randn(1, 4, 3), torch.randn(1, 1, 3)):
        x = torch.randn(4, 3)
        got = session.run(None, {"x": x.numpy(), "prev": prev.numpy()})[0]
        torch.testing.assert_close(torch.as_tensor(got), model(x, prev))
    # Static sizes decide the branch now: `prev`'s data is never read, and it is not an input.
    program = export(model, (torch.randn(4, 3), empty))
    assert [i.name for i in program.model_proto.graph.input] == []


class SummedParts(torch.nn.Module):
    """A list grown in a loop the model runs, iterated by another."""

    def forward(self, x):
        parts: List[Tensor] = []
        for i in range(x.size(0)):
            parts.append(x[i] + i)
        total = torch.zeros(x.size(1))
        for p in parts:
            total = total + p
        return total, torch.tensor([len(parts)])


class RunningMax(torch.nn.Module):
    """An optional a loop the model runs carries, tested and refined in it."""

    def forward(self, x):
        best: Optional[Tensor] = None
        for i in range(x.size(0)):
            row = x[i]
            if best is None:
                best = row
            else:
                best = torch.maximum(best, row)
        if best is None:
            return torch.zeros(x.size(1))
        return best


class Offsets(torch.nn.Module):
    """Ints gathered in a loop the model runs, made a tensor."""

    def forward(self, x):
        offsets: List[int] = []
        for i in range(x.size(0)):
            offsets.append(i * 2)
        return torch.tensor(offsets), x.sum()


class UntilLarge(torch.nn.Module):
    """A while loop on an int it carries, left by a `break` on data, growing a list."""

    def forward(self, x):
        out: List[Tensor] = []
        i = 0
        while i < x.size(0):
            if bool(x[i].sum() > 100):
                break
            out.append(x[i])
            i += 1
        return torch.cat(out, 0), i


class Doubling(torch.nn.Module):
    """A carried tensor that grows by `cat` each step (ONNX's Loop lets a state change shape)."""

    def forward(self, x):
        out = x[:1]
        for i in range(x.size(0) - 1):
            out = torch.cat([out, x[i + 1:i + 2] * 2], 0)
        return out


class PairState(torch.nn.Module):
    """A tuple a loop the model runs carries (item by item, as the TorchScript exporter lowers it)."""

    def forward(self, x):
        state: Tuple[Tensor, Tensor] = (torch.zeros(x.size(1)), torch.ones(x.size(1)))
        for i in range(x.size(0)):
            a, b = state
            state = (a + x[i], b * 2)
        return state[0], state[1]


@pytest.mark.parametrize("cls", [SummedParts, RunningMax, Offsets, UntilLarge, Doubling, PairState])
def test_scripted_loops_the_model_runs_carry_ints_optionals_and_lists(cls):
    import onnxruntime as ort

    model = torch.jit.script(cls())
    program = export(model, (torch.randn(3, 2),), input_names=["x"], dynamic_axes={"x": {0: "n"}})
    assert "Loop" in {n.op_type for n in program.model_proto.graph.node}
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    for n in (1, 3, 5):
        x = torch.randn(n, 2)
        if n == 5:
            x[3] += 1000  # UntilLarge stops there
        got = session.run(None, {"x": x.numpy()})
        want = model(x)
        want = list(want) if isinstance(want, tuple) else [want]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            w = torch.as_tensor(w)
            torch.testing.assert_close(torch.as_tensor(g).to(w.dtype), w)


class Greedy(torch.nn.Module):
    """Greedy decoding as scripted code wrote it: a step count given as an input, the tokens grown."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 10)

    def forward(self, tokens, steps: int):
        for _ in range(steps):
            nxt = self.head(self.emb(tokens).mean(1)).argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, nxt], 1)
        return tokens


def test_a_scripted_greedy_decode_runs_as_many_steps_as_the_model_is_given():
    import onnxruntime as ort

    torch.manual_seed(0)
    model = torch.jit.script(Greedy().eval())
    program = export(model, (torch.tensor([[1, 2]]), 3), input_names=["tokens", "steps"])
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    for steps in (0, 1, 4):
        tokens = torch.tensor([[3, steps]])
        got = session.run(None, {"tokens": tokens.numpy(), "steps": torch.tensor(steps).numpy()})[0]
        assert torch.equal(torch.as_tensor(got), model(tokens, steps)), steps


class Undo(torch.nn.Module):
    """A stack the data decides: pushed, popped, its top set and an item inserted at the front, in
    loops and branches the model runs."""

    def forward(self, x):
        stack: List[Tensor] = []
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                stack.append(x[i])
            elif len(stack) > 0:
                stack.pop()
        if len(stack) > 1:
            stack[-1] = stack[-1] * 10
            stack.insert(0, x[0] * 0 - 1)
        return torch.cat([torch.stack(stack, 0).sum(0), x[0]])


class Window(torch.nn.Module):
    """Ints pushed and popped from the front in a loop the model runs."""

    def forward(self, x):
        ids: List[int] = []
        for i in range(x.size(0)):
            ids.append(i)
            if i % 3 == 2:
                ids.pop(0)
        ids[0] = 7
        return torch.tensor(ids)


@pytest.mark.parametrize("cls", [Undo, Window])
def test_a_sequence_is_popped_inserted_into_and_set_as_a_list_is(cls):
    import onnxruntime as ort

    model = torch.jit.script(cls())
    program = export(model, (torch.randn(5, 2),), input_names=["x"], dynamic_axes={"x": {0: "n"}})
    assert 'op_type: "SequenceErase"' in str(program.model_proto)  # in the Loop's body or an If's branch
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    checked = 0
    for seed in range(8):
        torch.manual_seed(seed)
        x = torch.randn(3 + seed, 2)
        try:
            want = model(x)
        except RuntimeError:
            continue  # eager stacks an empty list: no value to compare
        got = session.run(None, {"x": x.numpy()})[0]
        torch.testing.assert_close(torch.as_tensor(got).to(want.dtype), want)
        checked += 1
    assert checked >= 3
