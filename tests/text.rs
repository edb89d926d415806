//! The text form of ONNX models (`fxonnx::internals::text`) and `fxonnx inspect model.onnx`.

use std::path::{Path, PathBuf};
use std::process::Command;

use fxonnx::internals::proto;
use fxonnx::internals::text::model_text;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Unoptimized, so the text shows the graph as translated (the optimizer folds mlp_bn's
/// BatchNormalization into its first Gemm).
fn export(name: &str) -> fxonnx::OnnxProgram {
    fxonnx::export(fixture(name), &fxonnx::ExportOptions { optimize: false, ..Default::default() }).expect("export")
}

fn has_line(text: &str, line: &str) -> bool {
    text.lines().any(|l| l.trim_end() == line)
}

#[test]
fn mlp_bn_prints_signature_initializers_and_nodes() {
    let model = export("mlp_bn.pt2").model_proto();
    let text = model_text(&model, false);
    let first = text.lines().next().unwrap();
    assert!(first.starts_with(r#"<ir_version: 10, opset_import: ["" : 20], producer_name: "fxonnx""#), "{text}");
    assert!(has_line(&text, "main_graph (float[s77,8] x) => (float[s77,4] linear_1)"), "{text}");
    let inits =
        text.lines().find(|l| l.trim_start().starts_with('<') && !l.starts_with('<')).expect("initializer list");
    assert!(inits.contains("<float[16,8] fc1.weight, float[16] fc1.bias"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("linear = Gemm <transB: int = 1> (x, fc1.weight, fc1.bias)")),
        "{text}"
    );
    assert!(has_line(&text, "{") && has_line(&text, "}"), "{text}");
    // No weight data, no metadata without the flag.
    assert!(!text.contains("namespace"), "{text}");
    assert!(!text.contains("{..."), "{text}");
    // Deterministic.
    assert_eq!(text, model_text(&export("mlp_bn.pt2").model_proto(), false));
}

#[test]
fn mlp_bn_with_metadata() {
    let model = export("mlp_bn.pt2").model_proto();
    let text = model_text(&model, true);
    let lines: Vec<&str> = text.lines().collect();
    let gemm = lines.iter().position(|l| l.trim_start().starts_with("linear = Gemm")).expect("Gemm line");
    let indent = lines[gemm].len() - lines[gemm].trim_start().len();
    let after: Vec<&str> = lines[gemm + 1..].iter().take_while(|l| l.trim_start().starts_with('#')).copied().collect();
    let namespace = after.iter().find(|l| l.trim_start().starts_with("#   namespace: ")).expect("namespace line");
    assert_eq!(namespace.len() - namespace.trim_start().len(), indent, "{text}");
    assert!(namespace.contains("aten.linear.default"), "{namespace}");
    // Every metadata line of the node sits at the node's indentation.
    assert!(after.iter().all(|l| l.len() - l.trim_start().len() == indent), "{text}");
    assert!(after.iter().any(|l| l.contains("pkg.torch.onnx.stack_trace:")), "{text}");
    // Graph, input, initializer and output metadata.
    assert!(has_line(&text, "# graph main_graph"), "{text}");
    assert!(has_line(&text, "# input x"), "{text}");
    assert!(has_line(&text, "# initializer fc1.weight"), "{text}");
    assert!(has_line(&text, "# output linear_1"), "{text}");
    assert!(has_line(&text, "#   pkg.torch.export.graph_signature.InputSpec.kind: PARAMETER"), "{text}");
}

#[test]
fn cond_prints_nested_branches() {
    let model = export("cond.pt2").model_proto();
    let text = model_text(&model, false);
    let lines: Vec<&str> = text.lines().collect();
    let if_line = lines.iter().position(|l| l.contains(" = If (")).expect("If node");
    assert!(lines[if_line].ends_with(" <"), "{text}");
    let node_indent = lines[if_line].len() - lines[if_line].trim_start().len();
    let then = lines.iter().position(|l| l.trim_start().starts_with("then_branch: graph = ")).expect("then_branch");
    let els = lines.iter().position(|l| l.trim_start().starts_with("else_branch: graph = ")).expect("else_branch");
    assert!(if_line < then && if_line < els, "{text}");
    for branch in [then, els] {
        let l = lines[branch];
        assert_eq!(l.len() - l.trim_start().len(), node_indent + 3, "{text}");
        assert!(l.contains(" => ("), "{text}");
        // The branch body is a braced block whose nodes are indented once more.
        let open = lines[branch + 1..].iter().position(|l| l.trim() == "{").expect("{") + branch + 1;
        assert_eq!(lines[open].len() - lines[open].trim_start().len(), node_indent + 3, "{text}");
        let body = lines[open + 1];
        assert_eq!(body.len() - body.trim_start().len(), node_indent + 6, "{text}");
        assert!(body.contains(" = "), "{text}");
    }
}

#[test]
fn odd_protos_print_without_panicking() {
    use proto::type_proto::{Tensor, Value};
    let tensor_type = |elem_type: i32, shape: Option<proto::TensorShapeProto>| proto::TypeProto {
        value: Some(Value::TensorType(Tensor { elem_type, shape })),
        ..Default::default()
    };
    let dim = |v: Option<proto::tensor_shape_proto::dimension::Value>| proto::tensor_shape_proto::Dimension {
        value: v,
        ..Default::default()
    };
    use proto::tensor_shape_proto::dimension::Value as D;
    let graph = proto::GraphProto {
        name: "g".into(),
        input: vec![
            proto::ValueInfoProto { name: "a".into(), r#type: Some(tensor_type(999, None)), ..Default::default() },
            proto::ValueInfoProto { name: "b".into(), r#type: None, ..Default::default() },
            proto::ValueInfoProto {
                name: "c d".into(),
                r#type: Some(tensor_type(
                    16,
                    Some(proto::TensorShapeProto {
                        dim: vec![dim(None), dim(Some(D::DimParam("s0 + 1".into()))), dim(Some(D::DimValue(3)))],
                    }),
                )),
                ..Default::default()
            },
            proto::ValueInfoProto {
                name: "s".into(),
                r#type: Some(tensor_type(7, Some(proto::TensorShapeProto { dim: vec![] }))),
                ..Default::default()
            },
        ],
        initializer: vec![proto::TensorProto { name: "w".into(), data_type: 123, dims: vec![2], ..Default::default() }],
        node: vec![proto::NodeProto {
            op_type: "Constant".into(),
            output: vec!["k".into()],
            attribute: vec![
                proto::AttributeProto {
                    name: "value".into(),
                    r#type: 4,
                    t: Some(proto::TensorProto {
                        data_type: 7,
                        dims: vec![2],
                        raw_data: vec![1, 0, 0, 0, 0, 0, 0, 0, 2].into(), // one byte too many
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                proto::AttributeProto { name: "weird".into(), r#type: 77, ..Default::default() },
            ],
            ..Default::default()
        }],
        ..Default::default()
    };
    let model = proto::ModelProto { ir_version: 10, graph: Some(graph), ..Default::default() };
    let text = model_text(&model, true);
    assert!(has_line(&text, r#"g (dtype(999)[] a, ? b, bfloat16[?,"s0 + 1",3] "c d", int64 s) => ()"#), "{text}");
    assert!(text.contains("<dtype(123)[2] w>"), "{text}");
    assert!(text.contains("value: tensor = int64[2] {...}"), "{text}");
    assert!(text.contains("weird: attr(77) = ?"), "{text}");
    // A model with nothing in it.
    assert!(model_text(&proto::ModelProto::default(), true).starts_with("<ir_version: 0, opset_import: []>"));
}

fn fxonnx(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fxonnx")).args(args).output().expect("run fxonnx")
}

#[test]
fn cli_inspects_onnx_models() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mlp_bn.onnx");
    export("mlp_bn.pt2").save(&path).expect("save");
    let o = fxonnx(&["inspect".as_ref(), path.as_os_str(), "--metadata".as_ref()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(has_line(&text, "main_graph (float[s77,8] x) => (float[s77,4] linear_1)"), "{text}");
    assert!(text.contains("linear = Gemm <transB: int = 1> (x, fc1.weight, fc1.bias)"), "{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("#   namespace: ")), "{text}");
    // The same text as the library prints.
    assert_eq!(text, model_text(&export("mlp_bn.pt2").model_proto(), true));

    // Without --metadata, and with the weights in an external data file that is not read.
    let ext = dir.path().join("ext.onnx");
    let options = fxonnx::ExportOptions { external_data: true, optimize: false, ..Default::default() };
    fxonnx::export(fixture("mlp_bn.pt2"), &options).expect("export").save(&ext).expect("save");
    for data in fxonnx::internals::save::data_files_of(&ext) {
        std::fs::remove_file(data).expect("remove the data file");
    }
    let o = fxonnx(&["inspect".as_ref(), ext.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("float[16,8] fc1.weight"), "{text}");
    assert!(!text.contains("namespace"), "{text}");

    // .pt2 archives are still printed as FX programs.
    let o = fxonnx(&["inspect".as_ref(), fixture("mlp_bn.pt2").as_os_str()]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("torch.ops.aten.batch_norm.default"));
}

#[test]
fn cli_refuses_garbage_with_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes) in [
        ("garbage.onnx", b"this is not a model, just some text\n".to_vec()),
        ("empty.onnx", Vec::new()),
        ("noise.bin", (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect()),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write");
        let o = fxonnx(&["inspect".as_ref(), p.as_os_str()]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains("neither a .pt2 archive nor an ONNX model"),
            "{stderr}"
        );
        assert!(o.stdout.is_empty(), "{name}");
    }
    let o = fxonnx(&["inspect".as_ref(), "/nonexistent/model.onnx".as_ref()]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: cannot read /nonexistent/model.onnx"), "{stderr}");
}

/// The report prints the model from an outline (no weight bytes, no node metadata): the text is
/// the full model's without metadata, subgraphs and folded weights included.
#[test]
fn outline_prints_as_the_full_model_without_metadata() {
    for name in ["cond.pt2", "convnet.pt2", "tiny_transformer.pt2", "hops_loops.pt2"] {
        let program = fxonnx::export(fixture(name), &fxonnx::ExportOptions::default()).expect("export");
        let outline = fxonnx::internals::save::to_proto_outline(program.ir());
        assert!(outline.graph.as_ref().expect("graph").node.iter().all(|n| n.metadata_props.is_empty()), "{name}");
        assert_eq!(model_text(&outline, false), model_text(&program.model_proto(), false), "{name}");
    }
}
