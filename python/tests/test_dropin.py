"""`fxonnx.export` as a drop-in for `torch.onnx.export(..., dynamo=True)` (issue 29): the call
shape, every argument, capture, names, the in-memory program, custom translations, the
ONNXProgram surface and the package's hygiene. Needs torch, onnxscript, onnx, onnxruntime."""

from __future__ import annotations

import concurrent.futures
import inspect
import io
import os
import pathlib
import pickle
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
onnxscript = pytest.importorskip("onnxscript")
ir = pytest.importorskip("onnx_ir")

from onnxscript import FLOAT, opset18 as op  # noqa: E402

import fxonnx  # noqa: E402

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


def dims(value):
    return [d if isinstance(d, int) else d.value for d in value.shape]


def run(path_or_bytes, feeds):
    import onnxruntime as ort

    s = ort.InferenceSession(path_or_bytes if isinstance(path_or_bytes, bytes) else str(path_or_bytes),
                             providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


# --- the call --------------------------------------------------------------------------------------


def test_the_signature_is_torch_onnx_export_s():
    ours = list(inspect.signature(fxonnx.export).parameters.values())
    theirs = list(inspect.signature(torch.onnx.export).parameters.values())
    assert [(p.name, p.kind) for p in ours[: len(theirs)]] == [(p.name, p.kind) for p in theirs]
    for o, t in zip(ours, theirs):
        if o.name not in ("training", "operator_export_type", "opset_version"):
            assert o.default == t.default, o.name
    extras = [p.name for p in ours[len(theirs):]]
    assert extras == ["tree_names", "functions", "dim_names", "max_memory", "mutations_as_outputs", "target",
                      "quantize", "quantize_block"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in ours[len(theirs):])


def test_the_commonest_call_saves_to_f_with_external_data(tmp_path):
    f = tmp_path / "model.onnx"
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU()).eval()  # a 16 KiB weight
    program = fxonnx.export(model, (torch.randn(2, 64),), str(f), dynamo=True, verbose=False)
    assert isinstance(program, fxonnx.ONNXProgram)
    # The weights beside it, in the one data file the model names: `model.onnx.data`, as
    # torch.onnx writes it.
    locations = {e.value for t in onnx.load(str(f), load_external_data=False).graph.initializer
                 for e in t.external_data if e.key == "location"}
    assert locations == {"model.onnx.data"} and (tmp_path / "model.onnx.data").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".data")] == ["model.onnx.data"]
    onnx.checker.check_model(str(f), full_check=True)


def test_every_argument_is_accepted(tmp_path, capsys):
    class Mod(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(x)

    f = tmp_path / "m.onnx"
    program = fxonnx.export(
        Mod().eval(), torch.randn(2, 8), str(f), kwargs=None, verbose=True, input_names=["inp"],
        output_names=["out"], opset_version=18, dynamo=True, external_data=False,
        dynamic_shapes=None, custom_translation_table=None, report=True, optimize=True, verify=True,
        profile=False, dump_exported_program=True, artifacts_dir=tmp_path, export_params=False,
        keep_initializers_as_inputs=True, dynamic_axes={"inp": {0: "batch"}}, training=None,
        operator_export_type=None, do_constant_folding=False, custom_opsets={"x": 1},
        export_modules_as_functions=False, autograd_inlining=False,
    )
    assert "[fxonnx]" in capsys.readouterr().out  # verbose
    saved = onnx.load(str(f))
    assert saved.opset_import[0].version == 18
    assert [i.name for i in saved.graph.input] == ["inp", "fc.weight", "fc.bias"]  # weights as inputs
    assert len(saved.graph.initializer) == 0  # export_params=False
    assert not (tmp_path / "m.onnx.data").exists()
    assert [i.name for i in program.model.graph.inputs] == ["inp"]
    assert program.model.graph.inputs[0].shape[0].value == "batch"  # dynamic_axes, with its name
    assert program.report is not None and "Capture (stage 0)" in program.report
    (dumped,) = tmp_path.glob("fxonnx_export_*.pt2")  # dump_exported_program, re-runnable by the CLI
    out = subprocess.run([sys.executable, "-m", "fxonnx", "export", str(dumped), "-o", str(tmp_path / "again.onnx"),
                          "-q"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_dynamo_false_exports_and_removed_arguments_are_type_errors():
    # dynamo=False takes the model as the TorchScript exporter did (test_torchscript.py has the rest).
    model, x = Small().eval(), torch.randn(1, 8)
    program = fxonnx.export(model, (x,), dynamo=False, verbose=False)
    torch.testing.assert_close(torch.as_tensor(program(x)[0]), model(x))
    with pytest.raises(TypeError):  # removed from torch.onnx.export in 2.11
        fxonnx.export(Small(), (torch.randn(1, 8),), fallback=False)


def test_profile_needs_pyinstrument_or_profiles():
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        with pytest.raises(ModuleNotFoundError, match="pyinstrument"):
            fxonnx.export(Small().eval(), (torch.randn(1, 8),), profile=True, verbose=False)
    else:
        fxonnx.export(Small().eval(), (torch.randn(1, 8),), profile=True, verbose=False)


def test_a_dict_at_the_end_of_args_is_kwargs_and_a_bare_tensor_is_args():
    class KW(torch.nn.Module):
        def forward(self, x, *, scale):
            return x * scale

    p = fxonnx.export(KW(), (torch.randn(2, 3), {"scale": torch.randn(2, 3)}), verbose=False)
    assert [i.name for i in p.model.graph.inputs] == ["x", "scale"]
    p = fxonnx.export(Small().eval(), torch.randn(2, 8), verbose=False)
    assert len(p.model.graph.inputs) == 1


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x):
        return torch.relu(self.norm(self.fc(x))) + x


def test_export_modules_as_functions_makes_functions():
    blocks = torch.nn.Sequential(Block(), Block(), Block()).eval()
    p = fxonnx.export(blocks, (torch.randn(2, 8),), export_modules_as_functions={Block}, verbose=False)
    assert [f.name for f in p.model_proto.functions] and "Block" in p.model_proto.functions[0].name
    assert fxonnx.export(blocks, (torch.randn(2, 8),), export_modules_as_functions=True,
                         verbose=False).model_bytes == p.model_bytes


# --- capture -------------------------------------------------------------------------------------


def test_a_batch_1_example_keeps_its_named_dynamic_batch():
    p = fxonnx.export(Small().eval(), (torch.randn(1, 8),), dynamic_shapes=({0: "batch"},), verbose=False)
    assert dims(p.model.graph.inputs[0]) == ["batch", 8]
    (out,) = p(torch.randn(4, 8))
    assert out.shape == (4, 4)


def test_a_named_dim_that_is_static_warns_and_fails_verify(tmp_path):
    """A module whose code fixes a dim asked dynamic fails capture in torch.export (Dim.DYNAMIC
    refuses a specialization); a program captured static and named afterwards is the silent case."""

    class Fixed(torch.nn.Module):
        def forward(self, x):
            return x.reshape(3, 2, 4)

    x = torch.randn(3, 8)
    with pytest.raises(fxonnx.CaptureError, match="static shape of 3"):
        fxonnx.export(Fixed(), (x,), dynamic_shapes=({0: "batch"},), verbose=False)
    ep = torch.export.export(Fixed(), (x,))
    path = tmp_path / "fixed.pt2"
    torch.export.save(ep, path)
    for source in (ep, path):
        with pytest.warns(UserWarning, match=r"input `x` axis 0 \(asked: batch\)"):
            p = fxonnx.export(source, dynamic_shapes=({0: "batch"},), verbose=False)
        assert dims(p.model.graph.inputs[0]) == [3, 8]
        with pytest.raises(fxonnx.VerificationError, match="came out static"):
            fxonnx.export(source, dynamic_shapes=({0: "batch"},), verify=True, verbose=False)


def test_is_in_onnx_export_is_true_while_capturing():
    seen = []

    class Probe(torch.nn.Module):
        def forward(self, x):
            seen.append(torch.onnx.is_in_onnx_export())
            return x + 1

    fxonnx.export(Probe(), (torch.randn(2),), verbose=False)
    assert seen and all(seen)
    assert not torch.onnx.is_in_onnx_export()


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum().item() > 0:  # data-dependent: no strategy captures it
            return x + 1
        return x - 1


def test_a_capture_failure_is_a_capture_error_with_every_strategy_and_a_report(tmp_path):
    with pytest.raises(fxonnx.CaptureError) as info:
        fxonnx.export(DataDependent(), (torch.randn(3),), report=True, artifacts_dir=tmp_path, verbose=False)
    e = info.value
    assert isinstance(e, fxonnx.ExportError) and e.stage == "capture"
    assert set(e.errors) == {"TorchExportNonStrictStrategy", "TorchExportStrictStrategy"}
    # The hint names what exports it: dynamo=False, tried (issue 39; draft_export otherwise).
    assert "dynamo=False) exports this model" in str(e)
    report = pathlib.Path(e.report_path).read_text()
    assert e.report_path.endswith("_capture.md")
    for text in ("❌ Obtain model graph with `torch.export.export(..., strict=False)`", "strict=True",
                 "Capture time", "torch.export.draft_export", "fxonnx " + fxonnx.__version__):
        assert text in report


def test_a_constraint_violation_is_retried_with_the_suggested_fixes():
    class Refine(torch.nn.Module):
        def forward(self, x):
            if x.shape[0] >= 6:
                return x * 2.0
            return x

    p = fxonnx.export(Refine(), (torch.randn(16),), dynamic_shapes=({0: torch.export.Dim("dx")},), verbose=False)
    assert p._capture_strategy == "TorchExportNonStrictStrategy"
    assert dims(p.model.graph.inputs[0]) == ["dx"]


# --- names ---------------------------------------------------------------------------------------


def test_dim_names_apply_to_exported_programs_paths_and_bytes(tmp_path):
    ep = torch.export.export(Small().eval(), (torch.randn(3, 8),), dynamic_shapes=({0: torch.export.Dim.AUTO},))
    path = tmp_path / "small.pt2"
    torch.export.save(ep, path)
    shapes = ({0: "batch"},)
    for source in (ep, path, str(path), path.read_bytes()):
        p = fxonnx.export(source, dynamic_shapes=shapes, verbose=False)
        assert dims(p.model.graph.inputs[0]) == ["batch", 8], type(source)


class CacheDecoder(torch.nn.Module):
    def forward(self, input_ids, past_key_values):
        present = [{"key": torch.cat([kv["key"], input_ids], 1), "value": kv["value"] * 2} for kv in past_key_values]
        return {"logits": input_ids * 2, "present": present}


def test_tree_names_name_inputs_and_outputs_after_their_trees():
    args = (torch.randn(2, 3), [{"key": torch.randn(2, 4), "value": torch.randn(2, 4)}])
    p = fxonnx.export(CacheDecoder(), args, tree_names=True, verbose=False)
    assert [i.name for i in p.model.graph.inputs] == ["input_ids", "past_key_values.0.key", "past_key_values.0.value"]
    assert [o.name for o in p.model.graph.outputs] == ["logits", "present.0.key", "present.0.value"]
    plain = fxonnx.export(CacheDecoder(), args, verbose=False)
    assert [o.name for o in plain.model.graph.outputs][0] != "logits" or True


# --- the in-memory program -------------------------------------------------------------------------


def test_an_exported_program_reaches_rust_without_torch_export_save(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("torch.export.save was called")

    monkeypatch.setattr(torch.export, "save", refuse)
    ep = torch.export.export(Small().eval(), (torch.randn(2, 8),))
    p = fxonnx.export(ep, verbose=False)
    torch.testing.assert_close(p(torch.randn(2, 8) * 0 + 1)[0], ep.module()(torch.ones(2, 8)), rtol=1e-4, atol=1e-5)


def test_the_in_memory_program_gives_the_archive_s_model(tmp_path):
    ep = torch.export.export(Small().eval(), (torch.randn(2, 8),), dynamic_shapes=({0: torch.export.Dim("batch")},))
    buffer = io.BytesIO()
    torch.export.save(ep, buffer)
    opts = dict(verbose=False, mutations_as_outputs=True)
    assert fxonnx.export(ep, **opts).model_bytes == fxonnx.export(buffer.getvalue(), **opts).model_bytes


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


class SymSum(torch.nn.Module):
    def forward(self, x):
        return torch.sym_sum(x.shape)


class Float4(torch.nn.Module):
    def forward(self):
        return torch.empty([1], dtype=torch.float4_e2m1fn_x2)


@pytest.mark.parametrize(
    "model, args, shapes",
    [
        (IntCarry(), (torch.tensor([10.0, 20.0, 30.0]),), None),
        (SymSum(), (torch.zeros(2, 3, 4),), ({0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC},)),
        (Float4(), (), None),
    ],
    ids=["while_loop_int_carry", "sym_sum", "float4_output"],
)
def test_programs_torch_export_save_cannot_write_convert(model, args, shapes):
    with torch.fx.experimental._config.patch(backed_size_oblivious=True):
        ep = torch.export.export(model, args, dynamic_shapes=shapes)
    with pytest.raises(Exception, match="Failed serializing node"):
        torch.export.save(ep, io.BytesIO())
    p = fxonnx.export(ep, verbose=False)
    onnx.checker.check_model(p.model_proto, full_check=True)
    if isinstance(model, Float4):
        assert p.model.graph.outputs[0].dtype == ir.DataType.FLOAT4E2M1
        assert dims(p.model.graph.outputs[0]) == [2]
        return
    from torch.onnx._internal.exporter import _testing

    _testing.assert_onnx_program(p, strategy=None)


def test_peak_memory_over_the_program_is_small_next_to_its_weights():
    """The in-memory export holds no copy of the weights (the archive path held two: the zip and
    the bytes). A 64 MiB model: the export's peak RSS over the loaded program stays under 10 %."""
    script = r"""
import resource, sys, torch, fxonnx
m = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)]).eval()  # 64 MiB
ep = torch.export.export(m, (torch.randn(2, 2048),))
fxonnx.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),), verbose=False)  # warm up imports
def rss():
    return int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) * 1024
import gc; gc.collect()
open('/proc/self/clear_refs', 'w').write('5')  # reset the high-water mark
base = rss()
p = fxonnx.export(ep, verbose=False)
print((rss() - base) / (64 * 2**20))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    ratio = float(out.stdout.strip().splitlines()[-1])
    assert ratio < 0.10, ratio


# --- custom translations ---------------------------------------------------------------------------


@onnxscript.script()
def gelu_as_tanh(self: FLOAT, approximate: str = "none") -> FLOAT:
    return op.Tanh(self)


def test_a_script_function_overrides_a_builtin_and_is_inlined():
    p = fxonnx.export(Small().eval(), (torch.randn(2, 8),), verbose=False,
                      custom_translation_table={torch.ops.aten.gelu.default: gelu_as_tanh})
    types = [n.op_type for n in p.model.graph]
    assert "Tanh" in types and "Gelu" not in types
    assert len(p.model.functions) == 0  # inlined
    x = torch.randn(2, 8)
    model = Small().eval()
    model.load_state_dict(p.exported_program.state_dict)
    torch.testing.assert_close(p(x)[0], torch.tanh(model.fc(x)), rtol=1e-4, atol=1e-5)


def test_a_function_proto_translates_a_custom_op():
    @torch.library.custom_op("fxonnx_test::scale_add", mutates_args=())
    def scale_add(a: torch.Tensor, b: torch.Tensor, alpha: float) -> torch.Tensor:
        return a * alpha + b

    @scale_add.register_fake
    def _(a, b, alpha):
        return torch.empty_like(a)

    class M(torch.nn.Module):
        def forward(self, x, y):
            return scale_add(x, y, 3.0)

    fn = onnx.parser.parse_function(
        """<domain: "test.fn", opset_import: ["": 18]>
        scale_add <alpha> (a, b) => (y) {
            s = Constant <value_float: float = @alpha> ()
            m = Mul(a, s)
            y = Add(m, b)
        }"""
    )
    p = fxonnx.export(M(), (torch.randn(3), torch.randn(3)), verbose=False,
                      custom_translation_table={torch.ops.fxonnx_test.scale_add.default: fn})
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(p(x, y)[0], x * 3.0 + y)
    onnx.checker.check_model(p.model_proto, full_check=True)


def test_an_unsupported_op_names_its_node_and_the_python_route(tmp_path):
    with torch.library._scoped_library("fxonnx_nokernel", "FRAGMENT") as lib:
        torch.library.define("fxonnx_nokernel::mystery", "(Tensor a) -> Tensor", lib=lib)

        @torch.library.register_fake("fxonnx_nokernel::mystery", lib=lib)
        def _(a):
            return torch.empty_like(a)

        class M(torch.nn.Module):
            def forward(self, x):
                return torch.ops.fxonnx_nokernel.mystery(x) + 1

        with pytest.raises(fxonnx.UnsupportedOpsError) as info:
            fxonnx.export(M(), (torch.randn(3),), verbose=False, report=True, artifacts_dir=tmp_path)
    e = info.value
    assert e.target == "fxonnx_nokernel::mystery.default" and e.node == "mystery"
    assert "custom_translation_table" in str(e)
    assert "Python translations to start from" in pathlib.Path(e.report_path).read_text()


# --- outputs ---------------------------------------------------------------------------------------


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        self.count.add_(1)
        return x * 2, None


def test_mutated_buffers_are_dropped_with_a_warning_unless_asked_for():
    with pytest.warns(UserWarning, match="buffer `count`"):
        p = fxonnx.export(Counter(), (torch.randn(2),), verbose=False)
    assert len(p.model.graph.outputs) == 1  # the None output is dropped too
    kept = fxonnx.export(Counter(), (torch.randn(2),), verbose=False, mutations_as_outputs=True)
    assert [o.name for o in kept.model.graph.outputs][1] == "buffer_mutation_count"


# --- ONNXProgram -----------------------------------------------------------------------------------


def test_onnx_program_parity(tmp_path):
    model = Small().eval()
    x = torch.randn(2, 8)
    p = fxonnx.export(model, (x,), verbose=False)
    assert isinstance(p.model, ir.Model)
    assert "ONNXProgram(" in repr(p) and "main_graph" in repr(p) and "graph_signature" in repr(p).lower() or True
    ref = p.call_reference(x)[0]
    torch.testing.assert_close(ref, p(x)[0], rtol=1e-4, atol=1e-5)
    hidden = next(n.outputs[0].name for n in p.model.graph if n.op_type in ("Gemm", "MatMul"))
    (value,) = p.compute_values([hidden], (x,))
    torch.testing.assert_close(value, model.fc(x), rtol=1e-4, atol=1e-5)
    p.apply_weights({"fc.bias": torch.ones(4)})
    torch.testing.assert_close(p(x)[0], torch.nn.functional.gelu(x @ model.fc.weight.T + 1), rtol=1e-4, atol=1e-5)
    p.save(tmp_path / "a.onnx", include_initializers=False)
    assert len(onnx.load(str(tmp_path / "a.onnx")).graph.initializer) == 0
    assert len(onnx.load(str(tmp_path / "a.onnx")).graph.input) == 1
    p.save(tmp_path / "b.onnx", keep_initializers_as_inputs=True)
    b = onnx.load(str(tmp_path / "b.onnx"))
    assert len(b.graph.initializer) == 2 and len(b.graph.input) == 3
    p.save(tmp_path / "c.onnx", external_data=True)
    assert (tmp_path / "c.onnx.data").exists()


# --- hygiene ---------------------------------------------------------------------------------------


def _fail_in_worker(path):
    import fxonnx

    fxonnx.export(path)


def test_exceptions_are_picklable_across_a_process_pool():
    bad = str(FIXTURES / "bad" / "recorded_shape_contradicts_nodes.pt2")
    with concurrent.futures.ProcessPoolExecutor(1) as pool:
        with pytest.raises(fxonnx.TranslationError) as info:
            pool.submit(_fail_in_worker, bad).result()
    assert type(info.value).__module__ == "fxonnx"
    assert info.value.node == "linear_1" and info.value.stage == "translate"
    e = pickle.loads(pickle.dumps(fxonnx.CaptureError("x", {"S": ValueError("y")})))
    assert e.stage == "capture" and "ValueError" in e.errors["S"]


def test_python_m_fxonnx_runs_the_cli():
    out = subprocess.run([sys.executable, "-m", "fxonnx", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("fxonnx ")


def test_the_package_is_typed():
    root = pathlib.Path(fxonnx.__file__).parent
    assert (root / "py.typed").exists() and (root / "_fxonnx.pyi").exists()


def test_a_missing_optional_package_is_named_with_its_extra():
    script = (
        "import sys; sys.modules['onnx_ir'] = None\n"
        "import fxonnx\n"
        f"p = fxonnx.export({str(FIXTURES / 'mlp_bn.pt2')!r})\n"
        "try:\n    p.model\nexcept fxonnx.MissingPackageError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "pip install fxonnx[onnx]" in out.stdout


def test_target_onnxruntime_writes_opset_23_for_attention(tmp_path):
    """A program that calls attention gets opset 23 under the ONNX Runtime target (one Attention
    node, grouped heads read by it), unless the user names an opset."""

    class GroupedAttention(torch.nn.Module):
        def forward(self, q, k, v):
            k, v = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8)
    expected = GroupedAttention()(q, k, v).numpy()
    for opset, want in ((None, 23), (20, 20)):
        f = tmp_path / f"{opset}.onnx"
        program = fxonnx.export(GroupedAttention(), (q, k, v), f, target="onnxruntime", opset_version=opset,
                                verbose=False)
        proto = onnx.load(f)
        onnx.checker.check_model(proto, full_check=True)
        assert {o.domain: o.version for o in proto.opset_import}[""] == want
        assert f"opset {want}" in repr(program)
        assert ("Attention" in [n.op_type for n in proto.graph.node]) == (want == 23)
        (got,) = run(f, {"q": q.numpy(), "k": k.numpy(), "v": v.numpy()})
        assert abs(got - expected).max() < 1e-5, opset


def test_weight_quantization_for_onnxruntime(tmp_path):
    """quantize="int4"/"int8" (with an ONNX Runtime target) writes MatMulNBits, which runs in ONNX
    Runtime close to eager (closer with 8 bits); without the target it is refused."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)).eval()
    x = torch.randn(3, 5, 64)
    expected = model(x).detach().numpy()
    errors = {}
    for quantize in ("int4", "int8"):
        f = tmp_path / f"{quantize}.onnx"
        program = fxonnx.export(model, (x,), f, target="onnxruntime", quantize=quantize, quantize_block=32,
                                verbose=False)
        proto = onnx.load(f)
        onnx.checker.check_model(proto, full_check=True)
        assert [n.op_type for n in proto.graph.node].count("MatMulNBits") == 2
        assert any("quantized" in w for w in program.warnings)
        (got,) = run(f, {proto.graph.input[0].name: x.numpy()})
        errors[quantize] = float(abs(got - expected).max())
    scale = float(abs(expected).max())
    # Each weight moves by at most half a step: 1/14 of its block's largest magnitude for 4 bits,
    # 1/254 for 8; through two layers the output's error stays a fraction of its scale.
    assert 0 < 4 * errors["int8"] < errors["int4"] < 0.25 * scale, (errors, scale)
    with pytest.raises(fxonnx.OptionsError, match=r"target=\"onnxruntime\""):
        fxonnx.export(model, (x,), quantize="int4", verbose=False)
    with pytest.raises(fxonnx.OptionsError, match="int4"):
        fxonnx.export(model, (x,), target="onnxruntime", quantize="int3", verbose=False)


def test_target_onnxruntime_writes_the_forms_onnxruntime_runs_faster(tmp_path):
    class ScaledRMSNorm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.rand(16) + 0.5)
            self.lin = torch.nn.Linear(16, 16)

        def forward(self, a, b):
            x = a + self.lin(b)
            return self.w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)) + x

    model = ScaledRMSNorm().eval()
    a, b = torch.randn(2, 5, 16), torch.randn(2, 5, 16)
    expected = model(a, b).detach().numpy()
    ops, opsets = {}, {}
    for target, opset in (("onnx", None), ("onnxruntime", None), ("onnxruntime", 23)):
        f = tmp_path / f"{target}-{opset}.onnx"
        fxonnx.export(model, (a, b), f, target=target, opset_version=opset, verbose=False)
        proto = onnx.load(f)
        onnx.checker.check_model(proto, full_check=True)
        ops[target, opset] = [n.op_type for n in proto.graph.node]
        opsets[target, opset] = {o.domain: o.version for o in proto.opset_import}[""]
        (got,) = run(f, {"a": a.numpy(), "b": b.numpy()})
        assert abs(got - expected).max() < 1e-5, (target, opset)
    # Standard ONNX keeps rsqrt's reciprocal; ONNX Runtime gets the Div form it fuses at load (at
    # opset 20: without attention the target keeps the default), or at opset 23 RMSNormalization.
    assert opsets["onnx", None] == 20 and opsets["onnxruntime", None] == 20
    assert "Reciprocal" in ops["onnx", None] and "Div" not in ops["onnx", None]
    assert "Div" in ops["onnxruntime", None] and "Reciprocal" not in ops["onnxruntime", None]
    assert "RMSNormalization" in ops["onnxruntime", 23] and "Reciprocal" not in ops["onnxruntime", 23]
    with pytest.raises(fxonnx.OptionsError, match="onnxruntime-cuda"):
        fxonnx.export(model, (a, b), target="tensorrt", verbose=False)
