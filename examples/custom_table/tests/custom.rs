//! The user crate's tables on fxonnx's fixtures: the custom domain in the graph, the gelu override,
//! and numerics where the translations use standard operators (with FXONNX_PYTHON set).

use std::path::{Path, PathBuf};
use std::process::Command;

use fxonnx::view::Attribute;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(name)
}

fn check_numerics(onnx: &Path, case: &str) {
    let Ok(py) = std::env::var("FXONNX_PYTHON") else {
        assert!(std::env::var("CI").is_err(), "CI is set but FXONNX_PYTHON is not");
        return;
    };
    let mut cmd = Command::new(py);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/check_onnx.py"))
        .arg(onnx)
        .arg("--pt2")
        .arg(fixture(&format!("{case}.pt2")));
    for (i, e) in [("inputs", "expected"), ("inputs_alt", "expected_alt")] {
        let (i, e) = (fixture(&format!("{case}.{i}.npz")), fixture(&format!("{case}.{e}.npz")));
        if i.exists() {
            cmd.arg("--inputs").arg(i).arg("--expected").arg(e);
        }
    }
    let out = cmd.output().expect("python");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

fn options(table: fxonnx::TranslationTable) -> fxonnx::ExportOptions {
    fxonnx::ExportOptions { custom_translation_table: Some(table), ..Default::default() }
}

#[test]
fn custom_op_becomes_a_node_of_the_custom_domain() {
    let program = fxonnx::export(fixture("custom_op.pt2"), &options(fxonnx_custom_table::table())).expect("export");
    let model = program.model();
    let opsets: Vec<_> = model.opset_imports().collect();
    assert!(opsets.contains(&(fxonnx_custom_table::DOMAIN, 2)), "{opsets:?}");
    let mix: Vec<_> = model.nodes().filter(|n| n.op_type() == "Mix").collect();
    assert_eq!(mix.len(), 2);
    assert!(mix.iter().all(|n| n.domain() == fxonnx_custom_table::DOMAIN));
    // The first call passes three tensors and the bias; the second omits the bias.
    assert_eq!(mix[0].inputs().len(), 4);
    assert_eq!(mix[1].inputs().len(), 1);
    assert_eq!(mix[0].attribute("weights"), Some(Attribute::Floats(&[0.5, 2.0, -1.0])));
    let tags: [&[u8]; 3] = [b"left", b"right", b"prod"];
    assert_eq!(mix[0].attribute("tags"), Some(Attribute::Strings(tags.to_vec())));
}

#[test]
fn custom_op_in_standard_operators_matches_pytorch() {
    let program =
        fxonnx::export(fixture("custom_op.pt2"), &options(fxonnx_custom_table::reference::table())).expect("export");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("custom_op.onnx");
    program.save(&out).expect("save");
    check_numerics(&out, "custom_op");
}

#[test]
fn gelu_override_replaces_the_builtin() {
    let program =
        fxonnx::export(fixture("tiny_transformer.pt2"), &options(fxonnx_custom_table::table())).expect("export");
    let model = program.model();
    assert!(!model.nodes().any(|n| n.op_type() == "Gelu"), "the built-in gelu was used");
    assert!(model.nodes().any(|n| n.op_type() == "Tanh"), "the override (tanh approximation) is missing");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("tiny_transformer.onnx");
    program.save(&out).expect("save");
    check_numerics(&out, "tiny_transformer");
    // Without the custom table, the built-in translation emits Gelu.
    let builtin = fxonnx::export(fixture("tiny_transformer.pt2"), &Default::default()).expect("export");
    assert!(builtin.model().nodes().any(|n| n.op_type() == "Gelu"));
}
