//! `--functions`: repeated module calls as model-local ONNX functions. The model computes what
//! PyTorch computes (onnx.checker full, onnxruntime on both input sets), its main graph holds one
//! call per layer, and what cannot be a function says why.

#[path = "support/fixture_check.rs"]
#[allow(dead_code)] // two fixtures here, not the list
mod fixture_check;

use fixture_check::{check_fixture, fixtures, python};
use fxonnx::{ExportOptions, ModuleFunctions};

fn export(name: &str, which: ModuleFunctions, out: &std::path::Path) -> fxonnx::OnnxProgram {
    let options = ExportOptions { module_functions: Some(which), ..Default::default() };
    fxonnx::export_to_file(fixtures().join(format!("{name}.pt2")), out, &options).expect("export")
}

fn decode(path: &std::path::Path) -> fxonnx::internals::proto::ModelProto {
    <fxonnx::internals::proto::ModelProto as prost::Message>::decode(&std::fs::read(path).expect("read")[..])
        .expect("a ModelProto")
}

#[test]
fn auto_makes_one_function_per_repeated_layer_and_computes_what_torch_computes() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, layer, calls) in [("decoder_qwen2", "Qwen2DecoderLayer", 2), ("decoder_llama", "LlamaMLP", 2)] {
        let out = dir.path().join(format!("{name}.onnx"));
        export(name, ModuleFunctions::Auto, &out);
        let model = decode(&out);
        let graph = model.graph.as_ref().expect("graph");
        let made: Vec<_> = graph.node.iter().filter(|n| n.domain == "pkg.fxonnx" && n.op_type == layer).collect();
        assert_eq!(made.len(), calls, "{name}: calls of {layer}");
        let f = model.functions.iter().find(|f| f.name == layer).expect("the function");
        assert!(f.node.len() > 3, "{name}: {layer} has {} nodes", f.node.len());
        // The nodes inside keep their metadata (constants moved in have none); the call node has
        // its module's.
        let translated = f.node.iter().filter(|n| n.op_type != "Constant");
        assert!(translated.into_iter().all(|n| n.metadata_props.iter().any(|p| p.key == "pkg.torch.onnx.name_scopes")));
        let scopes = made[0].metadata_props.iter().find(|p| p.key == "pkg.torch.onnx.name_scopes").expect("scopes");
        assert!(scopes.value.ends_with("0']") || scopes.value.contains(".0"), "{}", scopes.value);
        assert!(model.opset_import.iter().any(|o| o.domain == "pkg.fxonnx"));
        if let Some(py) = python() {
            check_fixture(&py, name, "model", &out).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}

#[test]
fn classes_are_named_in_full_or_short_and_unknown_ones_make_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let short = dir.path().join("short.onnx");
    export("decoder_llama", ModuleFunctions::Classes(vec!["LlamaRMSNorm".into()]), &short);
    let full = dir.path().join("full.onnx");
    let class = "transformers.models.llama.modeling_llama.LlamaRMSNorm".to_string();
    export("decoder_llama", ModuleFunctions::Classes(vec![class]), &full);
    assert!(std::fs::read(&short).expect("short") == std::fs::read(&full).expect("full"));
    let model = decode(&short);
    assert_eq!(model.functions.len(), 1);
    assert_eq!(model.functions[0].name, "LlamaRMSNorm");
    let none = dir.path().join("none.onnx");
    let program = export("decoder_llama", ModuleFunctions::Classes(vec!["NoSuchModule".into()]), &none);
    assert!(decode(&none).functions.is_empty());
    assert!(
        program.warnings().iter().any(|w| w.contains("no module call became a function")),
        "{:?}",
        program.warnings()
    );
}

#[test]
fn exports_without_functions_are_unchanged_and_deterministic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.onnx"), dir.path().join("b.onnx"));
    export("decoder_qwen2", ModuleFunctions::Auto, &a);
    export("decoder_qwen2", ModuleFunctions::Auto, &b);
    assert!(std::fs::read(&a).expect("a") == std::fs::read(&b).expect("b"), "two exports differ");
    let plain = dir.path().join("plain.onnx");
    fxonnx::export_to_file(fixtures().join("decoder_qwen2.pt2"), &plain, &ExportOptions::default()).expect("export");
    assert!(decode(&plain).functions.is_empty());
    // The text form lists the functions after the graph.
    let text = fxonnx::inspect::onnx_text(std::fs::read(&a).expect("a"), false).expect("text");
    assert!(text.contains("Qwen2DecoderLayer ("), "{text}");
}
