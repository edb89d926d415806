"""Issue 38, "trust, round three": never silently wrong, safe beside other threads and callers,
names and files as torch.onnx gives them, messages a user can act on. Each test failed before its
fix (reports/reliability.md, "Round three"). Needs torch, onnx, onnxruntime and onnxscript."""

from __future__ import annotations

import io
import threading
import time
import warnings

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")

from onnxscript import opset18 as op  # noqa: E402

import fxonnx  # noqa: E402


def run(program, *args):
    return [torch.as_tensor(o) for o in program(*args)]


# --- 1. verify compares every output of every input set, by the model's output names ----------


class ReluAndAddOne(torch.nn.Module):
    def forward(self, x):
        return x.relu(), x + 1


def subtracting_add(self, other, alpha=1.0):
    return op.Sub(self, other)


@pytest.mark.parametrize("dynamic", [None, {"x": {0: "batch"}}, {"x": {0: torch.export.Dim.AUTO}}],
                         ids=["static", "named", "auto"])
def test_verify_fails_a_wrong_second_output(dynamic):
    with pytest.raises(fxonnx.VerificationError) as caught:
        fxonnx.export(ReluAndAddOne().eval(), (torch.randn(3, 4),), dynamic_shapes=dynamic, verbose=False,
                      custom_translation_table={torch.ops.aten.add.Tensor: subtracting_add}, verify=True)
    result = caught.value.result
    names = {c.output for c in result.comparisons}
    assert names == {"relu", "add"}, names  # the model's output names, never the dims'
    sets = {c.input_set for c in result.comparisons}
    assert len(result.comparisons) == 2 * len(sets)
    assert caught.value.output == "add"


def test_verify_passes_a_right_model_and_names_each_output():
    program = fxonnx.export(ReluAndAddOne().eval(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: "batch"}},
                            verbose=False, verify=True)
    comparisons = program.verification.comparisons
    assert [c.output for c in comparisons] == ["relu", "add", "relu", "add"]
    assert all(c.passed for c in comparisons)


# --- 2. a dim asked dynamic whose example size is 1 ---------------------------------------------


class SqueezeOne(torch.nn.Module):
    def forward(self, x):
        return x.squeeze(-2)


class SqueezeAll(torch.nn.Module):
    def forward(self, x):
        return x.squeeze()


@pytest.mark.parametrize("model, options", [
    (SqueezeOne(), dict(dynamic_axes={"x": {0: "a", 1: "b", 2: "c"}}, input_names=["x"])),
    (SqueezeAll(), dict(dynamic_shapes=({0: "a", 1: "b", 2: "c"},))),
], ids=["squeeze_dim", "squeeze_all"])
def test_a_size_one_dynamic_axis_is_right_on_the_example(model, options):
    x = torch.randn(2, 1, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = fxonnx.export(model.eval(), (x,), verbose=False, **options)
    (out,) = run(program, x)
    assert tuple(out.shape) == (2, 4)
    torch.testing.assert_close(out, model(x))
    messages = [str(w.message) for w in caught]
    assert any("input `x` axis 1 (size 1 in the example)" in m for m in messages), messages
    # The other axes stay dynamic.
    dims = [d.dim_param or d.dim_value for d in program.model_proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["a", 1, "c"]


def test_a_batch_of_one_stays_dynamic_where_the_program_is_right():
    model = torch.nn.Linear(4, 3).eval()
    x = torch.randn(1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for a correct call
        program = fxonnx.export(model, (x,), dynamic_shapes=({0: "batch"},), verbose=False)
    assert program.model_proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    for b in (1, 3):
        y = torch.randn(b, 4)
        torch.testing.assert_close(run(program, y)[0], model(y))


# --- 3. arange ----------------------------------------------------------------------------------


class ArangeOfFloats(torch.nn.Module):
    def forward(self, end, start, step):
        return (torch.arange(end, dtype=torch.int64), torch.arange(start, end, step, dtype=torch.int64),
                torch.arange(start, end, 0.5, dtype=torch.int32))


@pytest.mark.parametrize("values", [(8.5, 0.5, 1.3), (3.7, -0.5, 1.3), (2.5, -2.5, 1.0), (2.0, 0.0, 0.5)])
def test_an_integer_arange_of_float_bounds_counts_as_torch(values):
    args = tuple(torch.tensor(v) for v in values)
    program = fxonnx.export(ArangeOfFloats().eval(), args, verbose=False)
    for got, want in zip(run(program, *args), ArangeOfFloats()(*args)):
        assert got.tolist() == want.tolist()


class ArangeModel(torch.nn.Module):
    """test_symbolic_shape_inference_arange_2 of torch's test_pytorch_onnx_onnxruntime.py."""

    def forward(self, start):
        return torch.arange(start.size(0), 8.5, 1.5, dtype=torch.int64)


def test_arange_from_a_dynamic_size_to_a_float_end():
    x = torch.randn(2, 3, 4)
    program = fxonnx.export(ArangeModel().eval(), (x,), input_names=["x"], dynamic_axes={"x": [0, 1, 2]},
                            verbose=False)
    for y in (x, torch.randn(4, 3, 4)):
        assert run(program, y)[0].tolist() == ArangeModel()(y).tolist()


# --- 5. 6. 7. safe beside other threads and callers ---------------------------------------------


class GeluPlusOne(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.nn.functional.gelu(self.linear(x)) + 1


def torch_serializer_state():
    from torch._export.serde import serialize as S
    from torch._export.serde import union as U

    return (S.GraphModuleSerializer.__dict__.copy(), S.canonicalize, S.serialize_tensor_meta,
            U._Union.__dict__["create"], U._Union.__post_init__, torch.fx.GraphModule.print_readable,
            frozenset(S._SYM_OPS), dict(S._TORCH_TO_SERIALIZE_DTYPE))


def test_an_export_changes_nothing_another_caller_of_torch_sees():
    before = torch_serializer_state()
    seen = []

    def gelu(x, approximate="none"):
        # Called while fxonnx serializes the program: torch is what it was for everyone else.
        seen.append(torch_serializer_state() == before)
        return op.Mul(x, op.Sigmoid(op.Mul(x, 1.702)))

    fxonnx.export(GeluPlusOne().eval(), (torch.randn(2, 8),), verbose=False,
                  custom_translation_table={torch.ops.aten.gelu.default: gelu})
    assert seen == [True]
    assert torch_serializer_state() == before


def test_torch_export_save_and_print_readable_in_another_thread_meanwhile():
    ep = torch.export.export(GeluPlusOne().eval(), (torch.randn(2, 8),))

    def gelu(x, approximate="none"):
        return op.Mul(x, op.Sigmoid(op.Mul(x, 1.702)))

    stop = time.monotonic() + 4
    failures = {"load": 0, "print": 0}
    rounds = {"save": 0, "export": 0}

    def other():
        while time.monotonic() < stop:
            buffer = io.BytesIO()
            torch.export.save(ep, buffer)
            buffer.seek(0)
            rounds["save"] += 1
            try:
                torch.export.load(buffer)
            except Exception:
                failures["load"] += 1
            if ep.graph_module.print_readable(print_output=False) == "":
                failures["print"] += 1

    thread = threading.Thread(target=other)
    thread.start()
    while time.monotonic() < stop:
        fxonnx.export(ep, custom_translation_table={torch.ops.aten.gelu.default: gelu}, verbose=False)
        rounds["export"] += 1
    thread.join()
    assert rounds["save"] > 0 and rounds["export"] > 0
    assert failures == {"load": 0, "print": 0}


def test_concurrent_saves_keep_their_own_options(tmp_path):
    program = fxonnx.export(torch.nn.Linear(64, 64).eval(), (torch.randn(2, 64),), verbose=False)
    wrong = []

    def save(external, k):
        for i in range(25):
            f = tmp_path / f"{k}_{i}.onnx"
            program.save(f, external_data=external)
            if (tmp_path / f"{k}_{i}.onnx.data").exists() != external:
                wrong.append(f.name)

    threads = [threading.Thread(target=save, args=(k % 2 == 0, k)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_a_custom_translation_may_export_again():
    class Doubles(torch.nn.Module):
        def forward(self, x):
            return x * 2

    inner = []

    def gelu(x, approximate="none"):
        inner.append(fxonnx.export(Doubles().eval(), (torch.randn(3),), verbose=False))
        return op.Mul(x, op.Sigmoid(x))

    done = []
    thread = threading.Thread(target=lambda: done.append(fxonnx.export(
        GeluPlusOne().eval(), (torch.randn(2, 8),), verbose=False,
        custom_translation_table={torch.ops.aten.gelu.default: gelu})), daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the export deadlocked"
    assert len(done) == 1 and len(inner) == 1


# --- 8. 9. names and files as torch.onnx gives them ---------------------------------------------


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.out(self.fc(x).relu())


@pytest.mark.parametrize("inputs, outputs", [(["x"], ["linear"]), (["fc.weight"], ["relu"]), (["a"], ["x"]),
                                             (["linear_1"], ["fc.bias"])])
def test_names_the_user_gives_are_kept_exactly(inputs, outputs):
    x = torch.randn(2, 8)
    program = fxonnx.export(TwoLayers().eval(), (x,), input_names=inputs, output_names=outputs, verbose=False,
                            optimize=False)
    graph = program.model_proto.graph
    assert [i.name for i in graph.input] == inputs
    assert [o.name for o in graph.output] == outputs
    onnx.checker.check_model(program.model_proto, full_check=True)


def test_two_user_names_alike_are_an_error():
    with pytest.raises(fxonnx.OptionsError, match="given twice"):
        fxonnx.export(TwoLayers().eval(), (torch.randn(2, 8),), input_names=["y"], output_names=["y"],
                      verbose=False)


def test_the_data_file_is_torch_onnx_s_name_after_reading_the_model_too(tmp_path):
    program = fxonnx.export(torch.nn.Linear(64, 64).eval(), (torch.randn(2, 64),), verbose=False)
    program.save(tmp_path / "a.onnx", external_data=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.onnx", "a.onnx.data"]
    program.model  # from now on the onnx_ir model is the program
    program.save(tmp_path / "b.onnx", external_data=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.onnx", "a.onnx.data", "b.onnx", "b.onnx.data"]
    onnx.checker.check_model(str(tmp_path / "b.onnx"), full_check=True)
    # An inline save over it removes the data file the old model read.
    program.save(tmp_path / "b.onnx", external_data=False)
    assert not (tmp_path / "b.onnx.data").exists()
    with pytest.raises(fxonnx.SaveError):
        program.save(tmp_path / "missing" / "c.onnx", external_data=True)


# --- 10. quantization does what it says ---------------------------------------------------------


def test_linear_layers_on_2d_inputs_are_quantized():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)).eval()
    x = torch.randn(3, 64)
    program = fxonnx.export(model, (x,), target="onnxruntime", quantize="int8", verbose=False)
    ops = [n.op_type for n in program.model_proto.graph.node]
    assert ops.count("MatMulNBits") == 2 and "Gemm" not in ops
    torch.testing.assert_close(run(program, x)[0], model(x).detach(), atol=0.02, rtol=0.02)


@pytest.mark.parametrize("block", [8, 48, 512, 65536])
def test_block_sizes_onnx_runtime_cannot_load_are_refused(block):
    with pytest.raises(fxonnx.OptionsError, match="16 to 256"):
        fxonnx.export(torch.nn.Linear(64, 64).eval(), (torch.randn(2, 64),), target="onnxruntime",
                      quantize="int4", quantize_block=block, verbose=False)


# --- 11. custom translations checked against the schema -----------------------------------------


class Softmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, -1) + 1


def test_a_custom_translation_with_a_wrong_attribute_type_is_a_translation_error():
    def bad_softmax(x, dim, dtype=None):
        return op.Softmax(x, axis="zero")

    with pytest.raises(fxonnx.TranslationError, match="bad_softmax") as caught:
        fxonnx.export(Softmax().eval(), (torch.randn(2, 3),), verbose=False,
                      custom_translation_table={torch.ops.aten.softmax.int: bad_softmax})
    assert caught.value.node == "softmax" and "axis" in str(caught.value)


def test_a_custom_translation_that_raises_is_a_translation_error():
    def raising(x, dim, dtype=None):
        raise RuntimeError("boom")

    with pytest.raises(fxonnx.TranslationError, match="boom"):
        fxonnx.export(Softmax().eval(), (torch.randn(2, 3),), verbose=False,
                      custom_translation_table={torch.ops.aten.softmax.int: raising})


# --- 13. messages ------------------------------------------------------------------------------


def test_a_bert_export_with_dynamic_axes_gives_no_warning_beyond_torch_onnx_s():
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=64, vocab_size=100)
    model = transformers.BertModel(config).eval()
    ids, mask = torch.randint(0, 100, (2, 8)), torch.ones(2, 8, dtype=torch.long)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fxonnx.export(model, (ids, mask), input_names=["input_ids", "attention_mask"], verbose=False,
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}})
    messages = [f"{w.category.__name__}: {w.message}" for w in caught
                if "dynamic_axes" not in str(w.message)]  # torch.onnx's own advice on dynamic_axes
    assert messages == []


def test_progress_is_shown_for_each_stage(capsys):
    fxonnx.export(torch.nn.Linear(4, 4).eval(), (torch.randn(2, 4),))
    out = capsys.readouterr().out
    for stage in ("Obtain model graph", "Hand the program", "Translate the graph into ONNX"):
        assert f"{stage}" in out and "✅ (" in out, out


def test_python_errors_name_python_keywords():
    with pytest.raises(fxonnx.TranslationError) as caught:
        fxonnx.export(torch.nn.Conv2d(3, 4, 3).eval(), (torch.randn(1, 3, 8, 8),), verbose=False, max_memory=1)
    assert "--" not in str(caught.value) and "max_memory" in str(caught.value)


def test_verify_checks_the_example_and_other_sizes():
    program = fxonnx.export(torch.nn.Linear(4, 4).eval(), (torch.randn(2, 4),), verbose=False,
                            dynamic_shapes=({0: "batch"},))
    result = program.verify()
    assert {c.input_set.split(" ")[0] for c in result.comparisons} == {"example", "other"}


def test_size_oblivious_reading_stays_in_the_exporting_thread():
    # Both front ends read dynamic sizes as torch.export reads unbacked ones (torch's
    # `backed_size_oblivious`): a config patch, which torch keeps per thread. Another thread's
    # torch.export or kernels meanwhile see the setting as it is.
    import torch.fx.experimental._config as shapes_config

    from fxonnx import _torchscript

    inside, outside = [], []
    run_node = _torchscript.Converter.run_node

    def recording(self, node):
        inside.append(shapes_config.backed_size_oblivious)
        return run_node(self, node)

    done = threading.Event()

    def export():
        try:
            for _ in range(3):
                fxonnx.export(torch.nn.Linear(8, 4).eval(), (torch.randn(2, 8),), dynamo=False, verbose=False,
                              input_names=["x"], dynamic_axes={"x": {0: "n"}})
        finally:
            done.set()

    _torchscript.Converter.run_node = recording
    try:
        thread = threading.Thread(target=export)
        thread.start()
        while not done.is_set():
            outside.append(shapes_config.backed_size_oblivious)
            time.sleep(0.0005)
        thread.join()
    finally:
        _torchscript.Converter.run_node = run_node
    assert inside and all(inside), "the conversion reads sizes size-obliviously"
    assert len(outside) > 10 and not any(outside)
