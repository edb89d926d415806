//! What the tests over `tests/fixtures/` share: the fixtures that export, the Python that checks
//! them, and the check itself (`tests/check_onnx.py`).

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Fixtures that must export and compute what PyTorch computes, with the program to export
/// (`multi_model` packs two).
pub const EXPORTABLE: &[(&str, &str)] = &[
    ("aliases", "model"),
    ("attention_device_kernels", "model"),
    ("attention_internals", "model"),
    ("attention_kernels", "model"),
    ("attention_masks", "model"),
    ("bincount", "model"),
    ("buffer_mutation", "model"),
    ("buffer_mutation_decomposed", "model"),
    ("buffers_views", "model"),
    ("cond", "model"),
    ("convnet", "model"),
    ("convnet_decomposed", "model"),
    ("decoder_deep_llama", "model"),
    ("decoder_llama", "model"),
    ("decoder_mistral", "model"),
    ("decoder_qwen2", "model"),
    ("dict_list_inputs", "model"),
    ("dtypes_misc", "model"),
    ("dyn_bounds_derived", "model"),
    ("effects_tokens", "model"),
    ("einsum", "model"),
    ("embedding_bags", "model"),
    ("fft_ops", "model"),
    ("global_pool_dynamic", "model"),
    ("half_dtypes", "model"),
    ("halo_attn", "model"),
    ("hops_loops", "model"),
    ("lifted_constant", "model"),
    ("linear_2d", "model"),
    ("mlp_bn", "model"),
    ("mlp_strict", "model"),
    ("model_mixtral", "model"),
    ("model_moe", "model"),
    ("model_qwen3_moe", "model"),
    ("more_ops", "model"),
    ("multi_model", "model"),
    ("multi_model", "second"),
    ("multi_outputs", "model"),
    ("nn_ops", "model"),
    ("nn_ops_decomposed", "model"),
    ("quantized_convnet", "model"),
    ("quantized_transformer", "model"),
    ("rnn_half", "model"),
    ("rnn_ops", "model"),
    ("scalar_inputs", "model"),
    ("tied_weights", "model"),
    ("tiny_transformer", "model"),
    ("tiny_transformer_decomposed", "model"),
    ("torchvision_ops", "model"),
    ("unbacked_symbols", "model"),
    ("universe_grad_region", "model"),
    ("universe_grouped_mm", "model"),
    ("universe_backward", "model"),
    ("universe_ops", "model"),
    ("universe_prims", "model"),
    ("universe_quant", "model"),
    ("universe_random", "model"),
    ("universe_weight_norm", "model"),
    ("view_mutation", "model"),
    ("view_mutation_aliases", "model"),
    ("view_mutation_cache", "model"),
    ("view_mutation_decomposed", "model"),
    ("vmap_ops", "model"),
    ("windows_norms", "model"),
];

/// The Python with onnx + onnxruntime + numpy (`FXONNX_PYTHON`), if any.
pub fn python() -> Option<String> {
    match std::env::var("FXONNX_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            // CI must not silently skip the numeric checks.
            assert!(
                std::env::var("CI").is_err(),
                "CI is set but FXONNX_PYTHON is not: the numeric checks would not run"
            );
            None
        }
    }
}

/// `onnx.checker` (full) and ONNX Runtime against PyTorch's outputs on every input set the fixture
/// has; the checker's output either way.
pub fn check_fixture(py: &str, name: &str, model: &str, onnx: &Path) -> Result<String, String> {
    check_fixture_with(py, name, model, onnx, &[])
}

/// [`check_fixture`] with more arguments for `check_onnx.py`.
pub fn check_fixture_with(
    py: &str,
    name: &str,
    model: &str,
    onnx: &Path,
    extra: &[&std::ffi::OsStr],
) -> Result<String, String> {
    let dir = fixtures();
    let mut cmd = Command::new(py);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_onnx.py"))
        .arg(onnx)
        .arg("--pt2")
        .arg(dir.join(format!("{name}.pt2")))
        .arg("--model-name")
        .arg(model);
    for (inputs, expected) in [("inputs", "expected"), ("inputs_alt", "expected_alt")] {
        let i = dir.join(format!("{name}.{inputs}.npz"));
        let e = dir.join(format!("{name}.{expected}.npz"));
        if i.exists() && e.exists() {
            cmd.arg("--inputs").arg(i).arg("--expected").arg(e);
        }
    }
    cmd.args(extra);
    let out = cmd.output().map_err(|e| format!("cannot run check_onnx.py: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}
