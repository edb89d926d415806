//! The two writers give the same bytes, inline and with external data, on every fixture.

use std::path::{Path, PathBuf};

use super::*;
use crate::onnx::ir::Model;
use crate::pt2::Archive;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pt2"))
        .collect();
    v.sort();
    v
}

/// The optimized model of `archive`, as `fxonnx export` makes it, or `None` when the fixture is
/// one that fails to export (error fixtures).
fn export(archive: &Archive) -> Option<Model> {
    let loaded = archive.load("model").ok()?;
    let program = crate::fx::Program::new(&loaded).ok()?;
    let table = crate::translations::default_table();
    let options = crate::translate::lower::LowerOptions {
        opset: crate::DEFAULT_OPSET,
        table: &table,
        dim_names: &Default::default(),
        input_names: &[],
        output_names: &[],
        debug_outputs: false,
        max_memory: None,
        mutations_as_outputs: true,
    };
    let (mut model, _) = crate::translate::lower::lower(&program, &options).ok()?;
    crate::optimize::optimize(&mut model);
    Some(model)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn plain_and_streamed_saves_are_byte_identical() {
    // One folder per writer: the data file's name is written in the model.
    let (plain_dir, stream_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (plain_path, stream_path) = (plain_dir.path().join("m.onnx"), stream_dir.path().join("m.onnx"));
    let mut exported = 0;
    let mut external_tensors = 0;
    for fixture in fixtures() {
        let archive = Archive::open(&fixture).unwrap_or_else(|e| panic!("{}: {e}", fixture.display()));
        let Some(model) = export(&archive) else { continue };
        exported += 1;
        // A low threshold puts nearly every weight in the data file; the default keeps small ones.
        for threshold in [None, Some(64), Some(1024)] {
            let placement = match threshold {
                None => DataPlacement::Inline,
                Some(threshold) => DataPlacement::External { threshold },
            };
            let what = format!("{} ({placement:?})", fixture.display());
            plain::save(&model, &plain_path, &placement, &Sources::none()).unwrap_or_else(|e| panic!("{what}: {e}"));
            // With the archive's file (weights read from it) and without (copied from memory).
            for file in [archive.file(), None] {
                let sources = Sources::archive(file.as_ref());
                save_model(&model, &stream_path, &placement, &sources).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(read(&plain_path) == read(&stream_path), "{what}: the .onnx files differ");
                if threshold.is_some() {
                    let (plain_data, stream_data) = (data_files_of(&plain_path), data_files_of(&stream_path));
                    assert_eq!(plain_data.len(), stream_data.len(), "{what}");
                    for (p, s) in plain_data.iter().zip(&stream_data) {
                        assert_eq!(p.file_name(), s.file_name(), "{what}");
                        assert!(read(p) == read(s), "{what}: the .data files differ");
                    }
                }
            }
            if threshold == Some(64) {
                let encoder = Encoder::new(&model, &placement, &stream_path).unwrap();
                external_tensors += usize::from(encoder.data_len() > 0);
                assert_eq!(read(&stream_path).len(), encoder.encoded_len(), "{what}");
            }
        }
    }
    assert!(exported >= 10 && external_tensors >= 10, "{exported} fixtures exported, {external_tensors} external");
}

/// A TorchScript program's values that are not plain tensors: an optional (an `If` whose branches
/// make one), a sequence, and a tensor whose rank is known only at run time. The operator table
/// says what the `If` and `Identity` hold, both writers give the same bytes, and the types read
/// back as ONNX declares them.
#[test]
fn optionals_sequences_and_runtime_ranks_are_written_alike() {
    use crate::onnx::builder::Builder;
    use crate::onnx::ir::{AttrValue, Container, DType, Dim};
    use crate::onnx::proto::type_proto::Value as T;

    let mut b = Builder::new(18);
    let x = b.add_input(Some(DType::Float), Some(vec![Dim::Param("n".into())]));
    let cond = b.add_input(Some(DType::Bool), Some(vec![]));
    b.begin_subgraph("then");
    let some = b.Optional(Some(x)).out();
    let then_g = b.end_subgraph(vec![some]);
    b.begin_subgraph("else");
    let none = b.Optional(None).attr("type", AttrValue::Type(Container::Tensor, DType::Float)).out();
    let else_g = b.end_subgraph(vec![none]);
    let maybe = b.If(cond).then_branch(then_g).else_branch(else_g).out();
    let maybe = b.Identity(maybe);
    let listed = b.SequenceConstruct(&[x, x]);
    let squeezed = b.Squeeze(x, None);
    assert_eq!(
        [maybe, listed, squeezed].map(|v| b.info(v).container),
        [Container::Optional, Container::Sequence, Container::Tensor]
    );
    for v in [maybe, listed] {
        let info = b.info_mut(v);
        info.dtype = Some(DType::Float);
        info.shape = Some(vec![Dim::Param("n".into())]);
    }
    b.info_mut(squeezed).rank_from_data = Some(1);
    b.graphs[0].outputs = vec![maybe, listed, squeezed];
    let model = b.finish();

    let dir = tempfile::tempdir().unwrap();
    let (plain_path, stream_path) = (dir.path().join("plain.onnx"), dir.path().join("stream.onnx"));
    plain::save(&model, &plain_path, &DataPlacement::Inline, &Sources::none()).unwrap();
    save_model(&model, &stream_path, &DataPlacement::Inline, &Sources::none()).unwrap();
    let bytes = read(&plain_path);
    assert!(bytes == read(&stream_path), "the two writers differ");

    let decoded: crate::onnx::proto::ModelProto = prost::Message::decode(bytes.as_slice()).unwrap();
    let graph = decoded.graph.unwrap();
    let element = |t: &crate::onnx::proto::TypeProto| match &t.value {
        Some(T::TensorType(x)) => (x.elem_type, x.shape.as_ref().map(|s| s.dim.len())),
        other => panic!("not a tensor type: {other:?}"),
    };
    let types: Vec<_> = graph.output.iter().map(|o| o.r#type.clone().unwrap().value.unwrap()).collect();
    match &types[..] {
        [T::OptionalType(o), T::SequenceType(s), t @ T::TensorType(_)] => {
            assert_eq!(element(o.elem_type.as_deref().unwrap()), (1, Some(1)));
            assert_eq!(element(s.elem_type.as_deref().unwrap()), (1, Some(1)));
            let t = crate::onnx::proto::TypeProto { value: Some(t.clone()), ..Default::default() };
            assert_eq!(element(&t), (1, Some(1)), "a runtime rank is written as the example's, without sizes");
        }
        other => panic!("output types {other:?}"),
    }
    // The empty branch's `Optional` names its element type.
    let branch = graph.node.iter().find(|n| n.op_type == "If").unwrap().attribute[1].g.as_ref().unwrap();
    let tp = branch.node[0].attribute[0].tp.as_ref().unwrap();
    assert!(matches!(&tp.value, Some(T::TensorType(t)) if t.elem_type == 1), "{tp:?}");
}
