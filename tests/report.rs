//! The markdown export report, read back with pulldown-cmark: its sections, the analysis tables,
//! and on failure every untranslated target with its nodes and a skeleton.

use std::path::Path;

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

struct Parsed {
    headings: Vec<(HeadingLevel, String)>,
    /// Each table as rows of cell texts (header first).
    tables: Vec<Vec<Vec<String>>>,
    code: Vec<String>,
}

fn parse(md: &str) -> Parsed {
    let mut p = Parsed { headings: vec![], tables: vec![], code: vec![] };
    let mut text = String::new();
    let mut heading = None;
    let (mut in_code, mut in_cell) = (false, false);
    for ev in Parser::new_ext(md, pulldown_cmark::Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some(level);
                text.clear();
            }
            Event::End(TagEnd::Heading(_)) => p.headings.push((heading.take().expect("level"), text.clone())),
            Event::Start(Tag::Table(_)) => p.tables.push(vec![]),
            Event::Start(Tag::TableHead) | Event::Start(Tag::TableRow) => {
                p.tables.last_mut().expect("table").push(vec![])
            }
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                text.clear();
            }
            Event::End(TagEnd::TableCell) => {
                in_cell = false;
                p.tables.last_mut().and_then(|t| t.last_mut()).expect("row").push(text.clone());
            }
            Event::Start(Tag::CodeBlock(_)) => {
                in_code = true;
                text.clear();
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code = false;
                p.code.push(text.clone());
            }
            Event::Text(t) | Event::Code(t) if (heading.is_some() || in_cell || in_code) => {
                text.push_str(&t);
            }
            _ => {}
        }
    }
    p
}

fn report_for(archive: &str) -> (Result<fxonnx::OnnxProgram, fxonnx::Error>, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = fxonnx::ExportOptions {
        report: true,
        report_html: true,
        artifacts_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let out = dir.path().join("model.onnx");
    let result = fxonnx::export_to_file(fixture(archive), &out, &opts);
    let md: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    assert_eq!(md.len(), 1, "one report expected: {md:?}");
    let name = md[0].file_name().expect("name").to_string_lossy().to_string();
    assert!(name.starts_with("fxonnx_export_"), "{name}");
    let html = md[0].with_extension("html");
    let html = std::fs::read_to_string(html).expect("html report");
    assert!(html.contains("<table>") && html.contains("<h2>Analysis</h2>"), "html rendering");
    (result, std::fs::read_to_string(&md[0]).expect("read"), dir)
}

fn h2(p: &Parsed) -> Vec<&str> {
    p.headings.iter().filter(|(l, _)| *l == HeadingLevel::H2).map(|(_, t)| t.as_str()).collect()
}

#[test]
fn success_report() {
    let (result, md, dir) = report_for("mlp_bn.pt2");
    let program = result.expect("export");
    assert!(program.report_path().expect("path").to_string_lossy().ends_with("_success.md"));
    assert!(dir.path().join("model.onnx").exists());
    let p = parse(&md);
    assert_eq!(
        h2(&p),
        [
            "Error messages",
            "Exported program",
            "ONNX model",
            "Analysis",
            "Optimizer statistics",
            "Time and memory per stage"
        ]
    );
    assert!(p.code[0].lines().all(|l| l.starts_with('✅')), "status block: {}", p.code[0]);
    // Analysis: the parameter table counts fc1, bn and fc2 (6 float32 parameters, 244 elements).
    let params = p.tables.iter().find(|t| t[0] == ["kind", "dtype", "tensors", "elements"]).expect("parameter table");
    assert!(params.contains(&vec!["parameter".into(), "float32".into(), "6".into(), "244".into()]), "{params:?}");
    assert!(params.contains(&vec!["buffer".into(), "int64".into(), "1".into(), "1".into()]), "{params:?}");
    let io = p.tables.iter().find(|t| t[0] == ["name", "kind", "type"]).expect("io table");
    assert!(io.contains(&vec!["x".into(), "input".into(), "float32[s77, 8]".into()]), "{io:?}");
    let nodes = p.tables.iter().find(|t| t[0] == ["target", "count"]).expect("node table");
    assert!(nodes.contains(&vec!["torch.ops.aten.linear.default".into(), "2".into()]), "{nodes:?}");
    assert!(md.contains("All operators in the program have translations."));
    let stages = p.tables.iter().find(|t| t[0][0] == "stage").expect("stage table");
    assert_eq!(stages.len(), 6);
    assert!(stages[1..].iter().all(|r| r[1] == "ok"), "{stages:?}");
}

#[test]
fn failure_report_lists_every_missing_target() {
    let (result, md, dir) = report_for("custom_op.pt2");
    assert!(result.is_err());
    assert!(!dir.path().join("model.onnx").exists(), "no output on failure");
    let p = parse(&md);
    assert!(h2(&p).contains(&"Analysis"));
    assert!(!h2(&p).contains(&"ONNX model"));
    assert!(p.code[0].contains("❌ Translate the graph into ONNX"), "{}", p.code[0]);
    assert!(p.code[0].contains("⚪ Save the model"));
    let h4: Vec<&str> = p.headings.iter().filter(|(l, _)| *l == HeadingLevel::H4).map(|(_, t)| t.as_str()).collect();
    assert_eq!(h4, ["torch.ops.fxonnx_samples.mix.default"]);
    assert!(md.contains("All nodes (2): `mix`, `mix_1`"), "{md}");
    let skeleton = p.code.iter().find(|c| c.contains("#[target(")).expect("skeleton");
    assert!(skeleton.contains("#[target(\"fxonnx_samples::mix.default\")]"), "{skeleton}");
    assert!(skeleton.contains("xs: Vec<Tensor>") && skeleton.contains("r#use: Vec<bool>"), "{skeleton}");
}
