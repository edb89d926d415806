"""`fxonnx.export` on torch modules, as torch.onnx's users call it (needs torch, onnx, onnxruntime)."""

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import fxonnx  # noqa: E402


class MLPModel(torch.nn.Module):
    """torch.onnx's documentation example: a tensor, a dict and a list as inputs."""

    def __init__(self):
        super().__init__()
        self.fc0 = torch.nn.Linear(8, 8, bias=True)
        self.fc1 = torch.nn.Linear(8, 4, bias=True)
        self.fc2 = torch.nn.Linear(4, 2, bias=True)
        self.fc3 = torch.nn.Linear(2, 2, bias=True)

    def forward(self, tensor_x, input_dict, input_list):
        tensor_x = self.fc0(tensor_x)
        tensor_x = torch.sigmoid(tensor_x)
        tensor_x = self.fc1(tensor_x)
        tensor_x = torch.sigmoid(tensor_x)
        tensor_x = self.fc2(tensor_x)
        tensor_x = torch.sigmoid(tensor_x)
        output = self.fc3(tensor_x)
        return output + input_dict["tensor_x"] + input_list[0]


def mlp_call():
    tensor_x = torch.rand((97, 8), dtype=torch.float32)
    kwargs = {"input_dict": {"tensor_x": torch.rand((97, 2))}, "input_list": [torch.rand((97, 2))]}
    return (tensor_x,), kwargs


def input_shapes(model_proto):
    def dims(v):
        return tuple(d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim)

    return [dims(i) for i in model_proto.graph.input]


@pytest.mark.parametrize("batch", [torch.export.Dim("batch_size"), "batch_size"])
def test_documentation_example_names_its_dims_like_torch_onnx(batch):
    args, kwargs = mlp_call()
    shapes = {"tensor_x": {0: batch}, "input_dict": {"tensor_x": {0: batch}}, "input_list": [{0: batch}]}
    program = fxonnx.export(MLPModel(), args, kwargs=kwargs, dynamic_shapes=shapes, verify=True)
    assert input_shapes(program.model_proto) == [("batch_size", 8), ("batch_size", 2), ("batch_size", 2)]
    onnx.checker.check_model(program.model_proto, full_check=True)
    assert program.verification.passed
    assert len({c.input_set for c in program.verification.comparisons}) == 2
    # torch.onnx names them the same way for the same call.
    reference = torch.onnx.export(MLPModel(), args, kwargs=kwargs, dynamic_shapes=shapes, dynamo=True)
    assert input_shapes(program.model_proto) == input_shapes(reference.model_proto)


def test_a_small_cnn_and_a_transformer_block_verify():
    cnn = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 4, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 3),
    ).eval()
    x = torch.randn(2, 3, 16, 16)
    program = fxonnx.export(cnn, (x,), dynamic_shapes=({0: torch.export.Dim("batch")},), verify=True)
    assert input_shapes(program.model_proto)[0] == ("batch", 3, 16, 16)
    block = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True).eval()
    seq = torch.randn(2, 5, 16)
    shapes = ({0: torch.export.Dim("batch"), 1: torch.export.Dim("seq", min=2, max=64)},)
    program = fxonnx.export(block, (seq,), dynamic_shapes=shapes, verify=True)
    assert input_shapes(program.model_proto)[0] == ("batch", "seq", 16)
    assert all(c.max_abs_error < 1e-4 for c in program.verification.comparisons)


def test_an_exported_program_and_its_archive_export_the_same():
    args, kwargs = mlp_call()
    ep = torch.export.export(MLPModel(), args, kwargs=kwargs)
    from_ep = fxonnx.export(ep)
    import io

    buffer = io.BytesIO()
    torch.export.save(ep, buffer)
    assert fxonnx.export(buffer.getvalue()).model_bytes == from_ep.model_bytes
    outputs = from_ep(*args, **kwargs)
    torch.testing.assert_close(outputs[0], ep.module()(*args, **kwargs), rtol=1e-4, atol=1e-5)


def test_verify_catches_a_wrong_model():
    """A model that computes something else (its first Sigmoid made a Tanh) fails verify, naming
    the output."""
    args, kwargs = mlp_call()
    program = fxonnx.export(MLPModel(), args, kwargs=kwargs)
    proto = program.model_proto
    node = next(n for n in proto.graph.node if n.op_type == "Sigmoid")
    node.op_type = "Tanh"
    program._bytes = proto.SerializeToString()
    with pytest.raises(fxonnx.VerificationError) as info:
        program.verify()
    assert info.value.output == proto.graph.output[0].name
    assert not info.value.result.passed


def test_rename_axes_and_the_unoptimized_comparison():
    args, kwargs = mlp_call()
    batch = torch.export.Dim("batch_size")
    shapes = {"tensor_x": {0: batch}, "input_dict": {"tensor_x": {0: batch}}, "input_list": [{0: batch}]}
    program = fxonnx.export(MLPModel(), args, kwargs=kwargs, dynamic_shapes=shapes)
    program.rename_axes({"batch_size": "N"})
    assert input_shapes(program.model_proto)[0] == ("N", 8)
    result = program.verify(compare_unoptimized=True)
    assert any("unoptimized" in c.input_set for c in result.comparisons) and result.passed
