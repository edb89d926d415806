"""The Python API without torch: what `pip install fxonnx` gives before anything else is installed."""

import os
import pathlib
import subprocess
import sys

import pytest

import fxonnx

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def cli(*args):
    """The `fxonnx` command of this environment (the package's console script)."""
    exe = pathlib.Path(sys.executable).parent / "fxonnx"
    return subprocess.run([str(exe), *args], capture_output=True, text=True)


def test_import_needs_nothing_else():
    out = subprocess.run(
        [sys.executable, "-c", "import sys, fxonnx; print(sorted(m for m in ('torch', 'onnx', 'onnxruntime', 'numpy') if m in sys.modules))"],
        capture_output=True, text=True, check=True,
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["mlp_bn", "convnet", "tiny_transformer", "hops_loops"])
def test_bytes_path_and_cli_give_the_same_model(tmp_path, name):
    archive = FIXTURES / f"{name}.pt2"
    from_path = fxonnx.export(archive)
    from_bytes = fxonnx.export(archive.read_bytes())
    assert from_path.model_bytes == from_bytes.model_bytes
    saved = tmp_path / "py.onnx"
    from_bytes.save(saved)
    r = cli("export", str(archive), "-o", str(tmp_path / "cli.onnx"), "-q")
    assert r.returncode == 0, r.stderr
    assert saved.read_bytes() == (tmp_path / "cli.onnx").read_bytes()
    assert saved.read_bytes() == from_bytes.model_bytes


def test_options_reach_the_export(tmp_path):
    program = fxonnx.export(FIXTURES / "mlp_bn.pt2", input_names=["features"], output_names=["scores"],
                            dim_names={"s77": "batch"}, report=True, artifacts_dir=tmp_path)
    text = program.model_bytes
    assert b"features" in text and b"scores" in text and b"batch" in text
    assert program.report is not None and "Translate the graph into ONNX" in program.report
    program.save(tmp_path / "m.onnx", external_data=True)
    # mlp_bn's weights are all under 1 KiB: they stay in the model, and no data file is written.
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".data") == []
    fxonnx.export(FIXTURES / "convnet.pt2").save(tmp_path / "c.onnx", external_data=True)
    # The data file is torch.onnx's `<f>.data`, and the only one.
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".data") == ["c.onnx.data"]


@pytest.mark.parametrize(
    "source, error, text",
    [
        (b"not a zip at all", fxonnx.ArchiveError, "is not a zip archive"),
        (FIXTURES / "bad" / "recorded_shape_contradicts_nodes.pt2", fxonnx.TranslationError, "records the shape"),
        (FIXTURES / "bad" / "conv_stride_zero.pt2", fxonnx.TranslationError, "window parameter 0"),
        ("/nonexistent/model.pt2", fxonnx.ArchiveError, "cannot read"),
    ],
)
def test_errors_are_exceptions_of_their_stage(source, error, text):
    with pytest.raises(error) as info:
        fxonnx.export(source)
    assert text in str(info.value)
    assert isinstance(info.value, fxonnx.ExportError)
    assert info.value.stage in ("read", "translate")


def test_translation_errors_name_the_node():
    with pytest.raises(fxonnx.TranslationError) as info:
        fxonnx.export(FIXTURES / "bad" / "recorded_shape_contradicts_nodes.pt2")
    assert info.value.node == "linear_1"
    assert info.value.target == "ONNX Gemm"


def test_an_invalid_option_is_an_options_error():
    with pytest.raises(fxonnx.OptionsError):
        fxonnx.export(FIXTURES / "mlp_bn.pt2", opset_version=3)


def test_a_failed_export_with_a_report_names_it(tmp_path):
    with pytest.raises(fxonnx.TranslationError) as info:
        fxonnx.export(FIXTURES / "bad" / "permute_not_a_permutation.pt2", report=True, artifacts_dir=tmp_path)
    path = info.value.report_path
    assert path is not None and path.name.endswith("_translate.md")
    assert "are not a permutation" in path.read_text()


def test_a_failed_export_leaves_no_file(tmp_path):
    before = set(os.listdir(tmp_path))
    with pytest.raises(fxonnx.ExportError):
        fxonnx.export(FIXTURES / "bad" / "group_norm_huge_groups.pt2", artifacts_dir=tmp_path)
    r = cli("export", str(FIXTURES / "bad" / "group_norm_huge_groups.pt2"), "-o", str(tmp_path / "m.onnx"))
    assert r.returncode == 1 and "groups do not divide" in r.stderr
    assert set(os.listdir(tmp_path)) == before


def test_the_command_line_exit_codes():
    assert cli("--version").stdout.startswith("fxonnx ")
    assert cli("export").returncode == 2
    assert cli("export", "/nonexistent.pt2", "-o", "/tmp/never.onnx").returncode == 1


@pytest.mark.parametrize("name", ["convnet", "tiny_transformer"])
def test_weight_free_save_and_apply_weights_give_the_model_back(tmp_path, name):
    archive = FIXTURES / f"{name}.pt2"
    program = fxonnx.export(archive)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    program.save(tmp_path / "a" / "model.onnx")
    # torch.onnx's weight-free form: no initializers, each weight a graph input.
    program.save(tmp_path / "graph.onnx", include_initializers=False, keep_initializers_as_inputs=True)
    assert (tmp_path / "graph.onnx").stat().st_size < (tmp_path / "a" / "model.onnx").stat().st_size
    n = fxonnx.apply_weights(tmp_path / "graph.onnx", archive, tmp_path / "b" / "model.onnx")
    assert n > 0
    assert (tmp_path / "b" / "model.onnx").read_bytes() == (tmp_path / "a" / "model.onnx").read_bytes()
    # The next save has its weights again.
    program.save(tmp_path / "again.onnx")
    assert (tmp_path / "again.onnx").read_bytes() == (tmp_path / "a" / "model.onnx").read_bytes()
    with pytest.raises(fxonnx.ExportError, match="no-weights"):
        fxonnx.apply_weights(tmp_path / "a" / "model.onnx", archive, tmp_path / "c.onnx")


def test_functions_make_one_call_per_repeated_layer():
    program = fxonnx.export(FIXTURES / "decoder_qwen2.pt2", functions="auto")
    plain = fxonnx.export(FIXTURES / "decoder_qwen2.pt2")
    assert program.model_bytes != plain.model_bytes
    assert b"Qwen2DecoderLayer" in program.model_bytes and b"pkg.fxonnx" in program.model_bytes
    named = fxonnx.export(FIXTURES / "decoder_qwen2.pt2", functions=["Qwen2DecoderLayer"])
    assert named.model_bytes == program.model_bytes
